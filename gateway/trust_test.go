package gateway_test

import (
	"context"
	"encoding/json"
	"errors"
	"iter"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/toolwire/toolwire/client"
	"github.com/toolwire/toolwire/gateway"
	"github.com/toolwire/toolwire/gateway/audit"
	"github.com/toolwire/toolwire/gateway/audit/sqlite"
	"github.com/toolwire/toolwire/gateway/audit/storetest"
	"github.com/toolwire/toolwire/gateway/enrich"
	"github.com/toolwire/toolwire/gateway/policy"
	"github.com/toolwire/toolwire/gateway/ratelimit"
	"github.com/toolwire/toolwire/internal/testmcp"
	"github.com/toolwire/toolwire/internal/testwait"
	"github.com/toolwire/toolwire/jsonrpc"
	"github.com/toolwire/toolwire/mcp"
	"github.com/toolwire/toolwire/server"
	"github.com/toolwire/toolwire/transport/streamable"
)

// callCounter counts the requests an upstream server receives, by method
// and name.
type callCounter struct {
	mu sync.Mutex
	n  map[string]int
}

func (c *callCounter) middleware(next jsonrpc.MethodHandler) jsonrpc.MethodHandler {
	return func(ctx context.Context, req *jsonrpc.Request) (any, error) {
		var p struct {
			Name string `json:"name"`
			URI  string `json:"uri"`
		}
		_ = json.Unmarshal(req.Params, &p)
		c.mu.Lock()
		c.n[req.Method+" "+p.Name+p.URI]++
		c.mu.Unlock()
		return next(ctx, req)
	}
}

func (c *callCounter) count(key string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n[key]
}

// countedEcho is echoServer with its requests counted.
func countedEcho(name string, c *callCounter) *server.Server {
	return echoServer(name, server.WithMiddleware(c.middleware))
}

type trustEnv struct {
	g                *gateway.Gateway
	cfg              gateway.Config
	store            *sqlite.Store
	counted          *callCounter
	url              string
	aliceKey, botKey string
}

