package main

import (
	"errors"
	"io"
	"net/http"
	"os/exec"
	"regexp"
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
// address addr.
func checkGoroutineProfile(t *testing.T, addr string) {
	t.Helper()
	resp, err := http.Get("http://" + addr + "/debug/pprof/goroutine?debug=1")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.HasPrefix(string(body), "goroutine profile: total ") {
		t.Fatalf("goroutine profile: %d %.80q", resp.StatusCode, body)
	}
}
