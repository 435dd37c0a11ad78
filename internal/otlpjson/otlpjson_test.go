package otlpjson

import (
	"compress/gzip"
	"context"
	"encoding/json"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
)

// collector is an OTLP/HTTP endpoint that keeps the JSON requests it
// receives, decoded, and answers each with the next status of answers
// (200 once they run out).
type collector struct {
	t       *testing.T
	srv     *httptest.Server
	mu      sync.Mutex
	got     []map[string]any
	headers []http.Header
	answers []int
}

func newCollector(t *testing.T, answers ...int) *collector {
	c := &collector{t: t, answers: answers}
	c.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.URL.Path != "/v1/traces" || r.Header.Get("Content-Type") != "application/json" {
			t.Errorf("request %s %s, Content-Type %q", r.Method, r.URL.Path, r.Header.Get("Content-Type"))
		}
		var body io.Reader = r.Body
		if r.Header.Get("Content-Encoding") == "gzip" {
			zr, err := gzip.NewReader(r.Body)
			if err != nil {
				t.Errorf("gzip: %v", err)
				return
			}
			body = zr
		}
		var req map[string]any
		if err := json.NewDecoder(body).Decode(&req); err != nil {
			t.Errorf("body is not JSON: %v", err)
		}
		c.mu.Lock()
		c.got = append(c.got, req)
		c.headers = append(c.headers, r.Header.Clone())
		status := http.StatusOK
		if len(c.answers) > 0 {
			status, c.answers = c.answers[0], c.answers[1:]
		}
		c.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_, _ = io.WriteString(w, `{}`)
	}))
	t.Cleanup(c.srv.Close)
	return c
}

func (c *collector) requests() ([]map[string]any, []http.Header) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.got, c.headers
}

// TestExportToCollector: spans a tracer provider batches arrive at the
// collector as one ExportTraceServiceRequest in the OTLP JSON mapping:
// grouped by resource and scope, hex ids, nanoseconds as strings, kinds
// and status codes as OTLP numbers them, attributes as AnyValues, the
// configured headers on the request.
func TestExportToCollector(t *testing.T) {
	for _, gz := range []bool{false, true} {
		c := newCollector(t)
		exp, err := New(Config{URL: c.srv.URL + "/v1/traces", Headers: map[string]string{"Api-Key": "s3cret"}, Gzip: gz})
		if err != nil {
			t.Fatal(err)
		}
		res := resource.NewSchemaless(attribute.String("service.name", "toolwire-gateway"))
		tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp), sdktrace.WithResource(res))
		tracer := tp.Tracer("toolwire/gateway", trace.WithInstrumentationVersion("v0.1.0"))
		start := time.Unix(1700000000, 123456789)
		ctx, server := tracer.Start(context.Background(), "tools/call echo", trace.WithSpanKind(trace.SpanKindServer), trace.WithTimestamp(start))
		_, client := tracer.Start(ctx, "tools/call up", trace.WithSpanKind(trace.SpanKindClient),
			trace.WithAttributes(attribute.String("s", "x"), attribute.Int64("n", 1<<60), attribute.Bool("b", true),
				attribute.Float64("f", 1.5), attribute.StringSlice("ss", []string{"a", "b"})))
		client.AddEvent("retry", trace.WithAttributes(attribute.Int("attempt", 2)), trace.WithTimestamp(start.Add(time.Millisecond)))
		client.SetStatus(codes.Error, "upstream down")
		client.End(trace.WithTimestamp(start.Add(2 * time.Millisecond)))
		server.End(trace.WithTimestamp(start.Add(3 * time.Millisecond)))
		if err := tp.Shutdown(context.Background()); err != nil {
			t.Fatal(err)
		}

		got, headers := c.requests()
		if len(got) != 1 {
			t.Fatalf("gzip %v: %d requests, want 1", gz, len(got))
		}
		if headers[0].Get("Api-Key") != "s3cret" {
			t.Errorf("headers %v", headers[0])
		}
		sid, cid := server.SpanContext(), client.SpanContext()
		want := map[string]any{"resourceSpans": []any{map[string]any{
			"resource": map[string]any{"attributes": []any{
				map[string]any{"key": "service.name", "value": map[string]any{"stringValue": "toolwire-gateway"}},
			}},
			"scopeSpans": []any{map[string]any{
				"scope": map[string]any{"name": "toolwire/gateway", "version": "v0.1.0"},
				"spans": []any{
					map[string]any{
						"traceId": cid.TraceID().String(), "spanId": cid.SpanID().String(), "parentSpanId": sid.SpanID().String(),
						"flags": float64(0x101), "name": "tools/call up", "kind": float64(3),
						"startTimeUnixNano": cidStart(t, client), "endTimeUnixNano": "1700000000125456789",
						"attributes": []any{
							map[string]any{"key": "s", "value": map[string]any{"stringValue": "x"}},
							map[string]any{"key": "n", "value": map[string]any{"intValue": "1152921504606846976"}},
							map[string]any{"key": "b", "value": map[string]any{"boolValue": true}},
							map[string]any{"key": "f", "value": map[string]any{"doubleValue": 1.5}},
							map[string]any{"key": "ss", "value": map[string]any{"arrayValue": map[string]any{"values": []any{
								map[string]any{"stringValue": "a"}, map[string]any{"stringValue": "b"},
							}}}},
						},
						"events": []any{map[string]any{
							"timeUnixNano": "1700000000124456789", "name": "retry",
							"attributes": []any{map[string]any{"key": "attempt", "value": map[string]any{"intValue": "2"}}},
						}},
						"status": map[string]any{"message": "upstream down", "code": float64(2)},
					},
					map[string]any{
						"traceId": sid.TraceID().String(), "spanId": sid.SpanID().String(),
						"flags": float64(0x101), "name": "tools/call echo", "kind": float64(2),
						"startTimeUnixNano": "1700000000123456789", "endTimeUnixNano": "1700000000126456789",
					},
				},
			}},
		}}}
		if diff := cmp.Diff(want, got[0]); diff != "" {
			t.Errorf("gzip %v: request (-want +got):\n%s", gz, diff)
		}
	}
}

