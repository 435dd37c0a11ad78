package gateway

import (
	"io"
	"net/http"
	"strings"
	"testing"
)

// TestH1PooledConnectionHoldsNoBuffer: a connection back in the pool
// after its exchange holds no read buffer, and the next exchange on it
// (taking one again) is answered; a response larger than the buffer
// reads whole.
func TestH1PooledConnectionHoldsNoBuffer(t *testing.T) {
	h1Leaks(t)
	big := strings.Repeat("x", 3*h1BufferSize+17)
	srv := newH1Server(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		in, _ := io.ReadAll(r.Body)
		if r.URL.Query().Get("big") != "" {
			io.WriteString(w, big)
			return
		}
		io.WriteString(w, "echo:"+string(in))
	}), false)
	t.Cleanup(srv.Close)
	tr := newTestH1(t, 4)
	for i := range 3 {
		if _, body := h1Do(t, tr, http.MethodPost, srv.URL, []byte("hi")); body != "echo:hi" {
			t.Fatalf("exchange %d: body %q, want \"echo:hi\"", i, body)
		}
		tr.mu.Lock()
		var idle, buffered int
		for _, p := range tr.pools {
			for _, c := range p.idle {
				idle++
				if c.br != nil {
					buffered++
				}
			}
		}
		tr.mu.Unlock()
		if idle != 1 || buffered != 0 {
			t.Fatalf("exchange %d: %d pooled connections, %d of them with a read buffer; want 1, 0", i, idle, buffered)
		}
	}
	if _, body := h1Do(t, tr, http.MethodGet, srv.URL+"?big=1", nil); body != big {
		t.Fatalf("big body: %d bytes, want %d", len(body), len(big))
	}
	if n := srv.conns.Load(); n != 1 {
		t.Fatalf("%d connections, want 1", n)
	}
}
