package gateway_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/toolwire/toolwire/client"
	"github.com/toolwire/toolwire/gateway"
	"github.com/toolwire/toolwire/gateway/audit"
	"github.com/toolwire/toolwire/gateway/audit/sqlite"
	"github.com/toolwire/toolwire/gateway/audit/storetest"
	"github.com/toolwire/toolwire/internal/testmcp"
	"github.com/toolwire/toolwire/jsonrpc"
	"github.com/toolwire/toolwire/mcp"
	"github.com/toolwire/toolwire/server"
)

// argsRecorder keeps the arguments of every tools/call an upstream
// receives, as bytes.
type argsRecorder struct {
	mu   sync.Mutex
	args []string
}

func (r *argsRecorder) middleware(next jsonrpc.MethodHandler) jsonrpc.MethodHandler {
	return func(ctx context.Context, req *jsonrpc.Request) (any, error) {
		if req.Method == mcp.MethodCallTool {
			var p struct {
				Arguments json.RawMessage `json:"arguments"`
			}
			_ = json.Unmarshal(req.Params, &p)
			r.mu.Lock()
			r.args = append(r.args, string(p.Arguments))
			r.mu.Unlock()
		}
		return next(ctx, req)
	}
}

func (r *argsRecorder) seen() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.args)
}

// issueServer is an upstream with create_issue(repo, title, labels).
func issueServer(rec *argsRecorder) *server.Server {
	s := server.New(mcp.Implementation{Name: "issues", Version: "1"}, server.WithMiddleware(rec.middleware))
	type in struct {
		Repo   string   `json:"repo" jsonschema:"the repository"`
		Title  string   `json:"title,omitempty"`
		Labels []string `json:"labels,omitempty"`
	}
	must(server.AddTool(s, &mcp.Tool{Name: "create_issue", Description: "create an issue in any repository"},
		func(_ context.Context, _ *server.CallRequest, a in) (struct {
			Created string `json:"created"`
		}, error) {
			return struct {
				Created string `json:"created"`
			}{a.Repo + ": " + a.Title}, nil
		}))
	return s
}

// TestPinnedArgument: a tool with a pinned argument is listed with the
// operator's title and description and without the argument in its
// schema; the upstream receives the pinned value, added to exactly the
// arguments the caller sent; the same value is accepted; a different one
// (or a name the gateway cannot read plainly: escaped, or a case variant
// a case-insensitive upstream would take for it) is refused, never reaches
// the upstream, and is audited as denied.
func TestPinnedArgument(t *testing.T) {
	rec := &argsRecorder{}
	store, err := sqlite.Open(filepath.Join(t.TempDir(), "audit.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = store.Close() })
	g := newGateway(t, gateway.Config{Upstreams: []gateway.Upstream{{
		Name: "gh", Server: issueServer(rec),
		Tools: map[string]gateway.ToolOverride{"create_issue": {
			Title: "Create an issue in acme/app", Description: "Files an issue in acme/app.",
			Pin: map[string]json.RawMessage{"repo": json.RawMessage(`"acme/app"`)},
		}},
	}}}, gateway.WithAudit(store))
	ctx := context.Background()
	for _, era := range []mcp.Era{mcp.EraLegacy, mcp.EraModern} {
		c := downstream(t, g, client.WithEra(era))
		tools, err := c.ListTools(ctx)
		if err != nil || len(tools) != 1 {
			t.Fatalf("%v: tools/list: %+v %v", era, tools, err)
		}
		tool := tools[0]
		if tool.Name != "gh__create_issue" || tool.Title != "Create an issue in acme/app" || tool.Description != "Files an issue in acme/app." {
			t.Errorf("%v: listed %q %q %q", era, tool.Name, tool.Title, tool.Description)
		}
		var schema struct {
			Properties map[string]json.RawMessage `json:"properties"`
			Required   []string                   `json:"required"`
		}
		if err := json.Unmarshal(tool.InputSchema, &schema); err != nil {
			t.Fatal(err)
		}
		if _, ok := schema.Properties["repo"]; ok || slices.Contains(schema.Required, "repo") || schema.Properties["title"] == nil {
			t.Errorf("%v: the advertised schema still has the pinned argument: %s", era, tool.InputSchema)
		}

		before := len(rec.seen())
		for _, args := range []string{`{"title":"a"}`, `{ "repo" : "acme/app", "title":"b"}`, `{}`, `{"labels":["x"],"title":"c"}`} {
			raw, err := c.CallToolRaw(ctx, "gh__create_issue", json.RawMessage(args))
			if err != nil || strings.Contains(string(raw), `"isError":true`) {
				t.Fatalf("%v: call with %s: %s %v", era, args, raw, err)
			}
		}
		want := []string{`{"repo":"acme/app","title":"a"}`, `{ "repo" : "acme/app", "title":"b"}`, `{"repo":"acme/app"}`, `{"repo":"acme/app","labels":["x"],"title":"c"}`}
		if got := rec.seen()[before:]; !slices.Equal(got, want) {
			t.Errorf("%v: the upstream received\n%q\nwant\n%q", era, got, want)
		}

		before = len(rec.seen())
		for _, args := range []string{`{"repo":"evil/repo","title":"x"}`, `{"repo":"acme/app ","title":"x"}`, `{"re\u0070o":"evil/repo"}`, `{"Repo":"evil/repo","title":"x"}`} {
			res, err := c.CallTool(ctx, "gh__create_issue", json.RawMessage(args))
			if client.CodeOf(err) != client.CodeToolError || res == nil || !strings.Contains(testmcp.Text(res), `"repo"`) {
				t.Fatalf("%v: conflicting call %s: %+v %v", era, args, res, err)
			}
		}
		if got := rec.seen()[before:]; len(got) != 0 {
			t.Errorf("%v: refused calls reached the upstream: %q", era, got)
		}
	}
	var denied int
	for _, r := range storetest.Collect(t, store, audit.Filter{}) {
		if r.Outcome == audit.OutcomeDenied {
			denied++
			if r.Tool != "gh__create_issue" || !strings.Contains(r.Error, `"repo"`) {
				t.Errorf("denied record: %+v", r)
			}
		}
	}
	if denied != 8 {
		t.Errorf("%d denied records, want 8 (four refused calls in each era)", denied)
	}
}

// TestCallerSettingsChecked: New refuses a token exchange on an upstream
// that is not a URL or has nowhere to exchange, an unknown OnAPIKey, and a
// pinned value that is not compact JSON.
func TestCallerSettingsChecked(t *testing.T) {
	for _, c := range []struct {
		u    gateway.Upstream
		want string
	}{
		{gateway.Upstream{Name: "a", Server: echoServer("a"), TokenExchange: &gateway.TokenExchange{TokenEndpoint: "https://as/token"}}, "URL upstreams only"},
		{gateway.Upstream{Name: "a", URL: "http://127.0.0.1:9/mcp", TokenExchange: &gateway.TokenExchange{}}, "no token endpoint or issuer"},
		{gateway.Upstream{Name: "a", URL: "http://127.0.0.1:9/mcp", TokenExchange: &gateway.TokenExchange{Issuer: "https://as", OnAPIKey: "allow"}}, `OnAPIKey "allow"`},
		{gateway.Upstream{Name: "a", Server: echoServer("a"), Tools: map[string]gateway.ToolOverride{"echo": {Pin: map[string]json.RawMessage{"text": json.RawMessage(`"a" `)}}}}, `pinned argument "text"`},
	} {
		_, err := gateway.New(gateway.Config{Upstreams: []gateway.Upstream{c.u}})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want %s", c.u, err, c.want)
		}
	}
}
