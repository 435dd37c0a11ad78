package main

import (
	"errors"
	"io"
	"net/http"
	"os/exec"
	"regexp"
	"runtime"
	"strings"
	"syscall"
	"testing"

	"github.com/toolwire/toolwire/internal/testenv"
)

// TestServeDebugAddr: --debug-addr serves the runtime profiles on loopback,
// answers only loopback Host headers, and refuses a non-loopback address.
func TestServeDebugAddr(t *testing.T) {
	bin := testenv.Toolwire(t)
	cmd := exec.Command(bin, "serve", "--addr", "127.0.0.1:0", "--debug-addr", "127.0.0.1:0", "--data-dir", t.TempDir())
	l := startLogged(t, cmd, regexp.MustCompile(`runtime profiles.* address=(\S+)`))
	defer func() { _ = cmd.Process.Signal(syscall.SIGINT); _ = cmd.Wait() }()
	addr := l.wait(t, "the debug address")
	checkGoroutineProfile(t, addr)
	req, _ := http.NewRequest(http.MethodGet, "http://"+addr+"/debug/pprof/", nil)
	req.Host = "evil.example"
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden {
		t.Fatalf("foreign Host: status %d, want 403", resp.StatusCode)
	}

	out, err := exec.Command(bin, "serve", "--addr", "127.0.0.1:0", "--debug-addr", "0.0.0.0:0", "--data-dir", t.TempDir()).CombinedOutput()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 2 || !strings.Contains(string(out), "loopback address only") {
		t.Fatalf("--debug-addr 0.0.0.0:0: %v: %s", err, out)
	}
}

// TestGatewayDebugAddr: toolwire gateway serves the runtime profiles with
// --debug-addr too.
func TestGatewayDebugAddr(t *testing.T) {
	g := startGateway(t, "--debug-addr", "127.0.0.1:0")
	m := regexp.MustCompile(`runtime profiles.* address=(\S+)`).FindStringSubmatch(g.log.String())
	if m == nil {
		t.Fatalf("no debug address logged:\n%s", g.log.String())
	}
	checkGoroutineProfile(t, m[1])
}

// checkGoroutineProfile fetches the goroutine profile from the debug
// address addr, and the heap profile, which must be sampled (its rate,
// "@ heap/N", not 0).
func checkGoroutineProfile(t *testing.T, addr string) {
	t.Helper()
	get := func(path string) string {
		resp, err := http.Get("http://" + addr + path)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("%s: status %d: %.80q", path, resp.StatusCode, body)
		}
		return string(body)
	}
	if body := get("/debug/pprof/goroutine?debug=1"); !strings.HasPrefix(body, "goroutine profile: total ") {
		t.Fatalf("goroutine profile: %.80q", body)
	}
	first, _, _ := strings.Cut(get("/debug/pprof/heap?debug=1"), "\n")
	if !strings.Contains(first, "@ heap/") || strings.HasSuffix(first, "@ heap/0") {
		t.Fatalf("heap profile not sampled with --debug-addr: %q", first)
	}
}

// TestSampleHeap: heap profile sampling stays on where --debug-addr serves
// the profile or GODEBUG=memprofilerate sets it, and is turned off
// otherwise, since nothing would read it.
func TestSampleHeap(t *testing.T) {
	saved := runtime.MemProfileRate
	t.Cleanup(func() { runtime.MemProfileRate = saved })
	cases := []struct {
		name, debugAddr, godebug string
		on                       bool
	}{
		{"no profile served", "", "", false},
		{"other GODEBUG settings", "", "http2client=0,madvdontneed=1", false},
		{"--debug-addr", "127.0.0.1:0", "", true},
		{"GODEBUG=memprofilerate", "", "http2client=0, memprofilerate=4096", true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Setenv("GODEBUG", c.godebug)
			runtime.MemProfileRate = 512 << 10
			sampleHeap(c.debugAddr)
			if on := runtime.MemProfileRate != 0; on != c.on {
				t.Errorf("sampling on: %v, want %v (MemProfileRate %d)", on, c.on, runtime.MemProfileRate)
			}
		})
	}
}
