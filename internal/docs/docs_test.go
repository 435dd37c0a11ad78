package docs

import (
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/toolwire/toolwire/internal/testenv"
)

// readDocs returns every documentation file's text by its path relative to
// the repository root.
func readDocs(t *testing.T, root string) map[string]string {
	t.Helper()
	files, err := Files(root)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, f := range files {
		b, err := os.ReadFile(filepath.Join(root, f))
		if err != nil {
			t.Fatal(err)
		}
		out[f] = string(b)
	}
	if _, ok := out["README.md"]; !ok {
		t.Fatal("README.md not found among the documentation files")
	}
	return out
}

// TestGoBlocksCompile compiles every ```go block of the README and the docs,
// each a whole file (it starts with its package clause), in its own package
// of a module that requires this one through a replace directive.
func TestGoBlocksCompile(t *testing.T) {
	root := testenv.Root(t)
	dir := t.TempDir()
	n := 0
	where := map[string]string{}
	for f, text := range readDocs(t, root) {
		for _, b := range Blocks(text) {
			if b.Lang != "go" {
				continue
			}
			loc := fmt.Sprintf("%s:%d", f, b.Line)
			if !regexp.MustCompile(`(?m)^package \w+`).MatchString(b.Text) {
				t.Errorf("%s: a go block must be a whole file, starting with its package clause (use text for a fragment)", loc)
				continue
			}
			n++
			pkg := fmt.Sprintf("b%03d", n)
			where[pkg] = loc
			if err := os.MkdirAll(filepath.Join(dir, pkg), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, pkg, "snippet.go"), []byte(b.Text+"\n"), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	if n == 0 {
		t.Fatal("no go blocks found: the README has a server and a client")
	}
	gomod := fmt.Sprintf("module docsnippets\n\ngo 1.26\n\nrequire github.com/toolwire/toolwire v0.0.0\n\nreplace github.com/toolwire/toolwire => %s\n", root)
	if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte(gomod), 0o644); err != nil {
		t.Fatal(err)
	}
	sum, err := os.ReadFile(filepath.Join(root, "go.sum"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "go.sum"), sum, 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("go", "vet", "./...")
	cmd.Dir = dir
	// The module cache already holds every module toolwire needs: nothing is
	// downloaded, and go.mod gets the requirements it lacks from toolwire's.
	cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod", "GOPROXY=off", "GOWORK=off")
	out, err := cmd.CombinedOutput()
	if err != nil {
		msg := string(out)
		for pkg, loc := range where {
			msg = strings.ReplaceAll(msg, "./"+pkg+"/snippet.go", loc+" (block)")
			msg = strings.ReplaceAll(msg, pkg+"/snippet.go", loc+" (block)")
		}
		t.Fatalf("the go blocks do not compile: %v\n%s", err, msg)
	}
	t.Logf("%d go blocks compiled and vetted", n)
}

var (
	linkRE       = regexp.MustCompile(`\[[^\]]*\]\(([^)\s]+)(?:\s+"[^"]*")?\)`)
	inlineCodeRE = regexp.MustCompile("`+[^`]*`+")
)

// links returns the link targets of a Markdown text with their lines,
// leaving out code blocks and code spans.
func links(text string) (targets []string, lines []int) {
	for i, l := range proseLines(text) {
		l = inlineCodeRE.ReplaceAllString(l, "")
		for _, m := range linkRE.FindAllStringSubmatch(l, -1) {
			targets = append(targets, m[1])
			lines = append(lines, i+1)
		}
	}
	return targets, lines
}

// TestLinks resolves every link of the README and the docs: a relative one
// must name a file or directory of the repository and, with #anchor, a
// heading of that Markdown file; an external one must be a well-formed
// http(s) or mailto URL (never fetched).
func TestLinks(t *testing.T) {
	root := testenv.Root(t)
	docs := readDocs(t, root)
	anchors := map[string]map[string]bool{}
	anchorsOf := func(path string) (map[string]bool, error) {
		if a, ok := anchors[path]; ok {
			return a, nil
		}
		b, err := os.ReadFile(filepath.Join(root, path))
		if err != nil {
			return nil, err
		}
		anchors[path] = Anchors(string(b))
		return anchors[path], nil
	}
	checked := 0
	for f, text := range docs {
		targets, lines := links(text)
		for i, target := range targets {
			checked++
			loc := fmt.Sprintf("%s:%d: link %q", f, lines[i], target)
			u, err := url.Parse(target)
			if err != nil {
				t.Errorf("%s: %v", loc, err)
				continue
			}
			switch u.Scheme {
			case "http", "https":
				if u.Host == "" {
					t.Errorf("%s: an %s URL without a host", loc, u.Scheme)
				}
				continue
			case "mailto":
				if u.Opaque == "" {
					t.Errorf("%s: a mailto URL without an address", loc)
				}
				continue
			case "":
			default:
				t.Errorf("%s: unexpected scheme %q", loc, u.Scheme)
				continue
			}
			path := f
			if u.Path != "" {
				if strings.HasPrefix(u.Path, "/") {
					t.Errorf("%s: an absolute path does not resolve on GitHub or in a checkout; write it relative to %s", loc, f)
					continue
				}
				path = filepath.Join(filepath.Dir(f), filepath.FromSlash(u.Path))
				if strings.HasPrefix(path, "..") {
					t.Errorf("%s: points outside the repository", loc)
					continue
				}
				if _, err := os.Stat(filepath.Join(root, path)); err != nil {
					t.Errorf("%s: %s does not exist", loc, path)
					continue
				}
			}
			if u.Fragment == "" {
				continue
			}
			if !strings.HasSuffix(path, ".md") {
				t.Errorf("%s: an anchor into %s, which is not Markdown", loc, path)
				continue
			}
			a, err := anchorsOf(path)
			if err != nil {
				t.Errorf("%s: %v", loc, err)
				continue
			}
			if !a[u.Fragment] {
				t.Errorf("%s: %s has no heading with anchor #%s", loc, path, u.Fragment)
			}
		}
	}
	t.Logf("%d links in %d files checked", checked, len(docs))
}

// TestReadmeFitsAScreen keeps the README a page to read, not the manual:
// everything else is under docs/.
func TestReadmeFitsAScreen(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(testenv.Root(t), "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(b), "\n"); n > 250 {
		t.Errorf("README.md has %d lines, more than 250: move sections to docs/", n)
	}
}

// TestAnchors pins the slugs the link check computes against GitHub's.
func TestAnchors(t *testing.T) {
	a := Anchors("# Security policy\n## The audit trail: backing up and verifying\n```\n# not a heading\n```\n" +
		"## Authorization (resource server)\n## `toolwire serve`: one server\n## Flags\n## Flags\n")
	for _, want := range []string{"security-policy", "the-audit-trail-backing-up-and-verifying",
		"authorization-resource-server", "toolwire-serve-one-server", "flags", "flags-1"} {
		if !a[want] {
			t.Errorf("no anchor %q in %v", want, a)
		}
	}
	if a["not-a-heading"] {
		t.Error("a comment in a code block was taken for a heading")
	}
}
