package load

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
)

// Session.Header goes on every request: the handshake's, the
// notification's and each call's, in both eras.
func TestSessionHeader(t *testing.T) {
	const si = `"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"f","version":"1"}}`
	var seen, missing atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		seen.Add(1)
		if r.Header.Get("Authorization") != "Bearer k" {
			missing.Add(1)
		}
		body := string(b)
		id := "1"
		if i := strings.Index(body, `"id":`); i >= 0 {
			id = body[i+5 : i+5+strings.IndexAny(body[i+5:], ",}")]
		}
		switch {
		case strings.Contains(body, `"notifications/initialized"`):
			w.WriteHeader(http.StatusAccepted)
			return
		case strings.Contains(body, `"initialize"`):
			w.Header().Set("Mcp-Session-Id", "s1")
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, `{"jsonrpc":"2.0","id":`+id+`,"result":{"protocolVersion":"`+ProtocolVersion+`","capabilities":{},"serverInfo":{"name":"f","version":"1"}}}`)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"jsonrpc":"2.0","id":`+id+`,"result":{"content":[{"type":"text","text":"hi"}],"resultType":"complete",`+si+`}}`)
	}))
	defer srv.Close()
	hdr := http.Header{"Authorization": {"Bearer k"}}
	ctx := context.Background()
	s, err := OpenWithHeader(ctx, NewHTTPClient(1), srv.URL, hdr)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Call(ctx, "echo", EchoArgs("hi"), CheckEcho("hi")); err != nil {
		t.Fatal(err)
	}
	m := NewStateless(NewHTTPClient(1), srv.URL)
	m.Header = hdr
	if err := m.Call(ctx, "echo", EchoArgs("hi"), CheckEcho("hi")); err != nil {
		t.Fatal(err)
	}
	if seen.Load() != 4 || missing.Load() != 0 {
		t.Fatalf("%d requests, %d without the header; want 4, 0", seen.Load(), missing.Load())
	}
}
