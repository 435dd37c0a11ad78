package gateway_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/toolwire/toolwire/auth"
	"github.com/toolwire/toolwire/client"
	"github.com/toolwire/toolwire/gateway"
	"github.com/toolwire/toolwire/internal/testmcp"
	"github.com/toolwire/toolwire/internal/testwait"
	"github.com/toolwire/toolwire/mcp"
	"github.com/toolwire/toolwire/server"
	"github.com/toolwire/toolwire/transport/streamable"
)

// stateServer is an upstream that shows each session's own state: who
// answers its session, log level and the roots its client gives; later logs
// text on the session.
func stateServer() *server.Server {
	s := server.New(mcp.Implementation{Name: "state", Version: "1"})
	must(server.AddTool(s, &mcp.Tool{Name: "who"}, func(ctx context.Context, req *server.CallRequest, _ struct{}) (*mcp.CallToolResult, error) {
		var uris []string
		if req.Peer.ClientCapabilities.Roots != nil {
			roots, err := req.ListRoots(ctx)
			if err != nil {
				return nil, err
			}
			for _, r := range roots.Roots {
				uris = append(uris, r.URI)
			}
		}
		msg := fmt.Sprintf("session=%p level=%s roots=%s", req.Session(), req.LogLevel(), strings.Join(uris, ","))
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: msg}}}, nil
	}))
	must(server.AddTool(s, &mcp.Tool{Name: "later"}, func(_ context.Context, req *server.CallRequest, in struct {
		Text string `json:"text"`
	}) (struct{}, error) {
		ss := req.Session()
		go func() { _ = ss.Log(context.Background(), mcp.LevelError, "later", in.Text) }()
		return struct{}{}, nil
	}))
	must(server.AddTool(s, &mcp.Tool{Name: "ask"}, func(ctx context.Context, req *server.CallRequest, _ struct{}) (*mcp.CallToolResult, error) {
		res, err := req.Elicit(ctx, &mcp.ElicitParams{Message: "who are you?", RequestedSchema: json.RawMessage(`{"type":"object","properties":{"name":{"type":"string"}}}`)})
		if err != nil {
			return nil, err
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprintf("answer=%v", res.Content["name"])}}}, nil
	}))
	must(server.AddResource(s, &mcp.Resource{URI: "mem://state/doc", Name: "doc"},
		func(_ context.Context, req *server.ResourceRequest) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{Contents: []mcp.ResourceContents{&mcp.TextResourceContents{URI: req.URI, Text: "doc"}}}, nil
		}))
	must(server.AddTool(s, &mcp.Tool{Name: "touch"}, func(context.Context, *server.CallRequest, struct{}) (struct{}, error) {
		s.NotifyResourceUpdated("mem://state/doc") // to every session subscribed to it
		return struct{}{}, nil
	}))
	return s
}

// logSink collects the log messages a downstream client receives.
type logSink struct {
	mu   sync.Mutex
	data []string
}

func (l *logSink) handle(m client.LogMessage) {
	l.mu.Lock()
	l.data = append(l.data, string(m.Data))
	l.mu.Unlock()
}

func (l *logSink) all() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Join(l.data, "\n")
}

func callText(t *testing.T, c *client.Client, tool string, args any) string {
	t.Helper()
	res, err := c.CallTool(testwait.Context(t), tool, args)
	if err != nil {
		t.Fatal(err)
	}
	if res.IsError {
		t.Fatalf("%s: isError: %s", tool, testmcp.Text(res))
	}
	return testmcp.Text(res)
}

// field is the value of key=value in s.
func field(s, key string) string {
	for _, f := range strings.Fields(s) {
		if v, ok := strings.CutPrefix(f, key+"="); ok {
			return v
		}
	}
	return ""
}

