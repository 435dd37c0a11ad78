package gateway_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/toolwire/toolwire/client"
	"github.com/toolwire/toolwire/gateway"
	"github.com/toolwire/toolwire/internal/testwait"
	"github.com/toolwire/toolwire/mcp"
	"github.com/toolwire/toolwire/otc"
	"github.com/toolwire/toolwire/server"
	"github.com/toolwire/toolwire/transport/streamable"
)

// seen is what the probe tool of an upstream saw of the trace context.
type seen struct {
	Meta   string `json:"meta"`   // params._meta.traceparent
	Header string `json:"header"` // the HTTP traceparent header
}

// probeServer is echoServer with a tool probe, which answers what trace
// context reached it, and a tool fail, which fails (isError).
func probeServer(name string) *server.Server {
	s := echoServer(name)
	must(server.AddTool(s, &mcp.Tool{Name: "probe"}, func(ctx context.Context, _ *server.CallRequest, _ struct{}) (seen, error) {
		r := server.RequestFrom(ctx)
		var p struct {
			Meta struct {
				Traceparent string `json:"traceparent"`
			} `json:"_meta"`
		}
		_ = json.Unmarshal(r.Params, &p)
		return seen{Meta: p.Meta.Traceparent, Header: r.Header().Get("traceparent")}, nil
	}))
	must(server.AddTool(s, &mcp.Tool{Name: "fail"}, func(context.Context, *server.CallRequest, struct{}) (struct{}, error) {
		return struct{}{}, errors.New("it failed")
	}))
	return s
}

// serveHTTP serves s over Streamable HTTP on a loopback port until the
// test ends; it returns the endpoint.
func serveHTTP(t *testing.T, s *server.Server) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	return serveHTTPOn(t, ln, s, nil)
}

// serveHTTPOn serves s over Streamable HTTP on ln until the test ends,
// counting in conns (when not nil) every connection it accepts; it
// returns the endpoint.
func serveHTTPOn(t *testing.T, ln net.Listener, s *server.Server, conns *atomic.Int64) string {
	t.Helper()
	h := streamable.NewHandler(s)
	srv := &http.Server{Handler: h}
	if conns != nil {
		srv.ConnState = func(_ net.Conn, s http.ConnState) {
			if s == http.StateNew {
				conns.Add(1)
			}
		}
	}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = h.Shutdown(ctx)
		_ = srv.Shutdown(ctx)
	})
	return "http://" + ln.Addr().String() + "/mcp"
}

// spanRecorder returns a tracer provider exporting synchronously to memory.
func spanRecorder(t *testing.T) (*sdktrace.TracerProvider, *tracetest.InMemoryExporter) {
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	return tp, exp
}

// span waits for the ended span of that name and kind.
func span(t *testing.T, exp *tracetest.InMemoryExporter, name string, kind trace.SpanKind) tracetest.SpanStub {
	t.Helper()
	var found tracetest.SpanStub
	testwait.WaitFor(t, "span "+name, func() bool {
		for _, s := range exp.GetSpans() {
			if s.Name == name && s.SpanKind == kind {
				found = s
				return true
			}
		}
		return false
	})
	return found
}

func attr(s tracetest.SpanStub, key string) string {
	for _, kv := range s.Attributes {
		if string(kv.Key) == key {
			return kv.Value.String()
		}
	}
	return ""
}

// wantAttrs checks attributes by key ("" means absent).
func wantAttrs(t *testing.T, s tracetest.SpanStub, want map[string]string) {
	t.Helper()
	for k, v := range want {
		if got := attr(s, k); got != v {
			t.Errorf("span %q: %s = %q, want %q (all: %v)", s.Name, k, got, v, s.Attributes)
		}
	}
}

func traceparent(sc trace.SpanContext) string {
	return fmt.Sprintf("00-%s-%s-%s", sc.TraceID(), sc.SpanID(), sc.TraceFlags())
}

