package otc_test

import (
	"context"
	"testing"

	"go.opentelemetry.io/otel/trace"

	"github.com/toolwire/toolwire/mcp"
	"github.com/toolwire/toolwire/server"
)

// TestTraceID: a call's trace_id (32 hex digits, either case) is the
// OpenTelemetry trace of the context the backend's CallTool gets, with no
// span id; an absent, malformed or all-zero one leaves the context as it
// is.
func TestTraceID(t *testing.T) {
	s := server.New(mcp.Implementation{Name: "trace", Version: "1"})
	type out struct {
		TraceID string `json:"trace_id"`
		Span    bool   `json:"span"`
	}
	if err := server.AddTool(s, &mcp.Tool{Name: "Trace.Seen"}, func(ctx context.Context, _ *server.CallRequest, _ struct{}) (out, error) {
		sc := trace.SpanContextFromContext(ctx)
		o := out{Span: sc.SpanID().IsValid()}
		if sc.TraceID().IsValid() {
			o.TraceID = sc.TraceID().String()
		}
		return o, nil
	}); err != nil {
		t.Fatal(err)
	}
	ts := serve(t, s)
	for traceID, want := range map[string]string{
		"4bf92f3577b34da6a3ce929d0e0e4736":  "4bf92f3577b34da6a3ce929d0e0e4736",
		"4BF92F3577B34DA6A3CE929D0E0E4736":  "4bf92f3577b34da6a3ce929d0e0e4736",
		"":                                  "",
		"not-a-trace-id":                    "",
		"4bf92f3577b34da6a3ce929d0e0e473":   "",
		"4bf92f3577b34da6a3ce929d0e0e47361": "",
		"00000000000000000000000000000000":  "",
	} {
		req := map[string]any{"tool_id": "Trace.Seen", "input": map[string]any{}}
		if traceID != "" {
			req["trace_id"] = traceID
		}
		r := call(t, ts, req, nil)
		wantStatus(t, r, 200)
		res, _ := r.body["result"].(map[string]any)
		v, _ := res["value"].(map[string]any)
		if v == nil || v["trace_id"] != want || v["span"] != false {
			t.Errorf("trace_id %q: the tool saw %s, want trace %q and no span", traceID, r.raw, want)
		}
	}
}
