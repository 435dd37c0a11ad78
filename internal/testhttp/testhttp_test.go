package testhttp_test

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/toolwire/toolwire/internal/testhttp"
)

// Do returns the status, headers and whole body; Get the status and body.
func TestDoAndGet(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Method", r.Method)
		w.WriteHeader(http.StatusTeapot)
		_, _ = w.Write([]byte("short and stout"))
	}))
	defer srv.Close()
	req, err := http.NewRequest(http.MethodPost, srv.URL, nil)
	if err != nil {
		t.Fatal(err)
	}
	res, body := testhttp.Do(t, srv.Client(), req)
	if res.StatusCode != http.StatusTeapot || res.Header.Get("X-Method") != "POST" || body != "short and stout" {
		t.Fatalf("%d %v %q", res.StatusCode, res.Header, body)
	}
	if code, body := testhttp.Get(t, srv.URL); code != http.StatusTeapot || body != "short and stout" {
		t.Fatalf("GET: %d %q", code, body)
	}
}

// ReadBody returns a response's whole body, read as the server streams it,
// and closes it.
func TestReadBody(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = w.Write([]byte("first "))
		w.(http.Flusher).Flush()
		_, _ = w.Write([]byte("second"))
	}))
	defer srv.Close()
	res, err := srv.Client().Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	if body := testhttp.ReadBody(t, res); body != "first second" {
		t.Fatalf("body %q", body)
	}
	if _, err := res.Body.Read(make([]byte, 1)); err == nil {
		t.Fatal("the body is still open")
	}
}
