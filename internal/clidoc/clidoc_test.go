package clidoc

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

func tree() *cobra.Command {
	root := &cobra.Command{Use: "tool", Short: "A tool"}
	get := &cobra.Command{Use: "get URL", Short: "Get a thing", Long: "get fetches URL.\n.starts with a dot", Run: func(*cobra.Command, []string) {}}
	get.Flags().String("dir", filepath.Join(os.Getenv("HOME"), "x"), "where it goes")
	root.PersistentFlags().Bool("verbose", false, "say more")
	root.AddCommand(get, &cobra.Command{Use: "secret", Hidden: true, Run: func(*cobra.Command, []string) {}})
	return root
}

// TestRender writes a page per visible command, links parents and children,
// escapes roff, and writes the home directory as $HOME.
func TestRender(t *testing.T) {
	t.Setenv("HOME", "/home/ada")
	t.Setenv("XDG_STATE_HOME", "")
	pages := Render(tree())
	if len(pages) != 2 {
		t.Fatalf("got %d pages, want tool and tool get (not the hidden one)", len(pages))
	}
	root, get := pages[0], pages[1]
	if root.Markdown != "tool.md" || get.Markdown != "tool_get.md" || get.Man != "tool-get.1" {
		t.Fatalf("names: %q %q %q", root.Markdown, get.Markdown, get.Man)
	}
	for _, want := range []string{"# tool get\n", "tool get URL [flags]", "[tool](tool.md)", "(default \"$HOME/x\")", "--verbose"} {
		if !strings.Contains(get.MarkdownText, want) {
			t.Errorf("markdown lacks %q:\n%s", want, get.MarkdownText)
		}
	}
	if !strings.Contains(root.MarkdownText, "[tool get](tool_get.md)") {
		t.Errorf("root page does not link its command:\n%s", root.MarkdownText)
	}
	for _, want := range []string{`.TH "TOOL-GET" 1`, `\&.starts with a dot`, `\-\-dir`, ".BR tool (1)"} {
		if !strings.Contains(get.ManText, want) {
			t.Errorf("man page lacks %q:\n%s", want, get.ManText)
		}
	}
	if strings.Contains(get.MarkdownText+get.ManText, "/home/ada") {
		t.Error("the home directory was written as is")
	}
}

// TestConfigMarkdown renders a package's doc comment as the reference page.
func TestConfigMarkdown(t *testing.T) {
	dir := t.TempDir()
	src := "// Package config reads a file.\n//\n// Keys:\n//\n//   - listen: where.\npackage config\n"
	if err := os.WriteFile(filepath.Join(dir, "doc.go"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	md, err := ConfigMarkdown(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"# Gateway config reference", "Package config reads a file.", "  - listen: where."} {
		if !strings.Contains(string(md), want) {
			t.Errorf("lacks %q:\n%s", want, md)
		}
	}
}

// A default under the state directory renders the same, wrapped at the same
// place, however long this machine's state directory is.
func TestFlagDefaultsPortableBeforeWrapping(t *testing.T) {
	render := func(state string) string {
		t.Setenv("XDG_STATE_HOME", state)
		c := &cobra.Command{Use: "serve", Short: "Serve", Run: func(*cobra.Command, []string) {}}
		c.Flags().String("data-dir", filepath.Join(state, "toolwire"),
			"the directory tasks are kept in; a long usage line that ends close to the wrap column here")
		return flagUsages(c.Flags())
	}
	short := render("/s")
	long := render("/tmp/" + strings.Repeat("long-directory-name/", 6) + "state")
	if short != long {
		t.Errorf("the usage depends on the state directory's length:\n%s\n---\n%s", short, long)
	}
	if !strings.Contains(short, `"$XDG_STATE_HOME/toolwire"`) {
		t.Errorf("the default is not written portably:\n%s", short)
	}
}
