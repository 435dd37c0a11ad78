package main

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/toolwire/toolwire/gateway/audit"
	"github.com/toolwire/toolwire/internal/testhttp"
	"github.com/toolwire/toolwire/internal/wirejson"
	"github.com/toolwire/toolwire/jsonrpc"
	"github.com/toolwire/toolwire/mcp"
	"github.com/toolwire/toolwire/server"
	"github.com/toolwire/toolwire/transport/streamable"
)

// witnessUpstream is an HTTP MCP server with an allowed and a denied item
// of each kind (tools echo and get-env, prompts greet and secret,
// resources mem://pub and mem://secret, templates mem://t/{x} and
// mem://hidden/{x}, each completable) that records, with its own strict
// reader, what it was asked to run.
type witnessUpstream struct {
	url string

	mu  sync.Mutex
	ran []string // "method name"
}

func newWitnessUpstream(t *testing.T) *witnessUpstream {
	t.Helper()
	u := &witnessUpstream{}
	s := server.New(mcp.Implementation{Name: "witness", Version: "1"}, server.WithMiddleware(u.record))
	type in struct {
		Text string `json:"text,omitempty"`
	}
	for _, name := range []string{"echo", "get-env"} {
		if err := server.AddTool(s, &mcp.Tool{Name: name}, func(_ context.Context, _ *server.CallRequest, a in) (struct {
			Ran string `json:"ran"`
		}, error) {
			return struct {
				Ran string `json:"ran"`
			}{name + ":" + a.Text}, nil
		}); err != nil {
			t.Fatal(err)
		}
	}
	for _, name := range []string{"greet", "secret"} {
		if err := server.AddPrompt(s, &mcp.Prompt{Name: name, Arguments: []mcp.PromptArgument{{Name: "who"}}},
			func(context.Context, *server.PromptRequest, map[string]string) (*mcp.GetPromptResult, error) {
				return &mcp.GetPromptResult{Messages: []mcp.PromptMessage{{Role: "user", Content: &mcp.TextContent{Text: "prompt " + name}}}}, nil
			}); err != nil {
			t.Fatal(err)
		}
		if err := server.AddPromptCompletion(s, name, "who", server.CompleteFromList("ann", "bob")); err != nil {
			t.Fatal(err)
		}
	}
	for _, uri := range []string{"mem://pub", "mem://secret"} {
		if err := server.AddResource(s, &mcp.Resource{URI: uri, Name: strings.TrimPrefix(uri, "mem://")},
			func(_ context.Context, r *server.ResourceRequest) (*mcp.ReadResourceResult, error) {
				return &mcp.ReadResourceResult{Contents: []mcp.ResourceContents{&mcp.TextResourceContents{URI: r.URI, Text: "resource " + r.URI}}}, nil
			}); err != nil {
			t.Fatal(err)
		}
	}
	for _, tmpl := range []string{"mem://t/{x}", "mem://hidden/{x}"} {
		if err := server.AddResourceTemplate(s, &mcp.ResourceTemplate{URITemplate: tmpl, Name: "t"},
			func(_ context.Context, r *server.ResourceRequest) (*mcp.ReadResourceResult, error) {
				return &mcp.ReadResourceResult{Contents: []mcp.ResourceContents{&mcp.TextResourceContents{URI: r.URI, Text: "templated " + r.URI}}}, nil
			}); err != nil {
			t.Fatal(err)
		}
		if err := server.AddTemplateCompletion(s, tmpl, "x", server.CompleteFromList("one", "two")); err != nil {
			t.Fatal(err)
		}
	}
	u.url = serveMCP(t, streamable.NewHandler(s), nil)
	return u
}

func (u *witnessUpstream) record(next jsonrpc.MethodHandler) jsonrpc.MethodHandler {
	return func(ctx context.Context, req *jsonrpc.Request) (any, error) {
		var p struct {
			Name string                   `json:"name"`
			URI  string                   `json:"uri"`
			Ref  *mcp.CompletionReference `json:"ref"`
		}
		switch req.Method {
		case mcp.MethodCallTool, mcp.MethodGetPrompt, mcp.MethodReadResource, mcp.MethodComplete:
			if wirejson.Unmarshal(req.Params, &p) == nil {
				name := p.Name + p.URI
				if p.Ref != nil {
					name = p.Ref.Name + p.Ref.URI
				}
				u.mu.Lock()
				u.ran = append(u.ran, req.Method+" "+name)
				u.mu.Unlock()
			}
		}
		return next(ctx, req)
	}
}

func (u *witnessUpstream) take() []string {
	u.mu.Lock()
	defer u.mu.Unlock()
	out := u.ran
	u.ran = nil
	return out
}

