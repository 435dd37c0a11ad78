package main

import (
	"strings"
	"testing"
)

// TestVersion: `toolwire version` and `toolwire --version` print the
// module version the build info holds (a pseudo-version or "(devel)" for
// a test build), and version names the Go toolchain.
func TestVersion(t *testing.T) {
	out, stderr, code := runToolwire(t, "version")
	if code != 0 || !strings.HasPrefix(out, "toolwire ") || !strings.Contains(out, "go:      go1.") {
		t.Fatalf("toolwire version: exit %d\n%s%s", code, out, stderr)
	}
	first, _, _ := strings.Cut(out, "\n")
	short, stderr, code := runToolwire(t, "--version")
	if code != 0 || strings.TrimSpace(short) != first {
		t.Fatalf("toolwire --version: exit %d %q (version said %q)\n%s", code, short, first, stderr)
	}
}