func probe(t *testing.T, raw json.RawMessage) seen {
	t.Helper()
	var res struct {
		StructuredContent seen `json:"structuredContent"`
		IsError           bool `json:"isError"`
	}
	if err := json.Unmarshal(raw, &res); err != nil || res.IsError {
		t.Fatalf("probe: %v %s", err, raw)
	}
	return res.StructuredContent
}

// TestTraceInProcessUpstream: a downstream tools/call makes a SERVER span
// (the gateway serving it) and a CLIENT span (the gateway calling the
// upstream), its child in the same trace, described by the MCP semantic
// conventions; the upstream gets the CLIENT span's context in _meta.
func TestTraceInProcessUpstream(t *testing.T) {
	tp, exp := spanRecorder(t)
	g := newGateway(t, gateway.Config{Upstreams: []gateway.Upstream{{Name: "mem", Server: probeServer("mem")}}},
		gateway.WithTracerProvider(tp))
	c := downstream(t, g)
	ctx := context.Background()
	exp.Reset() // what the connection did
	raw, err := c.Call(ctx, mcp.MethodCallTool, map[string]any{"name": "mem__probe", "arguments": map[string]any{}})
	if err != nil {
		t.Fatal(err)
	}
	got := probe(t, raw)

	srv := span(t, exp, "tools/call mem__probe", trace.SpanKindServer)
	cli := span(t, exp, "tools/call probe", trace.SpanKindClient)
	if srv.Parent.IsValid() {
		t.Errorf("server span has a parent %v: the downstream sent none", srv.Parent)
	}
	if cli.Parent.SpanID() != srv.SpanContext.SpanID() || cli.SpanContext.TraceID() != srv.SpanContext.TraceID() {
		t.Errorf("client span %v (parent %v) is not the child of the server span %v", cli.SpanContext, cli.Parent, srv.SpanContext)
	}
	if want := traceparent(cli.SpanContext); got.Meta != want {
		t.Errorf("upstream _meta traceparent %q, want %q (the client span)", got.Meta, want)
	}
	wantAttrs(t, srv, map[string]string{
		"mcp.method.name": "tools/call", "gen_ai.tool.name": "mem__probe", "gen_ai.operation.name": "execute_tool",
		"toolwire.gateway.upstream": "mem", "mcp.protocol.version": mcp.LatestVersion, "error.type": "",
	})
	if attr(srv, "jsonrpc.request.id") == "" {
		t.Errorf("server span without jsonrpc.request.id: %v", srv.Attributes)
	}
	wantAttrs(t, cli, map[string]string{
		"mcp.method.name": "tools/call", "gen_ai.tool.name": "probe", "gen_ai.operation.name": "execute_tool",
		"toolwire.gateway.upstream": "mem", "network.transport": "", "error.type": "",
	})
	if srv.Status.Code == codes.Error || cli.Status.Code == codes.Error {
		t.Errorf("status %v / %v for a call that succeeded", srv.Status, cli.Status)
	}

	// resources/read names its URI, and the span name leaves it out.
	exp.Reset()
	if _, err := c.ReadResource(ctx, "mem://mem/doc"); err != nil {
		t.Fatal(err)
	}
	wantAttrs(t, span(t, exp, "resources/read", trace.SpanKindServer), map[string]string{"mcp.resource.uri": "mem://mem/doc", "gen_ai.operation.name": ""})
	wantAttrs(t, span(t, exp, "resources/read", trace.SpanKindClient), map[string]string{"mcp.resource.uri": "mem://mem/doc"})

	// The upstream session's own traffic (lists, pings) is not traced:
	// every client span belongs to a downstream request.
	for _, s := range exp.GetSpans() {
		if s.SpanKind == trace.SpanKindClient && !s.Parent.IsValid() {
			t.Errorf("client span %q outside any downstream request", s.Name)
		}
	}
}

