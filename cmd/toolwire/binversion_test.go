package main

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/toolwire/toolwire/internal/testenv"
)

// binaryVersion is the module version the built toolwire binary reports
// (`toolwire --version`): what its serverInfo and get-version carry, which
// may differ from the test binary's own toolwire.Version (a build from a
// checkout is stamped with its commit, a test binary is not).
func binaryVersion(t *testing.T) string {
	t.Helper()
	out, err := exec.Command(testenv.Toolwire(t), "--version").Output()
	if err != nil {
		t.Fatalf("toolwire --version: %v", err)
	}
	v, ok := strings.CutPrefix(strings.TrimSpace(string(out)), "toolwire ")
	if !ok || v == "" {
		t.Fatalf("toolwire --version printed %q", out)
	}
	return v
}
