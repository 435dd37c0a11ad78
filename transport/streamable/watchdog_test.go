package streamable

import (
	"bufio"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/toolwire/toolwire/internal/testwait"
)

// TestReadTimeoutEndsStalledBody: a client that sends its headers and then
// stalls the body is answered 400 once the read timeout has passed, instead of
// holding the handler forever.
func TestReadTimeoutEndsStalledBody(t *testing.T) {
	f := newFixture(t)
	_, ts := testServer(t, f, WithLimits(Limits{ReadTimeout: 20 * time.Millisecond}))
	conn, err := net.Dial("tcp", strings.TrimPrefix(ts.URL, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_, err = conn.Write([]byte("POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n" +
		"Accept: application/json, text/event-stream\r\nContent-Length: 100\r\n\r\n{\"jsonrpc\":"))
	if err != nil {
		t.Fatal(err)
	}
	_ = conn.SetReadDeadline(time.Now().Add(testwait.Limit)) // a failure bound, not a speed check
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("no answer to a stalled body: %v", err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest {
		t.Errorf("status %d, want 400", resp.StatusCode)
	}
}

func TestWatchdogTick(t *testing.T) {
	for _, c := range []struct {
		in   []time.Duration
		want time.Duration
	}{
		{[]time.Duration{30 * time.Second, 30 * time.Second}, time.Second},
		{[]time.Duration{20 * time.Millisecond}, 5 * time.Millisecond},
		{[]time.Duration{time.Millisecond}, 5 * time.Millisecond},
		{[]time.Duration{2 * time.Second, 0}, 500 * time.Millisecond},
	} {
		if got := newWatchdog(c.in...).tick; got != c.want {
			t.Errorf("newWatchdog(%v).tick = %v, want %v", c.in, got, c.want)
		}
	}
}
