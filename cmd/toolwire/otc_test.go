package main

import (
	"encoding/json"
	"io"
	"net"
	"net/http"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/toolwire/toolwire/internal/testenv"
)

// otcServe runs `toolwire serve --stdio --otc-addr` and returns the OTC
// endpoint. Closing stdin must stop both servers.
func otcServe(t *testing.T, args ...string) string {
	t.Helper()
	cmd := exec.Command(testenv.Toolwire(t), append([]string{"serve", "--stdio", "--otc-addr", "127.0.0.1:0", "--data-dir", t.TempDir()}, args...)...)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	l := startLogged(t, cmd, regexp.MustCompile(`otc_endpoint=(\S+)`))
	t.Cleanup(func() {
		stdin.Close()
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("serve did not exit cleanly at end of stdin: %v", err)
			}
		case <-time.After(30 * time.Second): // a failure bound, not a speed check
			_ = cmd.Process.Kill()
			<-done
			t.Error("serve kept running after stdin closed")
		}
	})
	return l.wait(t, "serve's OTC endpoint")
}

func TestCallOverOTC(t *testing.T) {
	ep := otcServe(t, "--otc-api-key", "secret-key-1")
	key := []string{"--otc", ep, "--otc-api-key", "secret-key-1"}
	call := func(args ...string) cliResult {
		t.Helper()
		return runCLI(t, append(append([]string{"call"}, key...), args...)...)
	}

	r := call("toolwire_reference.get_sum", "a=7", "b=5")
	if r.code != 0 || r.stdout != "The sum of 7 and 5 is 12.\n" {
		t.Errorf("get_sum: code %d stdout %q stderr %q", r.code, r.stdout, r.stderr)
	}
	r = call("toolwire_reference.weather@1", "--json")
	var resp struct {
		CallID  string          `json:"call_id"`
		Success bool            `json:"success"`
		Value   json.RawMessage `json:"value"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &resp); err != nil || !resp.Success || resp.CallID == "" ||
		!sameJSON(t, string(resp.Value), `{"conditions":"partly cloudy","temp_c":22.5}`) {
		t.Errorf("weather --json: %v %q", err, r.stdout)
	}
	r = call("toolwire_reference.safe_divide", "a=1", "b=0")
	if r.code != 6 || !strings.Contains(r.stderr, "cannot divide by zero; pass a non-zero b") || !strings.Contains(r.stderr, "ERR_OTC_TOOL_ERROR") {
		t.Errorf("tool error: code %d stderr %q", r.code, r.stderr)
	}
	r = call("toolwire_reference.get_sum", `{"a":"seven","b":1}`)
	if r.code != 5 || !strings.Contains(r.stderr, "422") || !strings.Contains(r.stderr, "a:") || !strings.Contains(r.stderr, "ERR_OTC_REJECTED") {
		t.Errorf("invalid input: code %d stderr %q", r.code, r.stderr)
	}
	r = call("toolwire_reference.get_sm", "a=1")
	if r.code != 2 || !strings.Contains(r.stderr, "toolwire_reference.get_sum@1.0.0") {
		t.Errorf("unknown tool: code %d stderr %q", r.code, r.stderr)
	}
	r = runCLI(t, "call", "--otc", ep, "toolwire_reference.get_sum", "a=7", "b=5")
	if r.code != 5 || !strings.Contains(r.stderr, "401") {
		t.Errorf("without the key: code %d stderr %q", r.code, r.stderr)
	}
}

func TestCallOverOTCUnreachable(t *testing.T) {
	addr := testenv.FreeAddr(t)
	r := runCLI(t, "call", "--otc", "http://"+addr, "Calculator.Add", "a=1")
	if r.code != 3 || !strings.Contains(r.stderr, "ERR_OTC_TRANSPORT") {
		t.Errorf("code %d stderr %q", r.code, r.stderr)
	}
}

// TestServeOTCGuard: the OTC listener of `serve --otc-addr` refuses what a
// web page could send it (a foreign Host or Origin: 403; a POST without
// Content-Type application/json: 415) and takes --allowed-origin like the
// MCP endpoint.
func TestServeOTCGuard(t *testing.T) {
	const body = `{"request":{"tool_id":"toolwire_reference.echo","input":{"message":"x"}}}`
	post := func(ep string, header map[string]string) (int, string) {
		t.Helper()
		req, err := http.NewRequest(http.MethodPost, ep+"/tools/call", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		for k, v := range header {
			if k == "Host" {
				req.Host = v
			} else {
				req.Header.Set(k, v)
			}
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		raw, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(raw)
	}
	ep := otcServe(t)
	_, port, _ := net.SplitHostPort(strings.TrimPrefix(ep, "http://"))
	for _, c := range []struct {
		header map[string]string
		want   int
	}{
		{map[string]string{"Origin": "http://evil.example", "Host": "evil.example:" + port}, http.StatusForbidden},
		{map[string]string{"Content-Type": "application/json", "Host": "evil.example:" + port}, http.StatusForbidden},
		{map[string]string{}, http.StatusUnsupportedMediaType},
		{map[string]string{"Content-Type": "application/json", "Origin": "http://localhost:3000"}, http.StatusOK},
	} {
		if status, raw := post(ep, c.header); status != c.want {
			t.Errorf("%v: status %d, want %d; body %s", c.header, status, c.want, raw)
		}
	}
	ep = otcServe(t, "--allowed-origin", "https://app.example.com")
	if status, raw := post(ep, map[string]string{"Content-Type": "application/json", "Origin": "https://app.example.com"}); status != http.StatusOK {
		t.Errorf("--allowed-origin: status %d; body %s", status, raw)
	}
	if status, raw := post(ep, map[string]string{"Content-Type": "application/json", "Origin": "http://localhost:3000"}); status != http.StatusForbidden {
		t.Errorf("--allowed-origin replaces the loopback default: status %d; body %s", status, raw)
	}
}