// cidStart is the start time the SDK recorded for s (taken from the
// clock, not given), as OTLP JSON writes it.
func cidStart(t *testing.T, s trace.Span) string {
	t.Helper()
	ro, ok := s.(sdktrace.ReadOnlySpan)
	if !ok {
		t.Fatalf("%T is not a ReadOnlySpan", s)
	}
	return nanos(ro.StartTime())
}

// TestValues: every attribute type as an OTLP AnyValue in JSON, doubles
// JSON numbers cannot hold as the protobuf mapping's strings.
func TestValues(t *testing.T) {
	for _, tc := range []struct {
		v    attribute.Value
		want string
	}{
		{attribute.StringValue(""), `{"stringValue":""}`},
		{attribute.BoolValue(false), `{"boolValue":false}`},
		{attribute.Int64Value(-9), `{"intValue":"-9"}`},
		{attribute.Float64Value(0), `{"doubleValue":0}`},
		{attribute.Float64Value(math.NaN()), `{"doubleValue":"NaN"}`},
		{attribute.Float64Value(math.Inf(1)), `{"doubleValue":"Infinity"}`},
		{attribute.Float64Value(math.Inf(-1)), `{"doubleValue":"-Infinity"}`},
		{attribute.BoolSliceValue([]bool{true}), `{"arrayValue":{"values":[{"boolValue":true}]}}`},
		{attribute.Int64SliceValue([]int64{1, 2}), `{"arrayValue":{"values":[{"intValue":"1"},{"intValue":"2"}]}}`},
		{attribute.Float64SliceValue([]float64{0.25}), `{"arrayValue":{"values":[{"doubleValue":0.25}]}}`},
		{attribute.StringSliceValue(nil), `{"arrayValue":{"values":[]}}`},
		{attribute.ByteSliceValue([]byte("hi")), `{"bytesValue":"aGk="}`},
		{attribute.MapValue(attribute.String("k", "v")), `{"kvlistValue":{"values":[{"key":"k","value":{"stringValue":"v"}}]}}`},
		{attribute.Value{}, `{}`},
	} {
		b, err := json.Marshal(value(tc.v))
		if err != nil {
			t.Fatal(err)
		}
		if string(b) != tc.want {
			t.Errorf("%s %v: %s, want %s", tc.v.Type(), tc.v.String(), b, tc.want)
		}
	}
	for code, want := range map[codes.Code]int{codes.Unset: 0, codes.Ok: 1, codes.Error: 2} {
		if got := statusCode(code); got != want {
			t.Errorf("status %v: %d, want %d", code, got, want)
		}
	}
}

