package client_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/toolwire/toolwire/client"
	"github.com/toolwire/toolwire/jsonrpc"
	"github.com/toolwire/toolwire/mcp"
)

// TestParamsOnTheWire: tools/call params are {"arguments":…,"name":…}, raw
// arguments go out on one line (stdio frames messages by line), a name is
// escaped as encoding/json escapes it, and the client's _meta entries join
// a _meta the caller gave (legacy: the progress token; 2026-07-28: the
// version, capabilities and clientInfo too) or make a new one.
func TestParamsOnTheWire(t *testing.T) {
	type params struct {
		Name      string                     `json:"name"`
		Arguments json.RawMessage            `json:"arguments"`
		Meta      map[string]json.RawMessage `json:"_meta"`
	}
	body := func(t *testing.T, s seen) params {
		t.Helper()
		if strings.Contains(string(s.Body), "\n") {
			t.Errorf("the request spans lines: %q", s.Body)
		}
		var m struct{ Params params }
		if err := json.Unmarshal(s.Body, &m); err != nil {
			t.Fatalf("%v: %s", err, s.Body)
		}
		return m.Params
	}
	answer := func(w http.ResponseWriter, r *http.Request, req *jsonrpc.Request) bool {
		if req.Method == "tools/call" {
			writeResult(w, req.ID, textResult("ok"))
			return true
		}
		return false
	}
	ctx := context.Background()

	t.Run("legacy", func(t *testing.T) {
		f := newFake(t)
		f.handle = answer
		c := connect(t, f.transport(), legacy())
		progress := client.WithProgress(func(client.Progress) {})
		if _, err := c.CallTool(ctx, `a<b"c`, json.RawMessage("{\n  \"q\": \"x y\",\n  \"n\": [1, 2]\n}\n"), progress, client.WithOutputValidation(false)); err != nil {
			t.Fatal(err)
		}
		if _, err := c.Call(ctx, "tools/call", json.RawMessage(`{"name":"m","_meta":{"trace":"t1"}}`), progress); err != nil {
			t.Fatal(err)
		}
		if _, err := c.CallTool(ctx, "plain", nil, client.WithOutputValidation(false)); err != nil {
			t.Fatal(err)
		}
		calls := f.calls("tools/call")
		if len(calls) != 3 {
			t.Fatalf("%d calls", len(calls))
		}
		p := body(t, calls[0])
		if !strings.Contains(string(calls[0].Body), `"params":{"arguments":{"q":"x y","n":[1,2]},"name":"a\u003cb\"c","_meta":{"progressToken":`) {
			t.Errorf("tools/call sent %s", calls[0].Body)
		}
		if p.Name != `a<b"c` || len(p.Meta) != 1 || p.Meta["progressToken"] == nil {
			t.Errorf("params %+v", p)
		}
		p = body(t, calls[1])
		if string(p.Meta["trace"]) != `"t1"` || p.Meta["progressToken"] == nil || len(p.Meta) != 2 {
			t.Errorf("the caller's _meta was not kept and joined: %s", calls[1].Body)
		}
		if !strings.Contains(string(calls[2].Body), `"params":{"name":"plain"}`) {
			t.Errorf("tools/call without arguments sent %s", calls[2].Body)
		}
		if _, err := c.Call(ctx, "tools/call", json.RawMessage(`{"name":"m","_meta":5}`)); err == nil || client.CodeOf(err) != "" {
			t.Errorf("a _meta that is not an object: err = %v, want a local error", err)
		}
		if _, err := c.CallTool(ctx, "x", []int{1}); err == nil || client.CodeOf(err) != "" {
			t.Errorf("arguments encoding to an array: err = %v, want a local error", err)
		}
		if n := len(f.calls("tools/call")); n != 3 {
			t.Errorf("refused requests were sent (%d calls)", n)
		}
	})

	t.Run("2026-07-28", func(t *testing.T) {
		f := modernFake(t, `[]`, func(w http.ResponseWriter, r *http.Request, req *jsonrpc.Request) {
			writeResult(w, req.ID, `{"resultType":"complete","content":[]}`)
		})
		c := connect(t, f.transport(), client.WithClientInfo(mcp.Implementation{Name: "tester", Version: "9"}))
		if _, err := c.Call(ctx, "tools/call", json.RawMessage(`{"name":"m","_meta":{"trace":"t1","io.modelcontextprotocol/protocolVersion":"1999-01-01"}}`)); err != nil {
			t.Fatal(err)
		}
		if _, err := c.CallTool(ctx, "n", map[string]int{"a": 1}, client.WithProgress(func(client.Progress) {})); err != nil {
			t.Fatal(err)
		}
		calls := f.calls("tools/call")
		if len(calls) != 2 {
			t.Fatalf("%d calls", len(calls))
		}
		for i, s := range calls {
			m := body(t, s).Meta
			if string(m[mcp.MetaProtocolVersion]) != `"2026-07-28"` || string(m[mcp.MetaClientCapabilities]) != `{}` ||
				!strings.Contains(string(m[mcp.MetaClientInfo]), `"tester"`) {
				t.Errorf("call %d: _meta %s", i, s.Body)
			}
		}
		if m := body(t, calls[0]).Meta; string(m["trace"]) != `"t1"` || len(m) != 4 {
			t.Errorf("the caller's _meta was not kept and joined: %s", calls[0].Body)
		}
		if p := body(t, calls[1]); string(p.Arguments) != `{"a":1}` || p.Meta[mcp.MetaProgressToken] == nil || len(p.Meta) != 4 {
			t.Errorf("tools/call sent %s", calls[1].Body)
		}
	})
}
