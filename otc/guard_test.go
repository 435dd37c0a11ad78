package otc_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/toolwire/toolwire/mcp"
	"github.com/toolwire/toolwire/otc"
	"github.com/toolwire/toolwire/server"
)

type echoIn struct {
	Message string `json:"message"`
}

// countingEcho serves one tool, toolwire_reference.echo, that counts its
// runs, so a test can tell a refused request from one that ran the tool.
func countingEcho(t *testing.T, opts ...otc.Option) (*httptest.Server, *atomic.Int64) {
	t.Helper()
	var runs atomic.Int64
	s := server.New(mcp.Implementation{Name: "toolwire_reference", Version: "1.0.0"})
	if err := server.AddTool(s, &mcp.Tool{Name: "echo"}, func(_ context.Context, _ *server.CallRequest, in echoIn) (string, error) {
		runs.Add(1)
		return "Echo: " + in.Message, nil
	}); err != nil {
		t.Fatal(err)
	}
	return serve(t, s, opts...), &runs
}

const echoCall = `{"request":{"tool_id":"toolwire_reference.echo","input":{"message":"x"}}}`

// rawPost sends body to path with exactly the given headers: no
// Content-Type unless one is given, Host overridden when "Host" is given.
func rawPost(t *testing.T, ts *httptest.Server, path, body string, header map[string]string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, ts.URL+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range header {
		if k == "Host" {
			req.Host = v
			continue
		}
		req.Header.Set(k, v)
	}
	resp, err := ts.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var sb strings.Builder
	_, _ = io.Copy(&sb, resp.Body)
	return resp.StatusCode, sb.String()
}

// TestCrossOriginCallRefused is the curl: a POST with no
// Content-Type, a foreign Origin and a DNS-rebound Host, the "simple"
// request any web page can send to a loopback listener. It must get 403
// and the tool must not run.
func TestCrossOriginCallRefused(t *testing.T) {
	ts, runs := countingEcho(t)
	port := mustPort(t, ts)
	cases := []struct {
		name   string
		header map[string]string
	}{
		{"the curl", map[string]string{"Origin": "http://evil.example", "Host": "evil.example:" + port}},
		{"foreign Origin, loopback Host", map[string]string{"Origin": "http://evil.example", "Content-Type": "application/json"}},
		{"DNS rebinding: foreign Host, same-origin page", map[string]string{"Origin": "http://evil.example:" + port, "Host": "evil.example:" + port, "Content-Type": "application/json"}},
		{"foreign Host, no Origin", map[string]string{"Host": "evil.example:" + port, "Content-Type": "application/json"}},
		{"null Origin", map[string]string{"Origin": "null", "Content-Type": "application/json"}},
	}
	for _, c := range cases {
		status, body := rawPost(t, ts, "/tools/call", echoCall, c.header)
		if status != http.StatusForbidden {
			t.Errorf("%s: status %d, want 403; body %s", c.name, status, body)
		}
	}
	for _, path := range []string{"/tools", "/health"} {
		req, _ := http.NewRequest(http.MethodGet, ts.URL+path, nil)
		req.Host = "evil.example:" + port
		resp, err := ts.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusForbidden {
			t.Errorf("GET %s with a foreign Host: status %d, want 403", path, resp.StatusCode)
		}
	}
	if n := runs.Load(); n != 0 {
		t.Fatalf("the tool ran %d times for refused requests", n)
	}
}

// TestCallWithoutContentTypeRefused: a POST with no Content-Type (or a
// form type a page may send without a preflight) gets 415, tool not run.
func TestCallWithoutContentTypeRefused(t *testing.T) {
	ts, runs := countingEcho(t)
	for _, ct := range []string{"", "text/plain", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x", "application/json-seq"} {
		h := map[string]string{}
		if ct != "" {
			h["Content-Type"] = ct
		}
		status, body := rawPost(t, ts, "/tools/call", echoCall, h)
		if status != http.StatusUnsupportedMediaType {
			t.Errorf("Content-Type %q: status %d, want 415; body %s", ct, status, body)
		}
		if !strings.Contains(body, "application/json") {
			t.Errorf("Content-Type %q: the error does not say what is wanted: %s", ct, body)
		}
	}
	if n := runs.Load(); n != 0 {
		t.Fatalf("the tool ran %d times for refused requests", n)
	}
}

// TestLoopbackCallsStillServed: what a local client sends keeps working.
func TestLoopbackCallsStillServed(t *testing.T) {
	ts, runs := countingEcho(t)
	port := mustPort(t, ts)
	for _, h := range []map[string]string{
		{"Content-Type": "application/json"},
		{"Content-Type": "application/json; charset=utf-8", "Host": "localhost:" + port},
		{"Content-Type": "Application/JSON", "Origin": "http://localhost:3000"},
		{"Content-Type": "application/json", "Origin": "http://127.0.0.1:" + port, "Host": "[::1]:" + port},
	} {
		status, body := rawPost(t, ts, "/tools/call", echoCall, h)
		if status != http.StatusOK || !strings.Contains(body, `"value":"Echo: x"`) {
			t.Errorf("%v: status %d body %s", h, status, body)
		}
	}
	if n := runs.Load(); n != 4 {
		t.Fatalf("the tool ran %d times, want 4", n)
	}
}

func mustPort(t *testing.T, ts *httptest.Server) string {
	t.Helper()
	u, err := url.Parse(ts.URL)
	if err != nil {
		t.Fatal(err)
	}
	return u.Port()
}