// denied is what the persona forbids, as the upstream names it.
var deniedAtUpstream = map[string]bool{
	mcp.MethodCallTool + " get-env":            true,
	mcp.MethodGetPrompt + " secret":            true,
	mcp.MethodReadResource + " mem://secret":   true,
	mcp.MethodComplete + " secret":             true,
	mcp.MethodComplete + " mem://hidden/{x}":   true,
	mcp.MethodReadResource + " mem://hidden/a": true,
}

// spelling is one way of writing a request: its params (with %s where
// the 2026-07-28 _meta goes) and the Mcp-Name header a 2026-07-28 client
// would send ("" for none).
type spelling struct {
	name, method, params, header string
}

// spellings writes, for each method, the denied item in every way a
// lenient reader could take differently from a strict one.
func spellings() []spelling {
	var out []spelling
	type member struct {
		method, key, allowed, denied string
		extra                        string // other members
	}
	for _, m := range []member{
		{mcp.MethodCallTool, "name", "w__echo", "w__get-env", `,"arguments":{"text":"x"}`},
		{mcp.MethodGetPrompt, "name", "w__greet", "w__secret", `,"arguments":{"who":"x"}`},
		{mcp.MethodReadResource, "uri", "mem://pub", "mem://secret", ``},
	} {
		upper := strings.ToUpper(m.key)
		title := strings.ToUpper(m.key[:1]) + m.key[1:]
		escKey := `\u00` + fmt.Sprintf("%x", m.key[0]) + m.key[1:]
		escVal := m.denied[:len(m.denied)-1] + fmt.Sprintf(`\u%04x`, m.denied[len(m.denied)-1])
		for _, s := range []struct{ name, body, header string }{
			{"allowed", fmt.Sprintf(`"%s":%q`, m.key, m.allowed), m.allowed},
			{"denied", fmt.Sprintf(`"%s":%q`, m.key, m.denied), m.denied},
			{"upper-case member", fmt.Sprintf(`"%s":%q`, upper, m.denied), m.denied},
			{"case variant beside", fmt.Sprintf(`"%s":%q,"%s":%q`, m.key, m.allowed, title, m.denied), m.allowed},
			{"duplicate, denied last", fmt.Sprintf(`"%s":%q,"%s":%q`, m.key, m.allowed, m.key, m.denied), m.allowed},
			{"duplicate, denied first", fmt.Sprintf(`"%s":%q,"%s":%q`, m.key, m.denied, m.key, m.allowed), m.allowed},
			{"escaped member name", fmt.Sprintf(`"%s":%q,"%s":%q`, m.key, m.allowed, escKey, m.denied), m.allowed},
			{"escaped value", fmt.Sprintf(`"%s":"%s"`, m.key, escVal), m.denied},
			{"NUL in value", fmt.Sprintf(`"%s":"%s\u0000"`, m.key, m.denied), m.denied},
			{"trailing space", fmt.Sprintf(`"%s":"%s "`, m.key, m.denied), m.denied},
			{"empty", fmt.Sprintf(`"%s":""`, m.key), ""},
			{"header names another", fmt.Sprintf(`"%s":%q`, m.key, m.denied), m.allowed},
			{"header names the denied", fmt.Sprintf(`"%s":%q`, m.key, m.allowed), m.denied},
		} {
			out = append(out, spelling{m.method + " " + s.name, m.method, "{" + s.body + m.extra + "%s}", s.header})
		}
	}
	ref := func(typ, key, val string) string { return fmt.Sprintf(`"ref":{"type":%q,%q:%q}`, typ, key, val) }
	arg := `,"argument":{"name":"who","value":""}`
	for _, s := range []struct{ name, body string }{
		{"allowed prompt", ref(mcp.RefPrompt, "name", "w__greet") + arg},
		{"denied prompt", ref(mcp.RefPrompt, "name", "w__secret") + arg},
		{"denied template", `"ref":{"type":"ref/resource","uri":"mem://hidden/{x}"},"argument":{"name":"x","value":""}`},
		{"case variant in ref", `"ref":{"type":"ref/prompt","name":"w__greet","Name":"w__secret"}` + arg},
		{"duplicate in ref", `"ref":{"type":"ref/prompt","name":"w__greet","name":"w__secret"}` + arg},
		{"duplicate ref", ref(mcp.RefPrompt, "name", "w__greet") + "," + ref(mcp.RefPrompt, "name", "w__secret") + arg},
		{"upper-case ref", `"REF":{"type":"ref/prompt","name":"w__secret"},` + ref(mcp.RefPrompt, "name", "w__greet") + arg},
		{"empty name", ref(mcp.RefPrompt, "name", "") + arg},
	} {
		out = append(out, spelling{mcp.MethodComplete + " " + s.name, mcp.MethodComplete, "{" + s.body + "%s}", ""})
	}
	out = append(out, spelling{mcp.MethodReadResource + " denied template", mcp.MethodReadResource, `{"uri":"mem://hidden/a"%s}`, "mem://hidden/a"})
	return out
}