// TestRetry: a busy collector (503) is asked again within the timeout; a
// refusal (400) is not, and its status and body are in the error.
func TestRetry(t *testing.T) {
	span := func() []sdktrace.ReadOnlySpan {
		tp := sdktrace.NewTracerProvider()
		_, s := tp.Tracer("t").Start(context.Background(), "op")
		s.End()
		return []sdktrace.ReadOnlySpan{s.(sdktrace.ReadOnlySpan)}
	}
	c := newCollector(t, http.StatusServiceUnavailable, http.StatusOK)
	exp, err := New(Config{URL: c.srv.URL + "/v1/traces"})
	if err != nil {
		t.Fatal(err)
	}
	if err := exp.ExportSpans(context.Background(), span()); err != nil {
		t.Errorf("after a 503 then a 200: %v", err)
	}
	if got, _ := c.requests(); len(got) != 2 {
		t.Errorf("%d requests, want 2", len(got))
	}

	c = newCollector(t, http.StatusBadRequest)
	exp, _ = New(Config{URL: c.srv.URL + "/v1/traces"})
	err = exp.ExportSpans(context.Background(), span())
	if err == nil || !strings.Contains(err.Error(), "400") {
		t.Errorf("a 400: %v", err)
	}
	if got, _ := c.requests(); len(got) != 1 {
		t.Errorf("%d requests after a 400, want 1", len(got))
	}

	if err := exp.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := exp.ExportSpans(context.Background(), span()); err != nil {
		t.Errorf("after Shutdown: %v", err)
	}
	if got, _ := c.requests(); len(got) != 1 {
		t.Errorf("%d requests after Shutdown, want 1", len(got))
	}
}

// TestFromEnv: the OTEL_EXPORTER_OTLP_* environment as the OpenTelemetry
// specification reads it, the traces-only variables first; protocols
// other than http/json and the TLS file settings are refused by name.
func TestFromEnv(t *testing.T) {
	for _, tc := range []struct {
		name    string
		env     map[string]string
		want    Config
		wantErr string
	}{
		{name: "nothing", want: Config{URL: "http://localhost:4318/v1/traces"}},
		{name: "base endpoint", env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "https://otel.example:4318/"},
			want: Config{URL: "https://otel.example:4318/v1/traces"}},
		{name: "traces endpoint as it is", env: map[string]string{
			"OTEL_EXPORTER_OTLP_ENDPOINT": "http://a:4318", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://b:4318/custom"},
			want: Config{URL: "http://b:4318/custom"}},
		{name: "headers, timeout, gzip", env: map[string]string{
			"OTEL_EXPORTER_OTLP_HEADERS":        "api-key=a%2Cb , x=1",
			"OTEL_EXPORTER_OTLP_TRACES_HEADERS": "x=2+3",
			"OTEL_EXPORTER_OTLP_TIMEOUT":        "1500",
			"OTEL_EXPORTER_OTLP_COMPRESSION":    "gzip",
			"OTEL_EXPORTER_OTLP_PROTOCOL":       "http/json",
		}, want: Config{URL: "http://localhost:4318/v1/traces", Headers: map[string]string{"api-key": "a,b", "x": "2+3"},
			Timeout: 1500 * time.Millisecond, Gzip: true}},
		{name: "grpc", env: map[string]string{"OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"},
			wantErr: "OTEL_EXPORTER_OTLP_PROTOCOL=grpc: toolwire sends OTLP traces as http/json only"},
		{name: "http/protobuf for traces", env: map[string]string{"OTEL_EXPORTER_OTLP_PROTOCOL": "http/json", "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL": "http/protobuf"},
			wantErr: "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL=http/protobuf: toolwire sends OTLP traces as http/json only"},
		{name: "certificate", env: map[string]string{"OTEL_EXPORTER_OTLP_CERTIFICATE": "/ca.pem"},
			wantErr: "OTEL_EXPORTER_OTLP_CERTIFICATE: not supported"},
		{name: "bad header", env: map[string]string{"OTEL_EXPORTER_OTLP_HEADERS": "novalue"},
			wantErr: "OTEL_EXPORTER_OTLP_HEADERS: want key=value"},
		{name: "bad encoding, value not quoted", env: map[string]string{"OTEL_EXPORTER_OTLP_HEADERS": "k=secret%zz"},
			wantErr: "OTEL_EXPORTER_OTLP_HEADERS: header k: bad percent-encoding"},
		{name: "bad timeout", env: map[string]string{"OTEL_EXPORTER_OTLP_TRACES_TIMEOUT": "10s"},
			wantErr: `OTEL_EXPORTER_OTLP_TRACES_TIMEOUT="10s": want milliseconds`},
		{name: "bad compression", env: map[string]string{"OTEL_EXPORTER_OTLP_COMPRESSION": "zstd"},
			wantErr: `OTEL_EXPORTER_OTLP_COMPRESSION="zstd": want gzip or none`},
	} {
		got, err := FromEnv(func(k string) string { return tc.env[k] })
		switch {
		case tc.wantErr != "":
			if err == nil || !strings.HasPrefix(err.Error(), tc.wantErr) || strings.Contains(err.Error(), "secret") {
				t.Errorf("%s: error %v, want one starting %q", tc.name, err, tc.wantErr)
			}
		case err != nil:
			t.Errorf("%s: %v", tc.name, err)
		default:
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s: (-want +got):\n%s", tc.name, diff)
			}
		}
	}
	if _, err := New(Config{URL: "localhost:4318"}); err == nil {
		t.Error("New accepts an endpoint that is not a URL")
	}
}
