package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"maps"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strconv"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/toolwire/toolwire"
	"github.com/toolwire/toolwire/client"
	"github.com/toolwire/toolwire/internal/jsonscan"
	"github.com/toolwire/toolwire/internal/wirejson"
	"github.com/toolwire/toolwire/jsonrpc"
	"github.com/toolwire/toolwire/mcp"
	"github.com/toolwire/toolwire/server"
)

// Tracing follows the OpenTelemetry semantic conventions for MCP
// (gen-ai/mcp.md): a SERVER span per downstream request, a CLIENT span per
// upstream request made while serving one, the trace context carried in
// params._meta (traceparent, tracestate) both ways and, to HTTP upstreams,
// in the traceparent header too. Both are middleware, added only when
// WithTracerProvider is given: without it nothing here runs.

// The attributes the spans carry (semantic conventions, and one of ours).
const (
	attrMethod        = attribute.Key("mcp.method.name")
	attrProtocol      = attribute.Key("mcp.protocol.version")
	attrSession       = attribute.Key("mcp.session.id")
	attrResourceURI   = attribute.Key("mcp.resource.uri")
	attrRequestID     = attribute.Key("jsonrpc.request.id")
	attrToolName      = attribute.Key("gen_ai.tool.name")
	attrPromptName    = attribute.Key("gen_ai.prompt.name")
	attrOperation     = attribute.Key("gen_ai.operation.name")
	attrErrorType     = attribute.Key("error.type")
	attrStatusCode    = attribute.Key("rpc.response.status_code")
	attrTransport     = attribute.Key("network.transport")
	attrNetProtocol   = attribute.Key("network.protocol.name")
	attrNetVersion    = attribute.Key("network.protocol.version")
	attrServerAddress = attribute.Key("server.address")
	attrServerPort    = attribute.Key("server.port")
	attrClientAddress = attribute.Key("client.address")
	attrClientPort    = attribute.Key("client.port")
	// attrUpstream names the upstream a request was forwarded to.
	attrUpstream = attribute.Key("toolwire.gateway.upstream")
)

// tracing holds the tracer and the propagator (W3C Trace Context) of a
// gateway whose WithTracerProvider was given.
type tracing struct {
	tracer trace.Tracer
	prop   propagation.TraceContext
}

func newTracing(tp trace.TracerProvider) *tracing {
	return &tracing{tracer: tp.Tracer("github.com/toolwire/toolwire/gateway", trace.WithInstrumentationVersion(toolwire.Version()))}
}

// upstreamKey carries, from the SERVER span's middleware to the upstream
// client's, the upstream a request is routed to (for the CLIENT span's
// attributes: the client middleware is shared by every upstream).
type upstreamKey struct{}

// spanTarget is what a request the gateway does not decide on names for
// its span (a subscription's URI) and its trace context, read strictly.
type spanTarget struct {
	Name *string         `json:"name"`
	URI  *string         `json:"uri"`
	Meta json.RawMessage `json:"_meta"`
}

// spanTargetOf reads a request's name or URI and _meta for its span: the
// parsed target of the four methods the gateway decides on (target.go),
// else what the strict reader finds ("" and nil when it refuses the
// params: the server explains what is wrong).
func spanTargetOf(ctx context.Context, req *jsonrpc.Request) (context.Context, string, json.RawMessage) {
	ctx, tg, _, ok := targetFor(ctx, req)
	if ok {
		if tg == nil {
			return ctx, "", nil
		}
		return ctx, tg.name, tg.meta
	}
	return ctx, paramsName(req.Params), metaOf(req.Params)
}

// paramsName is the name or URI member of params as the strict reader
// reads it, "" when there is none or the params are not exact.
func paramsName(params json.RawMessage) string {
	var st spanTarget
	if len(params) == 0 || wirejson.Unmarshal(params, &st) != nil {
		return ""
	}
	switch {
	case st.Name != nil:
		return *st.Name
	case st.URI != nil:
		return *st.URI
	}
	return ""
}

// metaOf is the _meta member of params, nil when absent or not exact.
func metaOf(params json.RawMessage) json.RawMessage {
	var st spanTarget
	if len(params) == 0 || wirejson.Unmarshal(params, &st) != nil {
		return nil
	}
	return nonNull(st.Meta)
}

// str reads a JSON string, "" for anything else.
func str(raw json.RawMessage) string {
	var s string
	if len(raw) == 0 || wirejson.Unmarshal(raw, &s) != nil {
		return ""
	}
	return s
}

