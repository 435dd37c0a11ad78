package procs

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
)

// Build compiles ./cmd/toolwire of the root module (the work tree the
// bench module's replace directive points at) into dir and returns the
// binary's path: the programs measure the toolwire of the tree they run
// in, not a released one.
func Build(dir string) (string, error) {
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "github.com/toolwire/toolwire").Output()
	if err != nil {
		return "", fmt.Errorf("locating the root module (run from the bench module): %v", err)
	}
	bin := filepath.Join(dir, "toolwire")
	cmd := exec.Command("go", "build", "-o", bin, "./cmd/toolwire")
	cmd.Dir = strings.TrimSpace(string(out))
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build ./cmd/toolwire: %v\n%s", err, out)
	}
	return bin, nil
}

// Binary is the toolwire binary a program runs: bin (its -bin flag) when
// set, else one Build makes in dir.
func Binary(bin, dir string) (string, error) {
	if bin != "" {
		return bin, nil
	}
	return Build(dir)
}