// TestTraceHTTPUpstream: a downstream request whose _meta carries a
// traceparent continues that trace; the HTTP upstream gets the CLIENT
// span's context both in _meta and in the traceparent header.
func TestTraceHTTPUpstream(t *testing.T) {
	tp, exp := spanRecorder(t)
	url := serveHTTP(t, probeServer("web"))
	g := newGateway(t, gateway.Config{Upstreams: []gateway.Upstream{{Name: "web", URL: url}}}, gateway.WithTracerProvider(tp))
	c := downstream(t, g)
	const incoming = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	raw, err := c.Call(context.Background(), mcp.MethodCallTool, map[string]any{
		"name": "web__probe", "arguments": map[string]any{}, "_meta": map[string]any{"traceparent": incoming},
	})
	if err != nil {
		t.Fatal(err)
	}
	got := probe(t, raw)

	srv := span(t, exp, "tools/call web__probe", trace.SpanKindServer)
	cli := span(t, exp, "tools/call probe", trace.SpanKindClient)
	if srv.SpanContext.TraceID().String() != "4bf92f3577b34da6a3ce929d0e0e4736" || srv.Parent.SpanID().String() != "00f067aa0ba902b7" || !srv.Parent.IsRemote() {
		t.Errorf("server span %v, parent %v: want the incoming traceparent's trace and span as remote parent", srv.SpanContext, srv.Parent)
	}
	if cli.Parent.SpanID() != srv.SpanContext.SpanID() || cli.SpanContext.TraceID() != srv.SpanContext.TraceID() {
		t.Errorf("client span %v (parent %v) is not the child of the server span %v", cli.SpanContext, cli.Parent, srv.SpanContext)
	}
	want := traceparent(cli.SpanContext)
	if got.Meta != want || got.Header != want {
		t.Errorf("upstream saw _meta %q and header %q, want both %q", got.Meta, got.Header, want)
	}
	port := url[strings.LastIndex(url, ":")+1 : strings.LastIndex(url, "/")]
	wantAttrs(t, cli, map[string]string{
		"network.transport": "tcp", "network.protocol.name": "http", "server.address": "127.0.0.1", "server.port": port,
		"toolwire.gateway.upstream": "web",
	})
}

// TestTraceHTTPHeaderParent: over HTTP, a downstream request without a
// _meta traceparent takes the HTTP traceparent header as parent.
func TestTraceHTTPHeaderParent(t *testing.T) {
	tp, exp := spanRecorder(t)
	g := newGateway(t, gateway.Config{Upstreams: []gateway.Upstream{{Name: "mem", Server: probeServer("mem")}}}, gateway.WithTracerProvider(tp))
	ts := httptest.NewServer(g.Handler())
	defer ts.Close()
	const incoming = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
	ctx := context.Background()
	c, err := client.Connect(ctx, &client.HTTP{URL: ts.URL})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	exp.Reset()
	if _, err := c.CallTool(client.ContextWithHeader(ctx, http.Header{"Traceparent": {incoming}}), "mem__echo", map[string]any{"text": "hi"}); err != nil {
		t.Fatal(err)
	}
	srv := span(t, exp, "tools/call mem__echo", trace.SpanKindServer)
	if traceparent(srv.Parent) != incoming {
		t.Errorf("server span's parent %v, want the header's %s", srv.Parent, incoming)
	}
	wantAttrs(t, srv, map[string]string{"network.transport": "tcp", "network.protocol.name": "http", "client.address": "127.0.0.1"})
}

