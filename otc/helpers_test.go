package otc_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"

	"github.com/toolwire/toolwire/internal/testhttp"
	"github.com/toolwire/toolwire/otc"
	"github.com/toolwire/toolwire/schema"
	"github.com/toolwire/toolwire/server"
)

// serve starts the OTC handler over s on a 127.0.0.1 test server.
func serve(t *testing.T, s *server.Server, opts ...otc.Option) *httptest.Server {
	t.Helper()
	h, err := otc.NewHandler(otc.NewServerBackend(s), opts...)
	if err != nil {
		t.Fatal(err)
	}
	return newTestServer(t, h)
}

// reply is an HTTP response, body decoded.
type reply struct {
	status int
	header http.Header
	raw    []byte
	body   map[string]any
}

func do(t *testing.T, method, url string, body any, header map[string]string) *reply {
	t.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = bytes.NewBufferString(b)
	default:
		raw, err := json.Marshal(b)
		if err != nil {
			t.Fatal(err)
		}
		rd = bytes.NewReader(raw)
	}
	req, err := http.NewRequest(method, url, rd)
	if err != nil {
		t.Fatal(err)
	}
	if rd != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, text := testhttp.Do(t, nil, req)
	raw := []byte(text)
	r := &reply{status: resp.StatusCode, header: resp.Header, raw: raw}
	if len(bytes.TrimSpace(raw)) > 0 {
		if err := json.Unmarshal(raw, &r.body); err != nil {
			t.Fatalf("%s %s: body is not a JSON object: %s", method, url, raw)
		}
	}
	return r
}

// call posts an OTC call envelope.
func call(t *testing.T, ts *httptest.Server, req map[string]any, header map[string]string) *reply {
	t.Helper()
	return do(t, http.MethodPost, ts.URL+"/tools/call", map[string]any{"$schema": "otc://1.0", "request": req}, header)
}

func wantStatus(t *testing.T, r *reply, status int) {
	t.Helper()
	if r.status != status {
		t.Fatalf("status %d, want %d; body %s", r.status, status, r.raw)
	}
}

// loadSchema compiles a schema from otc/schema.
func loadSchema(t *testing.T, name string) *schema.Schema {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("schema", name))
	if err != nil {
		t.Fatal(err)
	}
	s, err := schema.Compile(raw)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return s
}

// validJSON validates a decoded value by re-encoding it.
func validate(t *testing.T, s *schema.Schema, v any) error {
	t.Helper()
	raw, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return s.ValidateJSON(raw)
}

func readJSON(t *testing.T, path string) map[string]any {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func newTestServer(t *testing.T, h http.Handler) *httptest.Server {
	t.Helper()
	ts := httptest.NewServer(h)
	t.Cleanup(ts.Close)
	return ts
}
