package main

import (
	"errors"
	"io"
	"log/slog"
	"net/http"
	"os/exec"
	"regexp"
	"strings"
	"syscall"
	"testing"

	"github.com/toolwire/toolwire/internal/testenv"
)

// httpServe runs `toolwire serve` on a free loopback port, its tasks in a
// data directory of the test's own (a later --data-dir in args wins), and
// returns its endpoint URL and a function that stops it with SIGINT and returns how it
// exited.
func httpServe(t *testing.T, args ...string) (string, func() error) {
	t.Helper()
	bin := testenv.Toolwire(t)
	cmd := exec.Command(bin, append([]string{"serve", "--addr", "127.0.0.1:0", "--log-level", "info", "--data-dir", t.TempDir()}, args...)...)
	l := startLogged(t, cmd, regexp.MustCompile(`url=(\S+)`))
	url := l.wait(t, "toolwire serve's URL")
	stopped := false
	stop := func() error {
		if stopped {
			return nil
		}
		stopped = true
		_ = cmd.Process.Signal(syscall.SIGINT)
		err := cmd.Wait()
		<-l.done
		if err != nil {
			t.Logf("toolwire serve log:\n%s", l.log.String())
		}
		return err
	}
	return url, stop
}

// TestTypeScriptSDKOverHTTP has the official TypeScript SDK client
// (StreamableHTTPClientTransport) list and call the reference tools through
// `toolwire serve`, then end its session; the server then stops gracefully.
func TestTypeScriptSDKOverHTTP(t *testing.T) {
	url, stop := httpServe(t, "--page-size", "5")
	if !strings.HasPrefix(url, "http://127.0.0.1:") || !strings.HasSuffix(url, "/mcp") {
		t.Fatalf("endpoint %q", url)
	}
	got := runTSClient(t, "http", url)
	checkTSRun(t, got, "http")
	if got.ProtocolVersion != "2025-11-25" {
		t.Errorf("negotiated %q", got.ProtocolVersion)
	}
	if !regexp.MustCompile(`^[\x21-\x7E]{20,}$`).MatchString(got.SessionID) || got.TerminatedSessionID != nil {
		t.Errorf("session id %q, after DELETE %v", got.SessionID, got.TerminatedSessionID)
	}

	// The session the client ended is gone.
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(`{"jsonrpc":"2.0","id":9,"method":"tools/list"}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Session-Id", got.SessionID)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound {
		t.Errorf("request on the ended session: status %d, want 404", resp.StatusCode)
	}

	if err := stop(); err != nil {
		t.Errorf("toolwire serve did not exit cleanly on SIGINT: %v", err)
	}
}

// TestServeHTTPRejectsRebinding: the default server refuses a foreign Host.
func TestServeHTTPRejectsRebinding(t *testing.T) {
	url, stop := httpServe(t)
	defer stop()
	body := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`
	for host, want := range map[string]int{"evil.example.com": http.StatusForbidden, "": http.StatusOK} {
		req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if host != "" {
			req.Host = host
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Errorf("Host %q: status %d, want %d", host, resp.StatusCode, want)
		}
	}
}

func TestDefaultAllowedHosts(t *testing.T) {
	logger := slog.New(slog.DiscardHandler)
	cases := map[string]string{
		"127.0.0.1:8080":  "localhost,127.0.0.1,::1",
		"localhost:8080":  "localhost,127.0.0.1,::1",
		"[::1]:8080":      "localhost,127.0.0.1,::1",
		"10.0.0.5:8080":   "localhost,127.0.0.1,::1,10.0.0.5",
		"0.0.0.0:8080":    "localhost,127.0.0.1,::1",
		":8080":           "localhost,127.0.0.1,::1",
		"mcp.example:443": "localhost,127.0.0.1,::1,mcp.example",
	}
	for addr, want := range cases {
		if got := strings.Join(defaultAllowedHosts(addr, logger), ","); got != want {
			t.Errorf("%s: %s, want %s", addr, got, want)
		}
	}
}

// TestServeHTTPFlagErrors: a non-positive limit is a usage error (exit 2);
// a negative size or duration does not even parse.
func TestServeHTTPFlagErrors(t *testing.T) {
	bin := testenv.Toolwire(t)
	for flag, want := range map[string]string{
		"--max-body-size=0": "must be positive", "--max-sessions=-1": "must be positive", "--max-in-flight=0": "must be positive",
		"--session-ttl=0s": "must be positive", "--max-in-flight-per-session=0": "must be positive",
		"--event-store-bytes=0": "must be positive", "--max-header-bytes=-1": `"-1" is not a size`, "--session-ttl=-1s": `"-1s" is not a duration`,
	} {
		cmd := exec.Command(bin, "serve", "--addr", "127.0.0.1:0", "--data-dir", t.TempDir(), flag)
		out, err := cmd.CombinedOutput()
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != 2 || !strings.Contains(string(out), want) {
			t.Errorf("%s: %v: %s", flag, err, out)
		}
	}
}