// TestPerClientSessionsKeepCallersApart: behind a per_client upstream each
// downstream session has an upstream session of its own, which sees that
// caller's roots and log level (a later logging/setLevel too), and whose
// log messages reach that caller only; behind a shared one both callers
// meet in one session.
func TestPerClientSessionsKeepCallersApart(t *testing.T) {
	g := newGateway(t, gateway.Config{Upstreams: []gateway.Upstream{
		{Name: "own", Server: stateServer(), Sessions: gateway.SessionsPerClient, MaxSessions: 4},
		{Name: "all", Server: stateServer()},
	}}, gateway.WithClientOptions(client.WithEra(mcp.EraLegacy))) // upstream sessions with state

	ctx := testwait.Context(t)
	var logA, logB logSink
	// 2025-11-25 callers: one downstream session each.
	a := downstream(t, g, client.WithEra(mcp.EraLegacy), client.WithRoots(mcp.Root{URI: "file:///a"}), client.WithLogHandler(logA.handle))
	b := downstream(t, g, client.WithEra(mcp.EraLegacy), client.WithRoots(mcp.Root{URI: "file:///b"}), client.WithLogHandler(logB.handle))
	if err := a.SetLogLevel(ctx, mcp.LevelDebug); err != nil {
		t.Fatal(err)
	}
	if err := b.SetLogLevel(ctx, mcp.LevelError); err != nil {
		t.Fatal(err)
	}

	whoA, whoB := callText(t, a, "own__who", nil), callText(t, b, "own__who", nil)
	if field(whoA, "level") != "debug" || field(whoA, "roots") != "file:///a" {
		t.Errorf("A's session: %s", whoA)
	}
	if field(whoB, "level") != "error" || field(whoB, "roots") != "file:///b" {
		t.Errorf("B's session: %s", whoB)
	}
	if field(whoA, "session") == field(whoB, "session") {
		t.Errorf("A and B share an upstream session: %s, %s", whoA, whoB)
	}
	if open, started, _ := g.ClientSessions("own"); open != 2 || started != 2 {
		t.Errorf("sessions open %d, started %d; want 2, 2", open, started)
	}
	rec := httptest.NewRecorder()
	g.MetricsHandler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	for _, want := range []string{
		`toolwire_gateway_upstream_client_sessions{upstream="own"} 2`,
		`toolwire_gateway_upstream_client_sessions_started_total{upstream="own"} 2`,
		`toolwire_gateway_upstream_client_sessions_reaped_total{upstream="own"} 0`,
	} {
		if !strings.Contains(rec.Body.String(), want) {
			t.Errorf("metrics lack %s", want)
		}
	}
	if strings.Contains(rec.Body.String(), `client_sessions{upstream="all"}`) {
		t.Error("a shared upstream reported per-client sessions")
	}
	// A later level reaches the caller's session only.
	if err := a.SetLogLevel(ctx, mcp.LevelWarning); err != nil {
		t.Fatal(err)
	}
	if got := field(callText(t, a, "own__who", nil), "level"); got != "warning" {
		t.Errorf("A's level after logging/setLevel: %s", got)
	}
	if got := callText(t, b, "own__who", nil); got != whoB {
		t.Errorf("B's session changed: %s, was %s", got, whoB)
	}

	// Each session's log messages reach its own caller.
	callText(t, a, "own__later", map[string]any{"text": "for-A"})
	callText(t, b, "own__later", map[string]any{"text": "for-B"})
	testwait.WaitFor(t, "each caller's log message", func() bool {
		return strings.Contains(logA.all(), "for-A") && strings.Contains(logB.all(), "for-B")
	})
	if strings.Contains(logA.all(), "for-B") || strings.Contains(logB.all(), "for-A") {
		t.Errorf("a log message crossed callers: A got %q, B got %q", logA.all(), logB.all())
	}

	// Shared, as before: one session, the first caller's state.
	sharedA, sharedB := callText(t, a, "all__who", nil), callText(t, b, "all__who", nil)
	if field(sharedA, "session") != field(sharedB, "session") {
		t.Errorf("shared upstream: two sessions: %s, %s", sharedA, sharedB)
	}
	if open, started, reaped := g.ClientSessions("all"); open+int(started)+int(reaped) != 0 {
		t.Errorf("shared upstream reports per-client sessions: %d %d %d", open, started, reaped)
	}

	// Closing a downstream session closes its upstream session.
	_ = b.Close()
	testwait.WaitFor(t, "B's upstream session closed", func() bool {
		open, _, reaped := g.ClientSessions("own")
		return open == 1 && reaped == 1
	})
}

// TestPerClientSessionsByCallerIdentity: stateless 2026-07-28 callers get a
// per-client session by identity: two connections of one principal share
// one, another principal has its own, and anonymous callers share one.
func TestPerClientSessionsByCallerIdentity(t *testing.T) {
	g := newGateway(t, gateway.Config{Upstreams: []gateway.Upstream{
		{Name: "own", Server: stateServer(), Sessions: gateway.SessionsPerClient},
	}}, gateway.WithClientOptions(client.WithEra(mcp.EraLegacy)))
	as := func(p *auth.Principal) *client.Client {
		return downstreamAs(t, g, p, client.WithEra(mcp.EraModern))
	}
	alice := &auth.Principal{Issuer: "https://issuer.test", Subject: "alice"}
	bob := &auth.Principal{Issuer: "https://issuer.test", Subject: "bob"}
	session := func(c *client.Client) string { return field(callText(t, c, "own__who", nil), "session") }
	alice1, alice2, bobs := session(as(alice)), session(as(alice)), session(as(bob))
	anon1, anon2 := session(as(nil)), session(as(nil))
	if alice1 != alice2 || anon1 != anon2 {
		t.Errorf("one identity, two sessions: alice %s %s, anonymous %s %s", alice1, alice2, anon1, anon2)
	}
	if alice1 == bobs || alice1 == anon1 || bobs == anon1 {
		t.Errorf("identities share a session: alice %s, bob %s, anonymous %s", alice1, bobs, anon1)
	}
	if open, started, _ := g.ClientSessions("own"); open != 3 || started != 3 {
		t.Errorf("open %d, started %d; want 3, 3", open, started)
	}
}

