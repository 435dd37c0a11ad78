package floorproxy

import (
	"bytes"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// upstream answers a POST with its body echoed, as JSON or, when the
// request asks for it with X-Sse, as an event stream, and repeats the
// session and method headers.
func upstream(t *testing.T) *httptest.Server {
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		if r.URL.Path != "/mcp" {
			http.Error(w, "path "+r.URL.Path, http.StatusNotFound)
			return
		}
		w.Header().Set("Mcp-Session-Id", r.Header.Get("Mcp-Session-Id")+"-s")
		w.Header().Set("X-Method", r.Header.Get("Mcp-Method")+"|"+r.Header.Get("Authorization"))
		if len(b) == 0 {
			w.WriteHeader(http.StatusAccepted)
			return
		}
		if strings.Contains(string(b), "sse") {
			w.Header().Set("Content-Type", "text/event-stream")
			w.WriteHeader(http.StatusOK)
			io.WriteString(w, "event: message\ndata: ")
			w.(http.Flusher).Flush()
			w.Write(b)
			io.WriteString(w, "\n\n")
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Write(b)
	}))
}

func check(t *testing.T, url string) {
	t.Helper()
	c := &http.Client{}
	for i, tc := range []struct {
		body, want string
		status     int
	}{
		{`{"a":1}`, `{"a":1}`, 200},
		{`{"sse":1}`, "event: message\ndata: {\"sse\":1}\n\n", 200},
		{``, ``, 202},
		{`{"b":2}`, `{"b":2}`, 200},
	} {
		req, _ := http.NewRequest(http.MethodPost, url, bytes.NewReader([]byte(tc.body)))
		req.Header.Set("Mcp-Session-Id", "x")
		req.Header.Set("Mcp-Method", "tools/call")
		req.Header.Set("Authorization", "Bearer k")
		resp, err := c.Do(req)
		if err != nil {
			t.Fatalf("%d: %v", i, err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != tc.status || string(b) != tc.want {
			t.Errorf("%d: %d %q, want %d %q", i, resp.StatusCode, b, tc.status, tc.want)
		}
		if s := resp.Header.Get("Mcp-Session-Id"); s != "x-s" {
			t.Errorf("%d: Mcp-Session-Id %q", i, s)
		}
		if m := resp.Header.Get("X-Method"); m != "tools/call|Bearer k" {
			t.Errorf("%d: headers upstream saw %q", i, m)
		}
	}
}

func TestHandler(t *testing.T) {
	up := upstream(t)
	defer up.Close()
	p := httptest.NewServer(New(up.URL+"/mcp", 8))
	defer p.Close()
	check(t, p.URL+"/anything")
}

func TestH1(t *testing.T) {
	up := upstream(t)
	defer up.Close()
	h, err := NewH1(up.URL+"/mcp", 8)
	if err != nil {
		t.Fatal(err)
	}
	p := httptest.NewServer(h)
	defer p.Close()
	check(t, p.URL+"/anything")
	// A pooled connection closed by the upstream: the next call retries.
	up.CloseClientConnections()
	check(t, p.URL)
}

func TestRelay(t *testing.T) {
	up := upstream(t)
	defer up.Close()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go Relay(ln, strings.TrimPrefix(up.URL, "http://"))
	check(t, "http://"+ln.Addr().String()+"/mcp")
}
