package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/toolwire/toolwire/internal/testenv"
)

// TestCheckBrokenFlows: `toolwire check` over flow/testdata/broken prints
// each manifest's one problem as file:line:col: message, nothing else for
// it, and exits 1; over flow/testdata/guarded (the same reads, guarded)
// it prints ok and exits 0.
func TestCheckBrokenFlows(t *testing.T) {
	root := testenv.Root(t)
	dir := filepath.Join("flow", "testdata", "broken")
	paths, err := filepath.Glob(filepath.Join(root, dir, "*.flow.yaml"))
	if err != nil || len(paths) < 20 {
		t.Fatalf("%d broken manifests (%v), want at least 20", len(paths), err)
	}
	r := runFlowCLI(t, root, "check", dir)
	if r.code != 1 {
		t.Fatalf("want exit 1: %s", r)
	}
	want := regexp.MustCompile(`(?m)^# want: (\d+:\d+): (.+)$`)
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		m := want.FindSubmatch(data)
		if m == nil {
			t.Fatalf("%s: no # want: line", p)
		}
		rel := filepath.Join(dir, filepath.Base(p))
		var got []string
		for _, line := range strings.Split(r.stdout+r.stderr, "\n") {
			if strings.HasPrefix(line, rel+":") {
				got = append(got, line)
			}
		}
		if len(got) != 1 || !strings.HasPrefix(got[0], rel+":"+string(m[1])+": ") || !strings.Contains(got[0], string(m[2])) {
			t.Errorf("%s: want the one line\n  %s:%s: ...%s...\ngot\n  %s", rel, rel, m[1], m[2], strings.Join(got, "\n  "))
		}
	}
	r = runFlowCLI(t, root, "check", filepath.Join("flow", "testdata", "guarded"))
	if r.code != 0 || !strings.Contains(r.stdout+r.stderr, ": ok") {
		t.Fatalf("guarded manifests: %s", r)
	}
}