// TestTraceErrors: a tool's isError result and an upstream's JSON-RPC
// error mark both spans failed, with error.type as the conventions say.
func TestTraceErrors(t *testing.T) {
	tp, exp := spanRecorder(t)
	g := newGateway(t, gateway.Config{Upstreams: []gateway.Upstream{{Name: "mem", Server: probeServer("mem")}}}, gateway.WithTracerProvider(tp))
	c := downstream(t, g)
	ctx := context.Background()
	res, err := c.CallTool(ctx, "mem__fail", nil)
	if err == nil && !res.IsError {
		t.Fatalf("mem__fail: %+v", res)
	}
	for _, s := range []tracetest.SpanStub{
		span(t, exp, "tools/call mem__fail", trace.SpanKindServer),
		span(t, exp, "tools/call fail", trace.SpanKindClient),
	} {
		wantAttrs(t, s, map[string]string{"error.type": "tool_error"})
		if s.Status.Code != codes.Error {
			t.Errorf("span %q: status %v, want Error", s.Name, s.Status)
		}
	}

	// greet requires "who": the upstream answers -32602.
	if _, err := c.GetPrompt(ctx, "mem__greet", nil); err == nil {
		t.Fatal("prompts/get without its required argument succeeded")
	}
	for _, s := range []tracetest.SpanStub{
		span(t, exp, "prompts/get mem__greet", trace.SpanKindServer),
		span(t, exp, "prompts/get greet", trace.SpanKindClient),
	} {
		wantAttrs(t, s, map[string]string{"error.type": "-32602", "rpc.response.status_code": "-32602"})
		if s.Status.Code != codes.Error || s.Status.Description == "" {
			t.Errorf("span %q: status %v, want Error with the error's message", s.Name, s.Status)
		}
	}
	wantAttrs(t, span(t, exp, "prompts/get greet", trace.SpanKindClient), map[string]string{"gen_ai.prompt.name": "greet"})
}

// TestTraceOff: without WithTracerProvider nothing is propagated.
func TestTraceOff(t *testing.T) {
	g := newGateway(t, gateway.Config{Upstreams: []gateway.Upstream{{Name: "web", URL: serveHTTP(t, probeServer("web"))}}})
	c := downstream(t, g)
	raw, err := c.Call(context.Background(), mcp.MethodCallTool, map[string]any{
		"name": "web__probe", "arguments": map[string]any{},
		"_meta": map[string]any{"traceparent": "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"},
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := probe(t, raw); got != (seen{}) {
		t.Fatalf("upstream saw %+v with tracing off", got)
	}
}

// TestTraceOTC: an OTC call's trace_id (over otc_listen's handler on the
// gateway's server) is the trace the spans and the upstream's _meta
// traceparent carry.
func TestTraceOTC(t *testing.T) {
	tp, exp := spanRecorder(t)
	g := newGateway(t, gateway.Config{Upstreams: []gateway.Upstream{{Name: "mem", Server: probeServer("mem")}}}, gateway.WithTracerProvider(tp))
	h, err := otc.NewHandler(otc.NewServerBackend(g.Server()))
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(h)
	defer ts.Close()
	oc, err := otc.NewClient(ts.URL)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	tools, err := oc.ListTools(ctx)
	if err != nil {
		t.Fatal(err)
	}
	id := ""
	for _, tl := range tools {
		if strings.HasSuffix(tl.Name, "mem__probe") {
			id = tl.ID
		}
	}
	if id == "" {
		t.Fatalf("OTC tools: %+v", tools)
	}
	const traceID = "5B8EFFF798038103D269B633813FC60C" // upper case is read too
	res, err := oc.CallRequest(ctx, &otc.CallToolRequest{ToolID: id, TraceID: traceID, Input: json.RawMessage(`{}`)})
	if err != nil || !res.Success {
		t.Fatalf("OTC call: %v %+v", err, res)
	}
	var got seen
	if err := json.Unmarshal(res.Value, &got); err != nil {
		t.Fatalf("%v: %s", err, res.Value)
	}
	cli := span(t, exp, "tools/call probe", trace.SpanKindClient)
	srv := span(t, exp, "tools/call mem__probe", trace.SpanKindServer)
	lower := strings.ToLower(traceID)
	if srv.SpanContext.TraceID().String() != lower || srv.Parent.SpanID().IsValid() {
		t.Errorf("server span %v (parent %v): want a root span of trace %s", srv.SpanContext, srv.Parent, lower)
	}
	if want := traceparent(cli.SpanContext); got.Meta != want || !strings.HasPrefix(got.Meta, "00-"+lower+"-") {
		t.Errorf("upstream _meta traceparent %q, want %q in trace %s", got.Meta, want, lower)
	}
}
