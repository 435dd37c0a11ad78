// Package docs checks the project's documentation: the README and the pages
// under docs/ (and bench/README.md). Its tests compile every Go block, resolve
// every relative link and anchor, and run the README's quick start from a
// fresh clone against the binary it builds. It has no non-test code beyond
// the Markdown reading the tests share.
package docs

import (
	"iter"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
)

// Block is one fenced code block of a Markdown file.
type Block struct {
	// Lang is the info string's first word ("go", "sh", "yaml").
	Lang string
	// Marker is the text of an HTML comment `<!-- quickstart:KIND -->` on
	// the line before the fence (just KIND), or empty.
	Marker string
	// Line is the 1-based line of the opening fence.
	Line int
	// Text is the block's content, without the fences.
	Text string
}

var markerRE = regexp.MustCompile(`^<!--\s*quickstart:(\S+)\s*-->$`)

// Blocks returns the fenced code blocks of a Markdown text, in order.
func Blocks(text string) []Block {
	var out []Block
	lines := strings.Split(text, "\n")
	for i := 0; i < len(lines); i++ {
		l := lines[i]
		if !strings.HasPrefix(l, "```") {
			continue
		}
		b := Block{Line: i + 1}
		if info := strings.Fields(strings.TrimPrefix(l, "```")); len(info) > 0 {
			b.Lang = info[0]
		}
		if i > 0 {
			if m := markerRE.FindStringSubmatch(strings.TrimSpace(lines[i-1])); m != nil {
				b.Marker = m[1]
			}
		}
		var body []string
		for i++; i < len(lines) && !strings.HasPrefix(lines[i], "```"); i++ {
			body = append(body, lines[i])
		}
		b.Text = strings.Join(body, "\n")
		out = append(out, b)
	}
	return out
}

// Files returns the Markdown files the documentation is made of, relative
// to the repository root: the top-level *.md files, everything under docs/,
// and bench/README.md with bench/results/.
func Files(root string) ([]string, error) {
	var out []string
	top, err := filepath.Glob(filepath.Join(root, "*.md"))
	if err != nil {
		return nil, err
	}
	for _, f := range top {
		out = append(out, filepath.Base(f))
	}
	for _, dir := range []string{"docs", filepath.Join("bench", "results")} {
		err := filepath.WalkDir(filepath.Join(root, dir), func(p string, d os.DirEntry, err error) error {
			if err != nil {
				if os.IsNotExist(err) {
					return nil
				}
				return err
			}
			if !d.IsDir() && strings.HasSuffix(p, ".md") {
				rel, err := filepath.Rel(root, p)
				if err != nil {
					return err
				}
				out = append(out, rel)
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	if _, err := os.Stat(filepath.Join(root, "bench", "README.md")); err == nil {
		out = append(out, filepath.Join("bench", "README.md"))
	}
	return out, nil
}

var (
	headingRE   = regexp.MustCompile(`^(#{1,6})\s+(.*?)\s*#*\s*$`)
	slugDropRE  = regexp.MustCompile(`[^\p{L}\p{N}\- _]`)
	inlineCode  = regexp.MustCompile("`([^`]*)`")
	linkInTitle = regexp.MustCompile(`\[([^\]]*)\]\([^)]*\)`)
)

// proseLines yields the lines of a Markdown text that are outside fenced
// code blocks (a line starting with ``` opens or closes one), each with
// its index (0 for the first line).
func proseLines(text string) iter.Seq2[int, string] {
	return func(yield func(int, string) bool) {
		inFence := false
		for i, l := range strings.Split(text, "\n") {
			if strings.HasPrefix(l, "```") {
				inFence = !inFence
				continue
			}
			if !inFence && !yield(i, l) {
				return
			}
		}
	}
}

// Anchors returns the anchors GitHub makes for a Markdown text's headings:
// lower case, punctuation dropped, spaces as hyphens, a repeated one with
// -1, -2, ... Headings inside code blocks are not headings.
func Anchors(text string) map[string]bool {
	out := map[string]bool{}
	seen := map[string]int{}
	for _, l := range proseLines(text) {
		m := headingRE.FindStringSubmatch(l)
		if m == nil {
			continue
		}
		h := linkInTitle.ReplaceAllString(m[2], "$1")
		h = inlineCode.ReplaceAllString(h, "$1")
		h = strings.ToLower(slugDropRE.ReplaceAllString(h, ""))
		h = strings.ReplaceAll(h, " ", "-")
		if n := seen[h]; n > 0 {
			out[h+"-"+strconv.Itoa(n)] = true
		} else {
			out[h] = true
		}
		seen[h]++
	}
	return out
}
