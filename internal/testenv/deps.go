package testenv

import (
	"os/exec"
	"strings"
	"testing"
)

// LinksNone fails t for every package that the package in the test's
// directory links (go list -deps) and that is, or lies under, one of
// forbidden: how a test holds a package to what it must not carry.
func LinksNone(t testing.TB, forbidden ...string) {
	t.Helper()
	out, err := exec.Command("go", "list", "-deps", ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go list -deps: %v\n%s", err, out)
	}
	for _, dep := range strings.Fields(string(out)) {
		for _, f := range forbidden {
			if dep == f || strings.HasPrefix(dep, f+"/") {
				t.Errorf("links %s", dep)
			}
		}
	}
}
