package filelock_test

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/toolwire/toolwire/internal/filelock"
)

// TestTryLockRefusesASecondHolder opens the file twice: flock locks belong
// to the open file description, so the second open stands for another
// process, and it is refused until the first lets go.
func TestTryLockRefusesASecondHolder(t *testing.T) {
	if !filelock.Supported {
		t.Skip("no flock on this system")
	}
	path := filepath.Join(t.TempDir(), "lock")
	open := func() *os.File {
		f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { f.Close() })
		return f
	}
	a, b := open(), open()
	if err := filelock.TryLock(a); err != nil {
		t.Fatalf("first lock: %v", err)
	}
	if err := filelock.TryLock(b); !errors.Is(err, filelock.ErrHeld) {
		t.Fatalf("second lock: %v, want ErrHeld", err)
	}
	if err := filelock.Unlock(a); err != nil {
		t.Fatal(err)
	}
	if err := filelock.TryLock(b); err != nil {
		t.Fatalf("lock after unlock: %v", err)
	}
}

// TestCrossCompiles keeps the package building where flock is missing.
func TestCrossCompiles(t *testing.T) {
	if testing.Short() {
		t.Skip("builds for windows")
	}
	cmd := exec.Command("go", "build", "./gateway/audit/sqlite", "./internal/datadir", "./cmd/toolwire")
	cmd.Dir = filepath.Join("..", "..")
	cmd.Env = append(os.Environ(), "GOOS=windows", "GOARCH=amd64", "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("GOOS=windows go build: %v\n%s", err, out)
	}
}
