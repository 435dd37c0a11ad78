package load

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// serverInfoMeta is the _meta member of a 2026-07-28 result naming the
// server, which the checks want in every such result.
const serverInfoMeta = `"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"f","version":"1"}}`

// fakeModernServer serves fakeModernHandler(t, status, reply) until the
// test ends.
func fakeModernServer(t *testing.T, status int, reply string) *httptest.Server {
	t.Helper()
	return serve(t, fakeModernHandler(t, status, reply))
}

// fakeModernHandler checks that each request is a well-formed stateless
// 2026-07-28 tools/call (headers, _meta, no session) and answers it with
// status and reply, each %ID% in it replaced by the request's id, as JSON.
func fakeModernHandler(t *testing.T, status int, reply string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		var req struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params struct {
				Name string                     `json:"name"`
				Meta map[string]json.RawMessage `json:"_meta"`
			} `json:"params"`
		}
		if err := json.Unmarshal(b, &req); err != nil {
			t.Errorf("request is not JSON: %v", err)
		}
		meta := req.Params
		for h, want := range map[string]string{"Mcp-Protocol-Version": ModernVersion, "Mcp-Method": "tools/call", "Mcp-Name": req.Params.Name, "Mcp-Session-Id": ""} {
			if got := r.Header.Get(h); got != want {
				t.Errorf("header %s = %q, want %q", h, got, want)
			}
		}
		if string(meta.Meta["io.modelcontextprotocol/protocolVersion"]) != `"`+ModernVersion+`"` {
			t.Errorf("_meta protocolVersion = %s", meta.Meta["io.modelcontextprotocol/protocolVersion"])
		}
		if string(meta.Meta["io.modelcontextprotocol/clientCapabilities"]) != `{}` {
			t.Errorf("_meta clientCapabilities = %s", meta.Meta["io.modelcontextprotocol/clientCapabilities"])
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		io.WriteString(w, strings.ReplaceAll(reply, "%ID%", string(req.ID)))
	}
}

func TestModernChecks(t *testing.T) {
	for _, tc := range []struct {
		name   string
		status int
		reply  string
		wantOK bool
	}{
		{"complete", 200, `{"jsonrpc":"2.0","id":%ID%,"result":{"content":[{"type":"text","text":"hi"}],"resultType":"complete",` + serverInfoMeta + `}}`, true},
		{"no resultType", 200, `{"jsonrpc":"2.0","id":%ID%,"result":{"content":[{"type":"text","text":"hi"}],` + serverInfoMeta + `}}`, false},
		{"input_required", 200, `{"jsonrpc":"2.0","id":%ID%,"result":{"content":[{"type":"text","text":"hi"}],"resultType":"input_required",` + serverInfoMeta + `}}`, false},
		{"no serverInfo", 200, `{"jsonrpc":"2.0","id":%ID%,"result":{"content":[{"type":"text","text":"hi"}],"resultType":"complete"}}`, false},
		{"wrong text", 200, `{"jsonrpc":"2.0","id":%ID%,"result":{"content":[{"type":"text","text":"ho"}],"resultType":"complete",` + serverInfoMeta + `}}`, false},
		{"400 error", 400, `{"jsonrpc":"2.0","id":%ID%,"error":{"code":-32020,"message":"Header mismatch"}}`, false},
		{"500", 500, `oops`, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := fakeModernServer(t, tc.status, tc.reply)
			s := NewStateless(NewHTTPClient(1), srv.URL)
			err := s.Call(context.Background(), "echo", EchoArgs("hi"), CheckEcho("hi"))
			if tc.wantOK && err != nil {
				t.Fatalf("want success, got %v", err)
			}
			if !tc.wantOK && err == nil {
				t.Fatal("a wrong reply passed the check")
			}
		})
	}
}

func TestModernRejected(t *testing.T) {
	for _, tc := range []struct {
		status int
		reply  string
		wantOK bool
	}{
		{200, `{"jsonrpc":"2.0","id":%ID%,"result":{"isError":true,"content":[{"type":"text","text":"bad"}],"resultType":"complete"}}`, true},
		{400, `{"jsonrpc":"2.0","id":%ID%,"error":{"code":-32602,"message":"bad"}}`, true},
		{400, `{"jsonrpc":"2.0","id":%ID%,"result":{"content":[]}}`, false},
		{400, `not json`, false},
		{200, `{"jsonrpc":"2.0","id":%ID%,"result":{"content":[{"type":"text","text":"5"}],"resultType":"complete"}}`, false},
	} {
		srv := fakeModernServer(t, tc.status, tc.reply)
		s := NewStateless(NewHTTPClient(1), srv.URL)
		err := s.CallRejected(context.Background(), "echo", []byte(`{"message":5}`))
		if (err == nil) != tc.wantOK {
			t.Errorf("HTTP %d %s: err = %v, want ok=%v", tc.status, tc.reply, err, tc.wantOK)
		}
	}
}

// A 400 is only an answer in 2026-07-28: a legacy session fails on it.
func TestLegacyStatus400(t *testing.T) {
	srv := fakeServer(t, false, func(string) string { return "" })
	s, err := Open(context.Background(), NewHTTPClient(1), srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	s.ID = "other" // the fake answers an unknown session with 400
	if err := s.CallRejected(context.Background(), "echo", []byte(`{"message":5}`)); err == nil {
		t.Fatal("a legacy 400 passed as a refusal")
	}
}
