package gateway_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/toolwire/toolwire/gateway"
	"github.com/toolwire/toolwire/gateway/audit"
	"github.com/toolwire/toolwire/gateway/policy"
	"github.com/toolwire/toolwire/internal/wirejson"
	"github.com/toolwire/toolwire/jsonrpc"
	"github.com/toolwire/toolwire/mcp"
	"github.com/toolwire/toolwire/server"
	"github.com/toolwire/toolwire/transport/memory"
)

// received is one request an upstream received, as its own strict reader
// decoded it.
type received struct {
	upstream, method, name string
	arguments              json.RawMessage
}

// witness records what upstreams receive.
type witness struct {
	mu  sync.Mutex
	got []received
}

func (w *witness) middleware(upstream string) jsonrpc.Middleware {
	return func(next jsonrpc.MethodHandler) jsonrpc.MethodHandler {
		return func(ctx context.Context, req *jsonrpc.Request) (any, error) {
			switch req.Method {
			case mcp.MethodCallTool, mcp.MethodGetPrompt, mcp.MethodReadResource, mcp.MethodComplete:
				var p struct {
					Name      string                   `json:"name"`
					URI       string                   `json:"uri"`
					Arguments json.RawMessage          `json:"arguments"`
					Ref       *mcp.CompletionReference `json:"ref"`
				}
				// Whatever the gateway sends decodes strictly; if it did
				// not, the upstream would refuse it and run nothing.
				if err := wirejson.Unmarshal(req.Params, &p); err == nil {
					name := p.Name + p.URI
					if p.Ref != nil {
						name = p.Ref.Name + p.Ref.URI
					}
					w.mu.Lock()
					w.got = append(w.got, received{upstream, req.Method, name, p.Arguments})
					w.mu.Unlock()
				}
			}
			return next(ctx, req)
		}
	}
}

func (w *witness) take() []received { return takeAll(&w.mu, &w.got) }

// takeAll empties *list under mu and returns what it held.
func takeAll[T any](mu *sync.Mutex, list *[]T) []T {
	mu.Lock()
	defer mu.Unlock()
	out := *list
	*list = nil
	return out
}

// memAudit keeps audit records in memory.
type memAudit struct {
	mu   sync.Mutex
	recs []audit.Record
}

func (m *memAudit) Append(_ context.Context, r *audit.Record) error {
	m.mu.Lock()
	m.recs = append(m.recs, *r)
	m.mu.Unlock()
	return nil
}

func (m *memAudit) take() []audit.Record { return takeAll(&m.mu, &m.recs) }

// rawEnv is a gateway with an allowed upstream (ref: all but its tool
// secret) and a denied one (vault: nothing), spoken to in raw JSON-RPC
// over an in-process connection of an initialized 2025-11-25 session.
type rawEnv struct {
	conn    *memory.Conn
	witness *witness
	audit   *memAudit
	id      int
}

func newRawEnv(t testing.TB) *rawEnv {
	t.Helper()
	e := &rawEnv{witness: &witness{}, audit: &memAudit{}}
	pol, err := policy.New([]policy.Persona{{Name: "guest", Match: policy.Match{Anonymous: true},
		Tools:     policy.Rules{Allow: []string{"*"}, Deny: []string{"ref__secret", "vault__*"}},
		Prompts:   policy.Rules{Allow: []string{"*"}, Deny: []string{"vault__*"}},
		Resources: policy.Rules{Allow: []string{"*"}, Deny: []string{"mem://vault/*"}}}})
	if err != nil {
		t.Fatal(err)
	}
	g, err := gateway.New(gateway.Config{Policy: pol, Upstreams: []gateway.Upstream{
		{Name: "ref", Server: echoServer("ref", server.WithMiddleware(e.witness.middleware("ref")))},
		{Name: "vault", Server: echoServer("vault", server.WithMiddleware(e.witness.middleware("vault")))},
	}}, gateway.WithAudit(e.audit))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	e.conn = memory.Serve(ctx, g.Server())
	t.Cleanup(func() { cancel(); _ = g.Close(context.Background()) })
	init := fmt.Sprintf(`{"protocolVersion":%q,"capabilities":{},"clientInfo":{"name":"fuzz","version":"1"}}`, mcp.Version20251125)
	if res := e.send(t, "initialize", []byte(init)); !strings.Contains(string(res), `"result"`) {
		t.Fatalf("initialize: %s", res)
	}
	if err := e.conn.Write(ctx, []byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)); err != nil {
		t.Fatal(err)
	}
	return e
}

