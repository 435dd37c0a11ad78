// Package examples holds runnable programs, one per directory, each with
// a test that builds it and checks what it does, so that `go test ./...`
// keeps every example compiling and working.
package examples

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestEveryExampleIsTested: each directory of Go code here has a test,
// without which `go test` would not even build it.
func TestEveryExampleIsTested(t *testing.T) {
	entries, err := os.ReadDir(".")
	if err != nil {
		t.Fatal(err)
	}
	programs := 0
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		files, err := filepath.Glob(filepath.Join(e.Name(), "*.go"))
		if err != nil || len(files) == 0 {
			continue // flows: YAML, run by cmd/toolwire's TestFlowExamples
		}
		programs++
		tested := false
		for _, f := range files {
			tested = tested || strings.HasSuffix(f, "_test.go")
		}
		if !tested {
			t.Errorf("examples/%s has no test: go test would not build it", e.Name())
		}
	}
	if programs < 5 {
		t.Errorf("%d example programs, want hello, typed, client, auth and gateway at least", programs)
	}
}
