package main

import (
	"os"
	"path/filepath"
	"sort"
	"testing"

	"github.com/toolwire/toolwire/internal/clidoc"
	"github.com/toolwire/toolwire/internal/testenv"
)

// TestCLIReference regenerates the CLI reference (docs/cli, docs/man) from
// the command tree and the gateway config reference from gateway/config's
// package documentation, and fails on any difference: a command, flag or
// help text changed without `go run ./cmd/toolwire docs`.
func TestCLIReference(t *testing.T) {
	root := testenv.Root(t)
	want := map[string]string{}
	for _, p := range clidoc.Render(newRootCmd()) {
		want[filepath.Join("docs", "cli", p.Markdown)] = p.MarkdownText
		want[filepath.Join("docs", "man", p.Man)] = p.ManText
	}
	ref, err := clidoc.ConfigMarkdown(filepath.Join(root, "gateway", "config"))
	if err != nil {
		t.Fatal(err)
	}
	want[filepath.Join("docs", "gateway", "config.md")] = string(ref)

	var stale []string
	for path, text := range want {
		got, err := os.ReadFile(filepath.Join(root, path))
		if err != nil || string(got) != text {
			stale = append(stale, path)
		}
	}
	for _, dir := range []string{filepath.Join("docs", "cli"), filepath.Join("docs", "man")} {
		entries, err := os.ReadDir(filepath.Join(root, dir))
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			if _, ok := want[filepath.Join(dir, e.Name())]; !ok {
				stale = append(stale, filepath.Join(dir, e.Name())+" (no such command)")
			}
		}
	}
	sort.Strings(stale)
	for _, s := range stale {
		t.Errorf("%s is not what the code generates", s)
	}
	if len(stale) > 0 {
		t.Log("run `go run ./cmd/toolwire docs` from the repository root and commit the result")
	}
}