// describe returns the span name ("{mcp.method.name} {target}", the target
// being a tool or prompt name) and the attributes naming what is asked.
func describe(method, target string) (string, []attribute.KeyValue) {
	attrs := make([]attribute.KeyValue, 0, 12)
	attrs = append(attrs, attrMethod.String(method))
	name := method
	switch method {
	case mcp.MethodCallTool:
		if target != "" {
			name += " " + target
			attrs = append(attrs, attrToolName.String(target))
		}
		attrs = append(attrs, attrOperation.String("execute_tool"))
	case mcp.MethodGetPrompt:
		if target != "" {
			name += " " + target
			attrs = append(attrs, attrPromptName.String(target))
		}
	case mcp.MethodReadResource, mcp.MethodSubscribe, mcp.MethodUnsubscribe:
		if target != "" {
			attrs = append(attrs, attrResourceURI.String(target))
		}
	}
	return name, attrs
}

// traceMiddleware is the downstream server's outermost middleware: one
// SERVER span per request. Its parent is the trace context in the request's
// _meta, else the one in the HTTP traceparent header, else whatever ctx
// carries (an OTC call's trace_id); the others, when they differ, become
// links. nil when tracing is off.
func (g *Gateway) traceMiddleware() jsonrpc.Middleware {
	t := g.opts.tracing
	if t == nil {
		return nil
	}
	return func(next jsonrpc.MethodHandler) jsonrpc.MethodHandler {
		return func(ctx context.Context, req *jsonrpc.Request) (any, error) {
			ctx, tname, meta := spanTargetOf(ctx, req)
			name, attrs := describe(req.Method, tname)
			if req.ID.IsValid() {
				attrs = append(attrs, attrRequestID.String(idString(req.ID)))
			}
			var hdr http.Header
			if sr := server.RequestFrom(ctx); sr != nil {
				if v := sr.Peer.ProtocolVersion; v != "" {
					attrs = append(attrs, attrProtocol.String(v))
				}
				if hr := sr.HTTPRequest(); hr != nil {
					hdr = hr.Header
					attrs = append(attrs, httpAttrs(hr)...)
				}
			}
			if u := g.routeOf(req.Method, tname); u != nil {
				attrs = append(attrs, attrUpstream.String(u.spec.Name))
				ctx = context.WithValue(ctx, upstreamKey{}, u)
			}
			ctx, links := t.parent(ctx, meta, hdr)
			ctx, span := t.tracer.Start(ctx, name, trace.WithSpanKind(trace.SpanKindServer),
				trace.WithAttributes(attrs...), trace.WithLinks(links...))
			defer span.End()
			res, err := next(ctx, req)
			switch {
			case err != nil:
				recordError(span, err)
			case res == nil && ctx.Err() != nil:
				recordContextError(span, ctx)
			case req.Method == mcp.MethodCallTool && isToolError(res):
				span.SetAttributes(attrErrorType.String("tool_error"))
				span.SetStatus(codes.Error, "")
			}
			return res, err
		}
	}
}

// parent puts the remote parent of a SERVER span on ctx: the _meta's trace
// context, else the HTTP header's, else ctx's own. The others that are
// valid and differ are returned as links (the conventions: the MCP context
// is the parent, the transport's and the ambient one are links).
func (t *tracing) parent(ctx context.Context, meta json.RawMessage, hdr http.Header) (context.Context, []trace.Link) {
	var fromMeta, fromHeader trace.SpanContext
	if len(meta) > 0 {
		var m map[string]json.RawMessage
		if wirejson.Unmarshal(meta, &m) == nil {
			c := propagation.MapCarrier{}
			for _, k := range t.prop.Fields() {
				if s := str(m[k]); s != "" {
					c[k] = s
				}
			}
			fromMeta = trace.SpanContextFromContext(t.prop.Extract(context.Background(), c))
		}
	}
	if hdr != nil {
		fromHeader = trace.SpanContextFromContext(t.prop.Extract(context.Background(), propagation.HeaderCarrier(hdr)))
	}
	ambient := trace.SpanContextFromContext(ctx)
	var chosen trace.SpanContext
	switch {
	case fromMeta.IsValid():
		chosen = fromMeta
	case fromHeader.IsValid():
		chosen = fromHeader
	default:
		return ctx, nil
	}
	var links []trace.Link
	for _, sc := range []trace.SpanContext{fromHeader, ambient} {
		if sc.IsValid() && !sc.Equal(chosen) {
			links = append(links, trace.Link{SpanContext: sc})
		}
	}
	return trace.ContextWithRemoteSpanContext(ctx, chosen), links
}

