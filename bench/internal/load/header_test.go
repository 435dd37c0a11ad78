package load

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
)

// Session.Header goes on every request: the handshake's, the
// notification's and each call's, in both eras.
func TestSessionHeader(t *testing.T) {
	var seen, missing atomic.Int64
	// counted serves h, counting the requests and those without the header.
	counted := func(h http.Handler) *httptest.Server {
		return serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			seen.Add(1)
			if r.Header.Get("Authorization") != "Bearer k" {
				missing.Add(1)
			}
			h.ServeHTTP(w, r)
		}))
	}
	legacy := counted(fakeHandler(false, withID(`{"jsonrpc":"2.0","id":%ID%,"result":{"content":[{"type":"text","text":"hi"}]}}`)))
	modern := counted(fakeModernHandler(t, http.StatusOK,
		`{"jsonrpc":"2.0","id":%ID%,"result":{"content":[{"type":"text","text":"hi"}],"resultType":"complete",`+serverInfoMeta+`}}`))
	hdr := http.Header{"Authorization": {"Bearer k"}}
	ctx := context.Background()
	s, err := OpenWithHeader(ctx, NewHTTPClient(1), legacy.URL, hdr)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Call(ctx, "echo", EchoArgs("hi"), CheckEcho("hi")); err != nil {
		t.Fatal(err)
	}
	m := NewStateless(NewHTTPClient(1), modern.URL)
	m.Header = hdr
	if err := m.Call(ctx, "echo", EchoArgs("hi"), CheckEcho("hi")); err != nil {
		t.Fatal(err)
	}
	if seen.Load() != 4 || missing.Load() != 0 {
		t.Fatalf("%d requests, %d without the header; want 4, 0", seen.Load(), missing.Load())
	}
}
