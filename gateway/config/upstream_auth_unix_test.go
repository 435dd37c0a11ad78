//go:build unix

package config

import (
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// A FIFO named by header_files is refused at once: opening it for reading
// would wait for a writer.
func TestHeaderFileFIFO(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skip(err)
	}
	src := "upstreams:\n  web:\n    url: https://h/mcp\n    header_files: {A: fifo}\n"
	done := make(chan error, 1)
	go func() {
		_, err := Parse([]byte(src), "g.yaml", WithBaseDir(dir))
		done <- err
	}()
	select {
	case err := <-done:
		want := `g.yaml:4:23: upstream "web": header_files: A: ` + fifo + `: not a regular file`
		if err == nil || err.Error() != want {
			t.Errorf("got %v, want %s", err, want)
		}
	case <-time.After(time.Minute): // a bound for a hang, not a speed
		t.Fatal("Parse blocked on a FIFO")
	}
}
