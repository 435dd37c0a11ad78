package streamable

import (
	"net/http"
	"testing"

	"github.com/toolwire/toolwire/jsonrpc"
	"github.com/toolwire/toolwire/mcp"
)

func TestHeaderMatches(t *testing.T) {
	f := newFixture(t)
	_, ts := testServer(t, f)
	call := func(args map[string]any, headers map[string]string) (int, *jsonrpc.Error) {
		r := modernRequest(t, ts.URL, 1, "tools/call", map[string]any{"name": "headers", "arguments": args})
		for k, v := range headers {
			r.Header.Set(k, v)
		}
		resp := do(t, r)
		return resp.StatusCode, decodeReply(t, readAll(t, resp)).Error
	}
	cases := []struct {
		name    string
		args    map[string]any
		headers map[string]string
		ok      bool
	}{
		{"plain match", map[string]any{"region": "us-west1"}, map[string]string{"Mcp-Param-Region": "us-west1"}, true},
		{"header name case", map[string]any{"region": "us-west1"}, map[string]string{"mcp-param-region": "us-west1"}, true},
		{"base64 match", map[string]any{"region": "Hello"}, map[string]string{"Mcp-Param-Region": "=?base64?SGVsbG8=?="}, true},
		{"mismatch", map[string]any{"region": "us-west1"}, map[string]string{"Mcp-Param-Region": "eu-west1"}, false},
		{"missing", map[string]any{"region": "us-west1"}, nil, false},
		{"bad base64", map[string]any{"region": "Hello"}, map[string]string{"Mcp-Param-Region": "=?base64?SGVsbG8?=", "Mcp-Name": "headers"}, false},
		{"null needs no header", map[string]any{"region": nil}, nil, true},
		{"unannotated needs no header", map[string]any{"query": "x"}, nil, true},
		{"integer compared as a number", map[string]any{"count": 42}, map[string]string{"Mcp-Param-Count": "42.0"}, true},
		{"integer mismatch", map[string]any{"count": 42}, map[string]string{"Mcp-Param-Count": "43"}, false},
		{"exponent refused", map[string]any{"count": 42}, map[string]string{"Mcp-Param-Count": "4.2e1"}, false},
		{"boolean", map[string]any{"dry": true}, map[string]string{"Mcp-Param-Dry": "true"}, true},
		{"boolean mismatch", map[string]any{"dry": true}, map[string]string{"Mcp-Param-Dry": "TRUE"}, false},
		{"nested property", map[string]any{"opts": map[string]any{"zone": "z1"}}, map[string]string{"Mcp-Param-Zone": "z1"}, true},
		{"nested property missing", map[string]any{"opts": map[string]any{"zone": "z1"}}, nil, false},
		{"Mcp-Name base64", map[string]any{}, map[string]string{"Mcp-Name": "=?base64?aGVhZGVycw==?="}, true},
		{"Mcp-Name mismatch", map[string]any{}, map[string]string{"Mcp-Name": "echo"}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			status, e := call(c.args, c.headers)
			if c.ok {
				if status != http.StatusOK || e != nil {
					t.Fatalf("status %d, error %+v; want 200", status, e)
				}
				return
			}
			if status != http.StatusBadRequest || e == nil || e.Code != mcp.CodeHeaderMismatch {
				t.Fatalf("status %d, error %+v; want 400 with -32020", status, e)
			}
		})
	}
}