// routeOf is the upstream a forwarded request goes to, nil for the others.
func (g *Gateway) routeOf(method, name string) *upstream {
	cat := g.cat.Load()
	switch method {
	case mcp.MethodCallTool:
		if r, ok := cat.tools[name]; ok {
			return r.up
		}
	case mcp.MethodGetPrompt:
		if r, ok := cat.prompts[name]; ok {
			return r.up
		}
	case mcp.MethodReadResource:
		return cat.resources[name]
	}
	return nil
}

// clientMiddleware wraps every request an upstream client sends: one
// CLIENT span for each request made within a trace (a downstream request's;
// the supervisor's own pings and lists are not traced), whose context goes
// into the request's _meta and, for HTTP upstreams, its traceparent header.
func (t *tracing) clientMiddleware(next jsonrpc.MethodHandler) jsonrpc.MethodHandler {
	return func(ctx context.Context, req *jsonrpc.Request) (any, error) {
		if !trace.SpanContextFromContext(ctx).IsValid() {
			return next(ctx, req)
		}
		name, attrs := describe(req.Method, paramsName(req.Params))
		if u, _ := ctx.Value(upstreamKey{}).(*upstream); u != nil {
			attrs = append(attrs, upstreamAttrs(u)...)
		}
		ctx, span := t.tracer.Start(ctx, name, trace.WithSpanKind(trace.SpanKindClient), trace.WithAttributes(attrs...))
		defer span.End()
		c := propagation.MapCarrier{}
		t.prop.Inject(ctx, c)
		if len(c) > 0 {
			out := *req
			out.Params = withMeta(req.Params, c)
			req = &out
			h := make(http.Header, len(c))
			for k, v := range c {
				h.Set(k, v)
			}
			ctx = client.ContextWithHeader(ctx, h)
		}
		res, err := next(ctx, req)
		switch {
		case err != nil:
			recordError(span, err)
		case req.Method == mcp.MethodCallTool && isToolError(res):
			span.SetAttributes(attrErrorType.String("tool_error"))
			span.SetStatus(codes.Error, "")
		}
		return res, err
	}
}

// upstreamAttrs describe where an upstream is: its name, and the transport
// (pipe for a child, tcp and the address for HTTP; nothing in process).
func upstreamAttrs(u *upstream) []attribute.KeyValue {
	attrs := []attribute.KeyValue{attrUpstream.String(u.spec.Name)}
	switch {
	case len(u.spec.Command) > 0:
		attrs = append(attrs, attrTransport.String("pipe"))
	case u.spec.URL != "":
		attrs = append(attrs, attrTransport.String("tcp"), attrNetProtocol.String("http"))
		if p, err := url.Parse(u.spec.URL); err == nil {
			attrs = append(attrs, attrServerAddress.String(p.Hostname()))
			port := p.Port()
			if port == "" {
				port = map[string]string{"http": "80", "https": "443"}[p.Scheme]
			}
			if n, err := strconv.Atoi(port); err == nil {
				attrs = append(attrs, attrServerPort.Int(n))
			}
		}
	}
	return attrs
}

// httpAttrs describe the HTTP request a downstream request came in.
func httpAttrs(r *http.Request) []attribute.KeyValue {
	attrs := []attribute.KeyValue{attrTransport.String("tcp"), attrNetProtocol.String("http")}
	switch r.ProtoMajor {
	case 1:
		attrs = append(attrs, attrNetVersion.String("1."+strconv.Itoa(r.ProtoMinor)))
	case 2, 3:
		attrs = append(attrs, attrNetVersion.String(strconv.Itoa(r.ProtoMajor)))
	}
	if host, port, err := net.SplitHostPort(r.RemoteAddr); err == nil {
		attrs = append(attrs, attrClientAddress.String(host))
		if n, err := strconv.Atoi(port); err == nil {
			attrs = append(attrs, attrClientPort.Int(n))
		}
	}
	if sid := r.Header.Get(mcp.HeaderSessionID); sid != "" {
		attrs = append(attrs, attrSession.String(sid))
	}
	return attrs
}