// send writes one request with params as they are and returns the answer
// to it (notifications the gateway sends meanwhile are skipped).
func (e *rawEnv) send(t testing.TB, method string, params []byte) []byte {
	t.Helper()
	e.id++
	msg := fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%d,"method":%q,"params":%s}`, e.id, method, params)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := e.conn.Write(ctx, msg); err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf(`"id":%d`, e.id)
	for {
		b, err := e.conn.Read(ctx)
		if err != nil {
			t.Fatalf("no answer to %s: %v", msg, err)
		}
		if strings.Contains(string(b), `"error"`) && strings.Contains(string(b), `"id":null`) {
			return b // the message itself was refused (not JSON)
		}
		if strings.Contains(string(b), want) {
			return b
		}
	}
}

var fuzzMethods = []string{mcp.MethodCallTool, mcp.MethodGetPrompt, mcp.MethodReadResource, mcp.MethodComplete}

// checkDecidedIsForwarded holds the gateway to its one rule: whatever
// reached an upstream is what was decided on and audited. The denied
// upstream and the denied tool receive nothing; everything the allowed
// upstream received has an allowed audit record naming it, with the
// arguments it received.
func checkDecidedIsForwarded(t *testing.T, method string, params []byte, got []received, recs []audit.Record) {
	t.Helper()
	for _, s := range got {
		if s.upstream == "vault" || s.method == mcp.MethodCallTool && s.name == "secret" {
			t.Fatalf("params %q: denied %s %s reached upstream %s", params, s.method, s.name, s.upstream)
		}
		if s.method != method {
			t.Fatalf("params %q: %s forwarded as %s", params, method, s.method)
		}
		want := "ref__" + s.name
		if method == mcp.MethodReadResource || method == mcp.MethodComplete && strings.Contains(s.name, "://") {
			want = s.name
		}
		found := false
		for _, r := range recs {
			if r.Method != method || r.Tool != want {
				continue
			}
			if r.Outcome == audit.OutcomeDenied || r.Outcome == audit.OutcomeRateLimited {
				t.Fatalf("params %q: %s audited as %s but forwarded", params, want, r.Outcome)
			}
			if !sameJSON(r.Arguments, s.arguments) {
				t.Fatalf("params %q: audited arguments %s, forwarded %s", params, r.Arguments, s.arguments)
			}
			found = true
		}
		if !found {
			t.Fatalf("params %q: %s %s reached the upstream with no audit record naming it (records: %+v)", params, method, want, recs)
		}
	}
}

// sameJSON compares two JSON values (nil and null are alike).
func sameJSON(a, b json.RawMessage) bool {
	if len(a) == 0 || string(a) == "null" {
		return len(b) == 0 || string(b) == "null"
	}
	var x, y any
	if wirejson.UnmarshalUseNumber(a, &x) != nil || wirejson.UnmarshalUseNumber(b, &y) != nil {
		return false
	}
	xb, _ := json.Marshal(x)
	yb, _ := json.Marshal(y)
	return string(xb) == string(yb)
}

// FuzzTargetDecidedIsForwarded: for arbitrary params of the four methods
// the gateway decides on, the target the personas decided on (and the
// audit recorded) equals the target forwarded, or the request is refused
// and nothing is forwarded.
func FuzzTargetDecidedIsForwarded(f *testing.F) {
	for _, s := range []struct {
		m      uint8
		params string
	}{
		{0, `{"name":"ref__echo","arguments":{"text":"hi"}}`},
		{0, `{"NAME":"ref__secret","arguments":{}}`},
		{0, `{"name":"ref__echo","Name":"ref__secret","arguments":{}}`},
		{0, `{"name":"ref__echo","name":"ref__secret","arguments":{}}`},
		{0, `{"name":"ref__secret","name":"ref__echo","arguments":{}}`},
		{0, `{"name":"ref__echo","n\u0061me":"ref__secret"}`},
		{0, `{"name":"ref__s\u0065cret","arguments":{}}`},
		{0, `{"name":"ref__secret\u0000"}`},
		{0, `{"name":"ref__secret "}`},
		{0, `{"name":"vault__echo","arguments":{"text":"x"}}`},
		{0, `{"name":"ref__echo","arguments":{"text":"a","text":"b"}}`},
		{0, `{"name":"ref__echo","arguments":{"text":"a","TEXT":"b"}}`},
		{0, `{"name":"ref__echo","_meta":{"progressToken":1,"x":{"y":1,"y":2}}}`},
		{1, `{"name":"ref__greet","arguments":{"who":"a"}}`},
		{1, `{"NAME":"vault__greet","arguments":{"who":"a"}}`},
		{1, `{"name":"ref__greet","name":"vault__greet","arguments":{"who":"a"}}`},
		{2, `{"uri":"mem://ref/doc"}`},
		{2, `{"URI":"mem://vault/doc"}`},
		{2, `{"uri":"mem://ref/doc","uri":"mem://vault/doc"}`},
		{2, `{"uri":"mem://ref/doc","Uri":"mem://vault/doc"}`},
		{3, `{"ref":{"type":"ref/prompt","name":"vault__greet"},"argument":{"name":"who","value":""}}`},
		{3, `{"ref":{"type":"ref/prompt","name":"ref__greet","NAME":"vault__greet"},"argument":{"name":"who","value":""}}`},
		{3, `{"ref":{"type":"ref/resource","uri":"mem://vault/doc"},"argument":{"name":"x","value":""}}`},
	} {
		f.Add(s.m, []byte(s.params))
	}
	e := newRawEnv(f)
	f.Fuzz(func(t *testing.T, m uint8, params []byte) {
		method := fuzzMethods[int(m)%len(fuzzMethods)]
		e.send(t, method, params)
		checkDecidedIsForwarded(t, method, params, e.witness.take(), e.audit.take())
	})
}

// TestSpellingsAreRefusedOrDecidedAsForwarded is the fuzz target's table
// with its answers pinned: the allowed requests reach the upstream (so the
// check above is not vacuous), and each other spelling of a denied name is
// refused with -32602 or denied, and reaches nothing.
func TestSpellingsAreRefusedOrDecidedAsForwarded(t *testing.T) {
	e := newRawEnv(t)
	cases := []struct {
		method, params string
		want           string // in the answer
		forwarded      bool
	}{
		{mcp.MethodCallTool, `{"name":"ref__echo","arguments":{"text":"hi"}}`, `"echo":"hi"`, true},
		{mcp.MethodCallTool, `{"name":"ref__secret","arguments":{}}`, `"isError":true`, false},
		{mcp.MethodCallTool, `{"name":"ref__s\u0065cret","arguments":{}}`, `"isError":true`, false},
		{mcp.MethodCallTool, `{"NAME":"ref__secret","arguments":{}}`, `-32602`, false},
		{mcp.MethodCallTool, `{"name":"ref__echo","Name":"ref__secret","arguments":{}}`, `-32602`, false},
		{mcp.MethodCallTool, `{"name":"ref__echo","name":"ref__secret","arguments":{}}`, `-32602`, false},
		{mcp.MethodCallTool, `{"name":"ref__secret","name":"ref__echo","arguments":{}}`, `-32602`, false},
		{mcp.MethodCallTool, `{"name":"ref__echo","n\u0061me":"ref__secret"}`, `-32602`, false},
		{mcp.MethodCallTool, `{"name":"ref__secret\u0000"}`, `-32602`, false},
		{mcp.MethodCallTool, `{"name":"ref__secret "}`, `-32602`, false},
		{mcp.MethodCallTool, `{"name":""}`, `-32602`, false},
		{mcp.MethodCallTool, `{"arguments":{}}`, `-32602`, false},
		{mcp.MethodGetPrompt, `{"name":"ref__greet","arguments":{"who":"a"}}`, `hello a from ref`, true},
		{mcp.MethodGetPrompt, `{"name":"vault__greet","arguments":{"who":"a"}}`, `-32602`, false},
		{mcp.MethodGetPrompt, `{"NAME":"vault__greet","arguments":{"who":"a"}}`, `-32602`, false},
		{mcp.MethodGetPrompt, `{"name":"ref__greet","name":"vault__greet","arguments":{"who":"a"}}`, `-32602`, false},
		{mcp.MethodReadResource, `{"uri":"mem://ref/doc"}`, `doc of ref`, true},
		{mcp.MethodReadResource, `{"uri":"mem://vault/doc"}`, `-32602`, false},
		{mcp.MethodReadResource, `{"URI":"mem://vault/doc"}`, `-32602`, false},
		{mcp.MethodReadResource, `{"uri":"mem://ref/doc","uri":"mem://vault/doc"}`, `-32602`, false},
		{mcp.MethodComplete, `{"ref":{"type":"ref/prompt","name":"vault__greet"},"argument":{"name":"who","value":""}}`, `-32602`, false},
		{mcp.MethodComplete, `{"ref":{"type":"ref/resource","uri":"mem://vault/doc"},"argument":{"name":"x","value":""}}`, `-32602`, false},
		{mcp.MethodComplete, `{"ref":{"type":"ref/prompt","name":"ref__greet"},"argument":{"name":"who","value":""}}`, `"values":[]`, false},
	}
	for _, c := range cases {
		res := e.send(t, c.method, []byte(c.params))
		if !strings.Contains(string(res), c.want) {
			t.Errorf("%s %s: answered %s, want %s", c.method, c.params, res, c.want)
		}
		got, recs := e.witness.take(), e.audit.take()
		if c.forwarded != (len(got) == 1) {
			t.Errorf("%s %s: upstreams received %+v", c.method, c.params, got)
		}
		// A refusal may come from the server's own reading of the
		// envelope's _meta, before the gateway: then nothing is audited.
		if len(recs) != 1 && (c.want != "-32602" || len(recs) != 0) {
			t.Errorf("%s %s: %d audit records, want 1", c.method, c.params, len(recs))
		}
		checkDecidedIsForwarded(t, c.method, []byte(c.params), got, recs)
	}
}