// TestGatewaySpellingsOnTheBinary: against the built gateway, in both eras,
// every spelling of a denied tool, prompt, resource or completion either is
// refused or runs only what the persona allows, and whatever ran upstream
// is in the audit trail under the name it ran as. A batch is refused.
func TestGatewaySpellingsOnTheBinary(t *testing.T) {
	up := newWitnessUpstream(t)
	keys, authYAML := apiKeys(t, "alice")
	key := keys[0]
	dir := t.TempDir()
	cfg := writeConfig(t, dir, "data_dir: state\n"+authYAML+`
personas:
  analyst:
    identities: [alice]
    tools: {allow: ["*"], deny: ["w__get-env"]}
    prompts: {allow: ["*"], deny: ["w__secret"]}
    resources: {allow: ["*"], deny: ["mem://secret", "mem://hidden/*"]}
upstreams:
  w:
    url: `+up.url+`
`)
	g := startGateway(t, "--config", cfg)
	auth := http.Header{"Authorization": {"Bearer " + key}}

	initialize := `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`
	resp := scalePost(t, g.url, "", "", initialize, auth)
	sid := resp.Header.Get("Mcp-Session-Id")
	if body := testhttp.ReadBody(t, resp); resp.StatusCode != http.StatusOK || sid == "" {
		t.Fatalf("initialize: %d %s", resp.StatusCode, body)
	}
	testhttp.ReadBody(t, scalePost(t, g.url, "", sid, `{"jsonrpc":"2.0","method":"notifications/initialized"}`, auth))

	modernMeta := fmt.Sprintf(`,"_meta":{%q:%q,%q:{}}`, mcp.MetaProtocolVersion, mcp.Version20260728, mcp.MetaClientCapabilities)
	ran := map[string]int{} // what the upstream ran, by downstream name
	id := 0
	for _, era := range []mcp.Era{mcp.EraLegacy, mcp.EraModern} {
		for _, s := range spellings() {
			id++
			meta, session, hdr := "", sid, auth.Clone()
			if era == mcp.EraModern {
				meta, session = modernMeta, ""
				hdr.Set("MCP-Protocol-Version", mcp.Version20260728)
				hdr.Set("Mcp-Method", s.method)
				if s.header != "" {
					hdr.Set("Mcp-Name", s.header)
				}
			}
			body := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":%q,"params":%s}`, id, s.method, fmt.Sprintf(s.params, meta))
			resp := scalePost(t, g.url, "", session, body, hdr)
			answer := sseData(testhttp.ReadBody(t, resp))
			for _, r := range up.take() {
				if deniedAtUpstream[r] {
					t.Errorf("%s %s: the denied %q ran upstream (answer %s)", era, s.name, r, answer)
				}
				ran[r]++
			}
		}
		// A batch of the allowed and the denied call is refused whole.
		batch := fmt.Sprintf(`[{"jsonrpc":"2.0","id":900,"method":"tools/call","params":{"name":"w__echo"%[1]s}},{"jsonrpc":"2.0","id":901,"method":"tools/call","params":{"name":"w__get-env"%[1]s}}]`, map[mcp.Era]string{mcp.EraModern: modernMeta}[era])
		session := sid
		hdr := auth.Clone()
		if era == mcp.EraModern {
			session = ""
			hdr.Set("MCP-Protocol-Version", mcp.Version20260728)
		}
		resp := scalePost(t, g.url, "", session, batch, hdr)
		if answer := testhttp.ReadBody(t, resp); resp.StatusCode == http.StatusOK && !strings.Contains(answer, `"error"`) {
			t.Errorf("%s batch answered %d %s", era, resp.StatusCode, answer)
		}
		if got := up.take(); len(got) > 0 {
			t.Errorf("%s batch ran %v upstream", era, got)
		}
	}
	if ran[mcp.MethodCallTool+" echo"] == 0 || ran[mcp.MethodGetPrompt+" greet"] == 0 || ran[mcp.MethodReadResource+" mem://pub"] == 0 || ran[mcp.MethodComplete+" greet"] == 0 {
		t.Fatalf("the allowed requests did not run: %v", ran)
	}

	// Stop the gateway (its audit trail flushed), then read the trail.
	if err := g.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	<-g.done
	_ = g.cmd.Wait()
	audited := map[string]int{}
	for _, r := range auditJSONL(t, "--data-dir", dir+"/state") {
		if r.Outcome == audit.OutcomeOK || r.Outcome == audit.OutcomeToolError {
			name := strings.TrimPrefix(r.Tool, "w__")
			audited[r.Method+" "+name]++
		}
		if r.Outcome == audit.OutcomeOK && deniedAtUpstream[r.Method+" "+strings.TrimPrefix(r.Tool, "w__")] {
			t.Errorf("the denied %s %s is audited as ok", r.Method, r.Tool)
		}
	}
	for what, n := range ran {
		if audited[what] < n {
			t.Errorf("%s ran %d times upstream, audited as run %d times", what, n, audited[what])
		}
	}
}
