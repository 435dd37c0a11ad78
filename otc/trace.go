package otc

import (
	"context"
	"strings"

	"go.opentelemetry.io/otel/trace"
)

// traceContext returns ctx carrying an OTC request's trace_id (32 hex
// digits, not all zero) as the OpenTelemetry trace of the call, so that an
// MCP server's or client's tracing middleware (the gateway's, say) starts
// its span in that trace and propagates it in the MCP request's _meta. The
// trace_id names no span, so the context has no span id: the first span is
// a root of that trace. ctx is returned as it is when trace_id is absent or
// malformed, or when ctx already carries that trace.
func traceContext(ctx context.Context, traceID string) context.Context {
	if len(traceID) != 32 {
		return ctx
	}
	tid, err := trace.TraceIDFromHex(strings.ToLower(traceID))
	if err != nil || trace.SpanContextFromContext(ctx).TraceID() == tid {
		return ctx
	}
	return trace.ContextWithRemoteSpanContext(ctx, trace.NewSpanContext(trace.SpanContextConfig{TraceID: tid}))
}