// recordError marks a span failed: error.type is the JSON-RPC error code
// (also rpc.response.status_code) with its message as the status, else
// timeout, cancelled, or the client's failure class.
func recordError(span trace.Span, err error) {
	code, msg := int64(0), err.Error()
	var ce *client.JSONRPCError
	if je, ok := jsonrpc.AsError(err); ok {
		code, msg = je.Code, je.Message
	} else if errors.As(err, &ce) {
		code, msg = ce.Code, ce.Message
	}
	kind := "_OTHER"
	switch {
	case code != 0:
		kind = strconv.FormatInt(code, 10)
		span.SetAttributes(attrStatusCode.String(kind))
	case errors.Is(err, context.DeadlineExceeded) || errors.Is(err, server.ErrTimeout):
		kind = "timeout"
	case errors.Is(err, context.Canceled):
		kind = "cancelled"
	case client.CodeOf(err) == client.CodeTransport:
		kind = "transport"
	case client.CodeOf(err) == client.CodeProtocol:
		kind = "protocol"
	case client.CodeOf(err) == client.CodeSessionInvalid:
		kind = "session_invalid"
	}
	span.SetAttributes(attrErrorType.String(kind))
	span.SetStatus(codes.Error, msg)
}

// recordContextError marks a span whose request ended without an answer.
func recordContextError(span trace.Span, ctx context.Context) {
	kind := "cancelled"
	if cause := context.Cause(ctx); errors.Is(cause, server.ErrTimeout) || errors.Is(cause, context.DeadlineExceeded) {
		kind = "timeout"
	}
	span.SetAttributes(attrErrorType.String(kind))
	span.SetStatus(codes.Error, context.Cause(ctx).Error())
}

var isErrorName = []string{"isError"}

// isToolError says whether a tools/call result is an isError one.
func isToolError(res any) bool {
	switch r := res.(type) {
	case *mcp.CallToolResult:
		return r != nil && r.IsError
	case json.RawMessage:
		found, isErr := false, false
		if jsonscan.Members(r, isErrorName, func(_, v []byte) bool {
			found, isErr = true, string(v) == "true"
			return true
		}) {
			return isErr
		}
		if found {
			return isErr
		}
		var p struct {
			IsError bool `json:"isError"`
		}
		return wirejson.Unmarshal(r, &p) == nil && p.IsError
	}
	return false
}

// idString is a request id as the conventions want it: the string, or the
// integer in decimal.
func idString(id jsonrpc.ID) string {
	if id.IsString() {
		return id.Str()
	}
	return strconv.FormatInt(id.Int(), 10)
}

var metaName = []string{"_meta"}

// withMeta returns params with the members of kv added to its _meta (made
// when absent). The other members' bytes are kept as they are: with no
// _meta, kv is appended as a new member; otherwise the object is rebuilt
// with its values as received.
func withMeta(params json.RawMessage, kv map[string]string) json.RawMessage {
	add := []byte{'{'}
	for _, k := range slices.Sorted(maps.Keys(kv)) {
		if len(add) > 1 {
			add = append(add, ',')
		}
		add = append(add, jsonString(k)...)
		add = append(add, ':')
		add = append(add, jsonString(kv[k])...)
	}
	add = append(add, '}')
	p := bytes.TrimSpace(params)
	if len(p) == 0 || string(p) == "null" {
		return append([]byte(`{"_meta":`), append(add, '}')...)
	}
	hasMeta := false
	if jsonscan.Members(p, metaName, func(_, _ []byte) bool { hasMeta = true; return true }) && !hasMeta {
		out := make([]byte, 0, len(p)+len(add)+10)
		body := bytes.TrimSpace(p[1 : len(p)-1])
		out = append(out, '{')
		out = append(out, body...)
		if len(body) > 0 {
			out = append(out, ',')
		}
		out = append(out, `"_meta":`...)
		out = append(out, add...)
		return append(out, '}')
	}
	var obj map[string]json.RawMessage
	if wirejson.Unmarshal(p, &obj) != nil {
		return params // not an object: the client refuses it as it would have
	}
	meta := map[string]json.RawMessage{}
	if raw, ok := obj["_meta"]; ok && string(bytes.TrimSpace(raw)) != "null" {
		if wirejson.Unmarshal(raw, &meta) != nil {
			return params // a _meta that is not an object: the client refuses it
		}
	}
	for k, v := range kv {
		meta[k] = jsonString(v)
	}
	obj["_meta"] = encodeRaw(meta)
	return encodeRaw(obj)
}

// encodeRaw writes an object of raw members without escaping <, > and &
// (encoding/json would), so that the values keep their bytes.
func encodeRaw(obj map[string]json.RawMessage) json.RawMessage {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if enc.Encode(obj) != nil {
		return nil
	}
	return bytes.TrimSuffix(b.Bytes(), []byte{'\n'})
}

func jsonString(s string) json.RawMessage {
	b, _ := json.Marshal(s)
	return b
}