func newTrustEnv(t *testing.T, limits gateway.Limiter, opts ...gateway.Option) *trustEnv {
	t.Helper()
	e := &trustEnv{counted: &callCounter{n: map[string]int{}}}
	var err error
	if e.aliceKey, err = policy.NewKey(); err != nil {
		t.Fatal(err)
	}
	e.botKey, _ = policy.NewKey()
	keys, err := policy.NewKeySet(map[string]string{"alice": policy.HashKey(e.aliceKey), "bot": policy.HashKey(e.botKey)})
	if err != nil {
		t.Fatal(err)
	}
	pol, err := policy.New([]policy.Persona{
		{Name: "analyst", Match: policy.Match{Identities: []string{"api_key:alice"}},
			Tools:     policy.Rules{Allow: []string{"files__*"}, Deny: []string{"files__secret"}},
			Prompts:   policy.Rules{Allow: []string{"weather__*"}},
			Resources: policy.Rules{Allow: []string{"mem://files/*"}}},
		{Name: "ops", Match: policy.Match{Identities: []string{"bot"}},
			Tools: policy.Rules{Allow: []string{"*"}}, Prompts: policy.Rules{Allow: []string{"*"}}, Resources: policy.Rules{Allow: []string{"*"}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	e.store, err = sqlite.Open(filepath.Join(t.TempDir(), "audit.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = e.store.Close() })
	cfg := gateway.Config{
		Upstreams: []gateway.Upstream{{Name: "files", Server: countedEcho("files", e.counted)}, {Name: "weather", Server: countedEcho("weather", e.counted)}},
		Policy:    pol, Limits: limits,
	}
	opts = append([]gateway.Option{gateway.WithAudit(e.store), gateway.WithAuditRedaction([]string{"text"}, 16)}, opts...)
	e.g, e.cfg = newGateway(t, cfg, opts...), cfg
	h := streamable.NewHandler(e.g.Server())
	hs := httptest.NewServer(policy.Authenticate(keys, nil, func() bool { return true })(h))
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = h.Shutdown(ctx)
		hs.Close()
	})
	e.url = hs.URL
	return e
}

// as connects to the gateway over HTTP with key ("" for anonymous) in the
// era of version.
func (e *trustEnv) as(t *testing.T, key, version string) *client.Client {
	t.Helper()
	h := http.Header{}
	if key != "" {
		h.Set("Authorization", "Bearer "+key)
	}
	c, err := client.Connect(context.Background(), &client.HTTP{URL: e.url, Header: h}, client.WithEra(mcp.EraOf(version)), client.WithProtocolVersion(version))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// refused calls name with args and returns the text of the isError result
// it expects.
func refused(t *testing.T, c *client.Client, name string, args map[string]any) string {
	t.Helper()
	res, err := c.CallTool(context.Background(), name, args)
	if client.CodeOf(err) != client.CodeToolError || res == nil || !res.IsError {
		t.Fatalf("call of %s: %+v %v (want an isError result)", name, res, err)
	}
	return testmcp.Text(res)
}

func TestPersonasFilterListsAndDenyCalls(t *testing.T) {
	for _, version := range []string{mcp.Version20251125, mcp.Version20260728} {
		t.Run(version, func(t *testing.T) {
			e := newTrustEnv(t, nil)
			ctx := context.Background()
			alice, bot, anon := e.as(t, e.aliceKey, version), e.as(t, e.botKey, version), e.as(t, "", version)

			if got := testmcp.ToolNames(t, alice); !slices.Equal(got, []string{"files__echo"}) {
				t.Errorf("alice sees %v", got)
			}
			if got := testmcp.ToolNames(t, bot); !slices.Equal(got, []string{"files__echo", "files__secret", "weather__echo", "weather__secret"}) {
				t.Errorf("bot sees %v", got)
			}
			if got := testmcp.ToolNames(t, anon); len(got) != 0 {
				t.Errorf("anonymous, matched by no persona, sees %v", got)
			}
			prompts, err := alice.ListPrompts(ctx)
			if err != nil || len(prompts) != 1 || prompts[0].Name != "weather__greet" {
				t.Errorf("alice's prompts: %v %v", prompts, err)
			}
			resources, err := alice.ListResources(ctx)
			if err != nil || len(resources) != 1 || resources[0].URI != "mem://files/doc" {
				t.Errorf("alice's resources: %v %v", resources, err)
			}

			// Denied: an isError result naming the rule, never forwarded.
			if got := refused(t, alice, "files__secret", nil); !strings.Contains(got, `denied by persona "analyst": tools.deny "files__secret"`) {
				t.Errorf("denied call: %s", got)
			}
			if got := refused(t, anon, "files__echo", map[string]any{"text": "x"}); !strings.Contains(got, "anonymous matches no persona") {
				t.Errorf("anonymous call: %s", got)
			}
			if _, err := alice.ReadResource(ctx, "mem://weather/doc"); err == nil || !strings.Contains(err.Error(), "denied") {
				t.Errorf("denied read: %v", err)
			}
			if n := e.counted.count("tools/call secret") + e.counted.count("resources/read mem://weather/doc"); n != 0 {
				t.Errorf("denied requests reached the upstream %d times", n)
			}

			// Allowed, with a secret argument that the audit redacts.
			res, err := alice.CallTool(ctx, "files__echo", map[string]any{"text": "hunter2"})
			if err != nil || res.IsError {
				t.Fatalf("allowed call: %+v %v", res, err)
			}
			if _, err := bot.CallTool(ctx, "weather__secret", map[string]any{}); err != nil {
				t.Fatal(err)
			}
			if e.counted.count("tools/call echo") != 1 || e.counted.count("tools/call secret") != 1 {
				t.Errorf("upstream calls: %v", e.counted.n)
			}

			all := storetest.Collect(t, e.store, audit.Filter{})
			if len(all) != 5 {
				t.Fatalf("%d audit records, want 5: %+v", len(all), all)
			}
			byTool := map[string]*audit.Record{}
			for _, r := range all {
				byTool[r.Identity+" "+r.Tool] = r
				if r.Era != version || r.Transport != "http" || r.RequestID == "" {
					t.Errorf("record without its origin: %+v", r)
				}
			}
			ok := byTool["api_key:alice files__echo"]
			if ok == nil || ok.Outcome != audit.OutcomeOK || ok.Persona != "analyst" || ok.Upstream != "files" || ok.ContentBlocks != 1 ||
				ok.ResponseBytes == 0 || !strings.Contains(string(ok.Arguments), `"text":"[redacted]"`) || strings.Contains(string(ok.Arguments), "hunter2") {
				t.Errorf("allowed call's record: %+v (arguments %s)", ok, ok.Arguments)
			}
			if d := byTool["api_key:alice files__secret"]; d == nil || d.Outcome != audit.OutcomeDenied || !strings.Contains(d.Error, "tools.deny") {
				t.Errorf("denied call's record: %+v", d)
			}
			if d := byTool["anonymous files__echo"]; d == nil || d.Outcome != audit.OutcomeDenied {
				t.Errorf("anonymous call's record: %+v", d)
			}
			if d := byTool["api_key:alice mem://weather/doc"]; d == nil || d.Outcome != audit.OutcomeDenied || d.Method != mcp.MethodReadResource {
				t.Errorf("denied read's record: %+v", d)
			}
			if rep, err := e.store.Verify(ctx); err != nil || rep.Break != nil {
				t.Errorf("verify: %+v %v", rep, err)
			}
		})
	}
}

func TestRateLimitedCallIsRefusedWithGuidanceAndAudited(t *testing.T) {
	lim, err := ratelimit.New(ratelimit.Config{Tools: map[string]ratelimit.Limit{"weather__echo": ratelimit.PerMinute(1, 1)}})
	if err != nil {
		t.Fatal(err)
	}
	e := newTrustEnv(t, lim)
	bot := e.as(t, e.botKey, mcp.Version20251125)
	ctx := context.Background()
	if res, err := bot.CallTool(ctx, "weather__echo", map[string]any{"text": "1"}); err != nil || res.IsError {
		t.Fatalf("first call: %+v %v", res, err)
	}
	res, err := bot.CallTool(ctx, "weather__echo", map[string]any{"text": "2"})
	if client.CodeOf(err) != client.CodeToolError || res == nil || !res.IsError || !strings.Contains(testmcp.Text(res), "rate limited") {
		t.Fatalf("second call: %+v %v", res, err)
	}
	g, gerr := res.Meta.RetryGuidance()
	if gerr != nil || g == nil || !g.CanRetry || g.RetryAfterMs <= 0 || g.RetryAfterMs > 60_000 {
		t.Errorf("retry guidance: %+v", g)
	}
	if n := e.counted.count("tools/call echo"); n != 1 {
		t.Errorf("the limited call reached the upstream: %d calls", n)
	}
	if res, err := bot.CallTool(ctx, "files__echo", map[string]any{"text": "3"}); err != nil || res.IsError {
		t.Errorf("another tool is not limited: %+v %v", res, err)
	}
	limited := storetest.Collect(t, e.store, audit.Filter{Outcome: audit.OutcomeRateLimited})
	if len(limited) != 1 || limited[0].Tool != "weather__echo" || limited[0].Persona != "ops" {
		t.Errorf("rate-limited records: %+v", limited)
	}
}

// failingStore is an audit store whose appends fail.
type failingStore struct{ audit.Store }

func (failingStore) Append(context.Context, *audit.Record) error { return errors.New("disk full") }
func (failingStore) Query(context.Context, audit.Filter) iter.Seq2[*audit.Record, error] {
	return func(func(*audit.Record, error) bool) {}
}

func TestUnauditableCallIsWithheld(t *testing.T) {
	up := &callCounter{n: map[string]int{}}
	g := newGateway(t, gateway.Config{Upstreams: []gateway.Upstream{{Name: "files", Server: countedEcho("files", up)}}},
		gateway.WithAudit(failingStore{}))
	c := downstream(t, g)
	_, err := c.CallTool(context.Background(), "files__echo", map[string]any{"text": "x"})
	if client.CodeOf(err) != client.CodeJSONRPC || !strings.Contains(err.Error(), "audit trail") {
		t.Fatalf("a call the audit could not record was answered: %v", err)
	}
	if v, ok := value(scrape(t, g), "toolwire_gateway_audit_errors_total", nil); !ok || v != 1 {
		t.Errorf("audit errors counted: %v %v", v, ok)
	}
}

func TestPolicyReloadChangesWhatCallersSee(t *testing.T) {
	e := newTrustEnv(t, nil)
	changed := make(chan struct{}, 8)
	h := http.Header{"Authorization": {"Bearer " + e.aliceKey}}
	alice, err := client.Connect(context.Background(), &client.HTTP{URL: e.url, Header: h}, client.WithEra(mcp.EraLegacy),
		client.WithNotificationHandler(func(method string, _ json.RawMessage) {
			if method == mcp.NotificationToolsListChanged {
				select {
				case changed <- struct{}{}:
				default:
				}
			}
		}))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = alice.Close() })
	var wide *policy.Policy
	wide, err = policy.New([]policy.Persona{{Name: "all", Match: policy.Match{Identities: []string{"alice"}}, Tools: policy.Rules{Allow: []string{"*"}}}})
	if err != nil {
		t.Fatal(err)
	}
	// A notification sent before the client's standalone stream is open is
	// lost, so the personas change back and forth until one arrives.
	narrow, wider := e.cfg, e.cfg
	wider.Policy = wide
	got := false
	for i := 0; i < 100 && !got; i++ {
		if err = e.g.Reload(narrow); err != nil {
			t.Fatal(err)
		}
		if err = e.g.Reload(wider); err != nil {
			t.Fatal(err)
		}
		select {
		case <-changed:
			got = true
		case <-time.After(100 * time.Millisecond):
		}
	}
	if !got {
		t.Fatal("no tools/list_changed after the personas changed")
	}
	if got := testmcp.ToolNames(t, alice); !slices.Equal(got, []string{"files__echo", "files__secret", "weather__echo", "weather__secret"}) {
		t.Errorf("after reload alice sees %v", got)
	}
}

func TestEnrichmentAddsContextAndNeverFailsACall(t *testing.T) {
	e, err := enrich.New([]enrich.Rule{
		{Name: "owner", Tools: []string{"files__*"}, When: `args.text != "plain"`,
			Text: []string{"Owned by the data team ({{.caller.identity}}, {{.caller.persona}})"}, Structured: map[string]string{"owner": `"data-team"`}},
		{Name: "broken", Tools: []string{"files__echo"}, Text: []string{`{{len 3}}`}},
	})
	if err != nil {
		t.Fatal(err)
	}
	up := &callCounter{n: map[string]int{}}
	g := newGateway(t, gateway.Config{Upstreams: []gateway.Upstream{{Name: "files", Server: countedEcho("files", up)}}, Enrich: e})
	c := downstream(t, g)
	ctx := context.Background()
	res, err := c.CallTool(ctx, "files__echo", map[string]any{"text": "{{.caller.identity}}"})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Content) != 2 || testmcp.Text(res) != `{"echo":"{{.caller.identity}}","from":"files"}Owned by the data team (anonymous, )` {
		t.Errorf("enriched content: %q (%d blocks)", testmcp.Text(res), len(res.Content))
	}
	if !strings.Contains(string(res.StructuredContent), `"owner":"data-team"`) || !strings.Contains(string(res.StructuredContent), `"echo":"{{.caller.identity}}"`) {
		t.Errorf("enriched structuredContent: %s", res.StructuredContent)
	}
	res, err = c.CallTool(ctx, "files__echo", map[string]any{"text": "plain"})
	if err != nil || len(res.Content) != 1 || strings.Contains(string(res.StructuredContent), "owner") {
		t.Errorf("a rule whose condition is false added something: %+v %v", res, err)
	}
	if v, ok := value(scrape(t, g), "toolwire_gateway_enrichment_failures_total", nil); !ok || v != 2 {
		t.Errorf("the failing rule counted %v times, want 2", v)
	}
}

// TestCancelledCallIsAuditedAsCancelled: a call its caller cancels is in
// the trail as cancelled, the outcome the metrics count it under, not as a
// protocol error.
func TestCancelledCallIsAuditedAsCancelled(t *testing.T) {
	started := make(chan struct{}, 1)
	up := server.New(mcp.Implementation{Name: "slow", Version: "1"})
	must(server.AddTool(up, &mcp.Tool{Name: "wait", Description: "runs until cancelled"}, func(ctx context.Context, _ *server.CallRequest, _ struct{}) (string, error) {
		started <- struct{}{}
		<-ctx.Done()
		return "", ctx.Err()
	}))
	store, err := sqlite.Open(filepath.Join(t.TempDir(), "audit.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = store.Close() })
	g := newGateway(t, gateway.Config{Upstreams: []gateway.Upstream{{Name: "slow", Server: up}}}, gateway.WithAudit(store))
	c := downstream(t, g)
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		<-started
		cancel()
	}()
	if _, err := c.CallTool(ctx, "slow__wait", nil); err == nil {
		t.Fatal("the cancelled call returned a result")
	}
	var recs []*audit.Record
	testwait.WaitFor(t, "the cancelled call's audit record", func() bool {
		recs = storetest.Collect(t, store, audit.Filter{Tool: "slow__wait"})
		return len(recs) > 0
	})
	if len(recs) != 1 || recs[0].Outcome != audit.OutcomeCancelled {
		t.Fatalf("audit records of the cancelled call: %+v", recs)
	}
}
