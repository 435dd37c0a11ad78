package otc_test

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/toolwire/toolwire/mcp"
	"github.com/toolwire/toolwire/otc"
	"github.com/toolwire/toolwire/server"
)

// TestAllowedHostsAndOrigins: WithAllowedHosts and WithAllowedOrigins
// replace the loopback defaults, as on the MCP endpoint.
func TestAllowedHostsAndOrigins(t *testing.T) {
	ts, runs := countingEcho(t, otc.WithAllowedHosts("otc.example.com"), otc.WithAllowedOrigins("https://app.example.com"))
	json := map[string]string{"Content-Type": "application/json"}
	with := func(kv ...string) map[string]string {
		h := map[string]string{"Content-Type": "application/json"}
		for i := 0; i < len(kv); i += 2 {
			h[kv[i]] = kv[i+1]
		}
		return h
	}
	for _, c := range []struct {
		header map[string]string
		want   int
	}{
		{with("Host", "otc.example.com"), http.StatusOK},
		{with("Host", "OTC.example.com:8443", "Origin", "https://app.example.com"), http.StatusOK},
		{json, http.StatusForbidden}, // 127.0.0.1 is no longer listed
		{with("Host", "otc.example.com", "Origin", "http://localhost:3000"), http.StatusForbidden},
		{with("Host", "evil.example"), http.StatusForbidden},
	} {
		if status, body := rawPost(t, ts, "/tools/call", echoCall, c.header); status != c.want {
			t.Errorf("%v: status %d, want %d; body %s", c.header, status, c.want, body)
		}
	}
	if n := runs.Load(); n != 2 {
		t.Errorf("the tool ran %d times, want 2", n)
	}

	ts, _ = countingEcho(t, otc.WithAllowedHosts("*"), otc.WithAllowedOrigins("*"))
	if status, body := rawPost(t, ts, "/tools/call", echoCall, with("Host", "any.example", "Origin", "https://other.example")); status != http.StatusOK {
		t.Errorf(`"*": status %d; body %s`, status, body)
	}
}

func TestGuardOptionErrors(t *testing.T) {
	s := server.New(mcp.Implementation{Name: "x", Version: "1"})
	for name, o := range map[string]otc.Option{
		"empty host":           otc.WithAllowedHosts("localhost", ""),
		"empty origin":         otc.WithAllowedOrigins(" "),
		"negative timeout":     otc.WithLimits(otc.Limits{WriteTimeout: -time.Second}),
		"token ahead past 15m": otc.WithLimits(otc.Limits{MaxTokenAhead: time.Hour}),
	} {
		_, err := otc.NewHandler(otc.NewServerBackend(s), o)
		if err == nil {
			t.Errorf("%s: accepted", name)
		} else if strings.Contains(err.Error(), "otc.") || strings.Contains(err.Error(), "*") {
			t.Errorf("%s: error names Go types: %v", name, err)
		}
	}
	// A nil option is ignored, as everywhere in the project.
	if _, err := otc.NewHandler(otc.NewServerBackend(s), nil, otc.WithLogger(nil)); err != nil {
		t.Errorf("nil option: %v", err)
	}
}

// TestWriteTimeoutDropsStuckClient: a client that sends a call and never
// reads its (large) answer loses the connection once the write timeout
// passes, instead of holding the handler for as long as it likes.
func TestWriteTimeoutDropsStuckClient(t *testing.T) {
	big := strings.Repeat("x", 16<<20) // more than any socket buffer holds
	s := server.New(mcp.Implementation{Name: "toolwire_reference", Version: "1.0.0"})
	if err := server.AddTool(s, &mcp.Tool{Name: "echo"}, func(context.Context, *server.CallRequest, echoIn) (string, error) {
		return big, nil
	}); err != nil {
		t.Fatal(err)
	}
	h, err := otc.NewHandler(otc.NewServerBackend(s), otc.WithLimits(otc.Limits{WriteTimeout: 100 * time.Millisecond}))
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{}, 1)
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.ServeHTTP(w, r)
		done <- struct{}{}
	}))
	t.Cleanup(ts.Close)
	conn, err := net.Dial("tcp", ts.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "POST /tools/call HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s",
		ts.Listener.Addr(), len(echoCall), echoCall)
	// Read only the status line, then stop reading.
	line, err := bufio.NewReaderSize(conn, 64).ReadString('\n')
	if err != nil || !strings.Contains(line, " 200 ") {
		t.Fatalf("status line %q, %v", line, err)
	}
	select {
	case <-done:
	case <-time.After(10 * time.Second): // a failure bound, not a speed check
		t.Fatal("the handler is still writing to a client that stopped reading")
	}
}