// TestPerClientSessionsOverHTTP: a Streamable HTTP upstream with
// per_client sessions opens one HTTP session per caller, which sees that
// caller's roots and log level and whose questions (elicitation) that
// caller answers.
func TestPerClientSessionsOverHTTP(t *testing.T) {
	h := streamable.NewHandler(stateServer())
	hs := httptest.NewServer(h)
	t.Cleanup(func() { hs.Close(); h.Close() })
	g := newGateway(t, gateway.Config{Upstreams: []gateway.Upstream{
		{Name: "web", URL: hs.URL + "/mcp", Sessions: gateway.SessionsPerClient, MaxSessions: 2},
	}}, gateway.WithClientOptions(client.WithEra(mcp.EraLegacy)))
	ctx := testwait.Context(t)
	caller := func(name string) *client.Client {
		c := downstream(t, g, client.WithEra(mcp.EraLegacy), client.WithRoots(mcp.Root{URI: "file:///" + name}),
			client.WithElicitationHandler(func(context.Context, *mcp.ElicitParams) (*mcp.ElicitResult, error) {
				return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"name": name}}, nil
			}))
		if err := c.SetLogLevel(ctx, mcp.LoggingLevel(map[string]string{"a": "info", "b": "critical"}[name])); err != nil {
			t.Fatal(err)
		}
		return c
	}
	a, b := caller("a"), caller("b")
	whoA, whoB := callText(t, a, "web__who", nil), callText(t, b, "web__who", nil)
	if field(whoA, "roots") != "file:///a" || field(whoA, "level") != "info" || field(whoB, "roots") != "file:///b" || field(whoB, "level") != "critical" ||
		field(whoA, "session") == field(whoB, "session") {
		t.Errorf("A: %s; B: %s", whoA, whoB)
	}
	if got := callText(t, a, "web__ask", nil); got != "answer=a" {
		t.Errorf("A's question answered %s", got)
	}
	if got := callText(t, b, "web__ask", nil); got != "answer=b" {
		t.Errorf("B's question answered %s", got)
	}
	if open, started, _ := g.ClientSessions("web"); open != 2 || started != 2 {
		t.Errorf("open %d, started %d; want 2, 2", open, started)
	}
}

// TestPerClientSubscriptions: a caller's resources/subscribe reaches its
// own per-client session only, and that session's updates reach that
// caller only; its session, holding a subscription, is not closed as idle.
func TestPerClientSubscriptions(t *testing.T) {
	g := newGateway(t, gateway.Config{Upstreams: []gateway.Upstream{
		{Name: "own", Server: stateServer(), Sessions: gateway.SessionsPerClient, IdleTimeout: time.Millisecond},
	}}, gateway.WithClientOptions(client.WithEra(mcp.EraLegacy)))
	ctx := testwait.Context(t)
	updatesA, updatesB := make(chan string, 16), make(chan string, 16)
	a := downstream(t, g, client.WithEra(mcp.EraLegacy), client.WithResourceUpdatedHandler(func(uri string) { updatesA <- uri }))
	b := downstream(t, g, client.WithEra(mcp.EraLegacy), client.WithResourceUpdatedHandler(func(uri string) { updatesB <- uri }))
	callText(t, b, "own__who", nil) // B has a session too, not subscribed
	if err := a.Subscribe(ctx, "mem://state/doc"); err != nil {
		t.Fatal(err)
	}
	// The upstream tells every session subscribed to the document: A's.
	for _, c := range []*client.Client{a, b} {
		callText(t, c, "own__touch", nil)
		if got := testwait.Recv(t, updatesA, "A's update"); got != "mem://state/doc" {
			t.Errorf("A's update: %s", got)
		}
	}
	select {
	case uri := <-updatesB:
		t.Errorf("B got an update of %s", uri)
	default:
	}
	// B's idle session closes; A's, subscribed, stays.
	testwait.WaitFor(t, "B's idle session closed", func() bool {
		open, _, _ := g.ClientSessions("own")
		return open == 1
	})
	callText(t, a, "own__touch", nil)
	testwait.Recv(t, updatesA, "A's second update")
}
