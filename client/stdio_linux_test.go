package client_test

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/toolwire/toolwire/client"
	"github.com/toolwire/toolwire/internal/testwait"
	"github.com/toolwire/toolwire/mcp"
)

// processRuns says whether pid names a process that has not ended (a
// zombie nobody reaps has ended).
func processRuns(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	return len(f) > 0 && f[0] != "Z" && f[0] != "X"
}

// TestStdioCloseEndsChildGroup: a server that started a process of its
// own (here sh starts `sleep 600`, which keeps the server's stdout open,
// and becomes the server) runs in a process group of its own, which Close
// signals: the grandchild ends with the server, whether the server ends on
// its stdin closing or only on SIGKILL.
func TestStdioCloseEndsChildGroup(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	for _, mode := range []string{"cancel", "stubborn"} { // ends on stdin closing; ignores it and SIGTERM
		t.Run(mode, func(t *testing.T) {
			pidFile := filepath.Join(t.TempDir(), "pid")
			cmd := &client.Command{
				Path:        "sh",
				Args:        []string{"-c", `sleep 600 & echo $! >"$0"; exec "$1"`, pidFile, exe},
				Env:         append(os.Environ(), "TW_FAKE_STDIO="+mode),
				GracePeriod: 500 * time.Millisecond,
			}
			c := connect(t, cmd, client.WithEra(mcp.EraLegacy))
			b, err := os.ReadFile(pidFile)
			if err != nil {
				t.Fatal(err)
			}
			sleeper, err := strconv.Atoi(strings.TrimSpace(string(b)))
			if err != nil || !processRuns(sleeper) {
				t.Fatalf("the server's own process %q: %v", b, err)
			}
			t.Cleanup(func() {
				if processRuns(sleeper) {
					_ = syscall.Kill(sleeper, syscall.SIGKILL)
				}
			})
			testwait.Returns(t, "Close", func() {
				if err := c.Close(); err != nil {
					t.Errorf("Close: %v", err)
				}
			})
			// Killed, it may take a moment more to be gone.
			testwait.WaitFor(t, "the server's own process to end", func() bool { return !processRuns(sleeper) })
		})
	}
}
