// Package otlpjson sends finished spans to an OpenTelemetry collector as
// OTLP over HTTP with JSON bodies (protocol http/json): a POST of an
// ExportTraceServiceRequest to the collector's /v1/traces. It stands in
// for the OpenTelemetry exporters that speak gRPC or protobuf, which link
// gRPC and the generated OTLP protobuf packages and cost the gateway
// several megabytes of memory at start-up whether or not tracing is on.
// Batching is the SDK's (sdktrace.NewBatchSpanProcessor); the settings come
// from the standard OTEL_EXPORTER_OTLP_* environment (FromEnv).
package otlpjson

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/toolwire/toolwire/internal/backoff"
	"github.com/toolwire/toolwire/internal/httpguard"
)

// Config is where and how spans are sent.
type Config struct {
	// URL is the collector's traces endpoint, path included
	// ("http://localhost:4318/v1/traces").
	URL string
	// Headers are added to every request (an API key for a hosted
	// collector).
	Headers map[string]string
	// Timeout bounds one export, its retries included; 0 means
	// DefaultTimeout.
	Timeout time.Duration
	// Gzip compresses the request bodies.
	Gzip bool
	// Client, when set, is the HTTP client the requests go through; nil:
	// the module's outbound client, no redirects followed.
	Client *http.Client
}

// DefaultTimeout is how long one export may take unless Config.Timeout
// (OTEL_EXPORTER_OTLP_TIMEOUT) says otherwise: the OpenTelemetry default.
const DefaultTimeout = 10 * time.Second

// maxErrorBody is how much of a refusal's body goes into the error.
const maxErrorBody = 512

// retryPolicy spaces the retries of an export the collector answered
// with 429, 502, 503 or 504 (OTLP/HTTP's retryable statuses), within the
// export's timeout.
var retryPolicy = backoff.Policy{Initial: 250 * time.Millisecond, Max: 2 * time.Second, Jitter: backoff.EqualJitter}

// Exporter is an sdktrace.SpanExporter that POSTs OTLP/HTTP JSON.
type Exporter struct {
	cfg     Config
	client  *http.Client
	stopped atomic.Bool
}

var _ sdktrace.SpanExporter = (*Exporter)(nil)

// New returns an exporter sending to cfg.URL.
func New(cfg Config) (*Exporter, error) {
	if !strings.HasPrefix(cfg.URL, "http://") && !strings.HasPrefix(cfg.URL, "https://") {
		return nil, fmt.Errorf("OTLP traces endpoint %q: want an http or https URL", cfg.URL)
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = DefaultTimeout
	}
	c := cfg.Client
	if c == nil {
		c = httpguard.Outbound{Timeout: cfg.Timeout, Redirects: httpguard.NoRedirects}.Client()
	}
	return &Exporter{cfg: cfg, client: c}, nil
}

// ExportSpans sends spans in one request, retrying while the collector
// says it is busy and the timeout allows. After Shutdown it sends nothing.
func (e *Exporter) ExportSpans(ctx context.Context, spans []sdktrace.ReadOnlySpan) error {
	if len(spans) == 0 || e.stopped.Load() {
		return nil
	}
	body, err := e.encode(spans)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, e.cfg.Timeout)
	defer cancel()
	for attempt := 1; ; attempt++ {
		retry, err := e.post(ctx, body)
		if err == nil || !retry {
			return err
		}
		t := time.NewTimer(retryPolicy.Delay(attempt))
		select {
		case <-ctx.Done():
			t.Stop()
			return fmt.Errorf("%w (gave up: %v)", err, context.Cause(ctx))
		case <-t.C:
		}
	}
}

func (e *Exporter) encode(spans []sdktrace.ReadOnlySpan) ([]byte, error) {
	var buf bytes.Buffer
	var w io.Writer = &buf
	var zw *gzip.Writer
	if e.cfg.Gzip {
		zw = gzip.NewWriter(&buf)
		w = zw
	}
	if err := json.NewEncoder(w).Encode(request(spans)); err != nil {
		return nil, fmt.Errorf("OTLP traces: encoding: %w", err)
	}
	if zw != nil {
		if err := zw.Close(); err != nil {
			return nil, fmt.Errorf("OTLP traces: compressing: %w", err)
		}
	}
	return buf.Bytes(), nil
}

// post sends one request; retry says whether the failure is one a later
// attempt may not have.
func (e *Exporter) post(ctx context.Context, body []byte) (retry bool, err error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, e.cfg.URL, bytes.NewReader(body))
	if err != nil {
		return false, fmt.Errorf("OTLP traces: %w", err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "toolwire-otlpjson")
	if e.cfg.Gzip {
		req.Header.Set("Content-Encoding", "gzip")
	}
	for k, v := range e.cfg.Headers {
		req.Header.Set(k, v)
	}
	resp, err := e.client.Do(req)
	if err != nil {
		return ctx.Err() == nil, fmt.Errorf("OTLP traces: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode >= 200 && resp.StatusCode < 300 {
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10)) // lets the connection be reused
		return false, nil
	}
	msg, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
	err = fmt.Errorf("OTLP traces: %s answered %s: %s", e.cfg.URL, resp.Status, bytes.TrimSpace(msg))
	switch resp.StatusCode {
	case http.StatusTooManyRequests, http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout:
		return true, err
	}
	return false, err
}

// Shutdown stops the exporter: later exports send nothing. The batch
// processor flushes its last spans before calling it.
func (e *Exporter) Shutdown(ctx context.Context) error {
	e.stopped.Store(true)
	e.client.CloseIdleConnections()
	return ctx.Err()
}

// FromEnv reads the exporter's settings from the OpenTelemetry
// environment through getenv (os.Getenv): the endpoint
// (OTEL_EXPORTER_OTLP_TRACES_ENDPOINT as it is, else
// OTEL_EXPORTER_OTLP_ENDPOINT with /v1/traces appended, else
// http://localhost:4318/v1/traces), the headers (OTEL_EXPORTER_OTLP_HEADERS
// and _TRACES_HEADERS, "key=value,..." with values percent-encoded), the
// timeout in milliseconds (OTEL_EXPORTER_OTLP_TIMEOUT, _TRACES_TIMEOUT) and
// the compression (gzip or none). The protocol
// (OTEL_EXPORTER_OTLP_PROTOCOL, _TRACES_PROTOCOL) must be http/json, or
// unset: grpc and http/protobuf are refused, and so are the TLS
// certificate settings, rather than being ignored.
func FromEnv(getenv func(string) string) (Config, error) {
	get := func(name string) (string, string) {
		if v := strings.TrimSpace(getenv("OTEL_EXPORTER_OTLP_TRACES_" + name)); v != "" {
			return v, "OTEL_EXPORTER_OTLP_TRACES_" + name
		}
		return strings.TrimSpace(getenv("OTEL_EXPORTER_OTLP_" + name)), "OTEL_EXPORTER_OTLP_" + name
	}
	var cfg Config
	if p, name := get("PROTOCOL"); p != "" && p != "http/json" {
		return cfg, fmt.Errorf("%s=%s: toolwire sends OTLP traces as http/json only; set %s=http/json (or leave it unset) and point the endpoint at the collector's OTLP/HTTP port (4318)", name, p, name)
	}
	for _, n := range []string{"CERTIFICATE", "CLIENT_CERTIFICATE", "CLIENT_KEY"} {
		if v, name := get(n); v != "" {
			return cfg, fmt.Errorf("%s: not supported by toolwire's OTLP exporter (an https endpoint is verified against the system's roots)", name)
		}
	}
	if v := strings.TrimSpace(getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")); v != "" {
		cfg.URL = v
	} else if v := strings.TrimSpace(getenv("OTEL_EXPORTER_OTLP_ENDPOINT")); v != "" {
		cfg.URL = strings.TrimSuffix(v, "/") + "/v1/traces"
	} else {
		cfg.URL = "http://localhost:4318/v1/traces"
	}
	for _, name := range []string{"OTEL_EXPORTER_OTLP_HEADERS", "OTEL_EXPORTER_OTLP_TRACES_HEADERS"} {
		if err := parseHeaders(getenv(name), &cfg.Headers); err != nil {
			return cfg, fmt.Errorf("%s: %w", name, err)
		}
	}
	if v, name := get("TIMEOUT"); v != "" {
		ms, err := strconv.ParseInt(v, 10, 64)
		if err != nil || ms < 0 {
			return cfg, fmt.Errorf("%s=%q: want milliseconds", name, v)
		}
		cfg.Timeout = time.Duration(ms) * time.Millisecond
	}
	switch v, name := get("COMPRESSION"); v {
	case "", "none":
	case "gzip":
		cfg.Gzip = true
	default:
		return cfg, fmt.Errorf("%s=%q: want gzip or none", name, v)
	}
	return cfg, nil
}

// parseHeaders adds the "key=value,key=value" list s (values
// percent-encoded, as in W3C baggage) to *h. An error never quotes a
// value: headers carry credentials.
func parseHeaders(s string, h *map[string]string) error {
	for item := range strings.SplitSeq(s, ",") {
		if strings.TrimSpace(item) == "" {
			continue
		}
		k, v, ok := strings.Cut(item, "=")
		k = strings.TrimSpace(k)
		if !ok || k == "" {
			return errors.New("want key=value pairs separated by commas")
		}
		dv, err := pctDecode(strings.TrimSpace(v))
		if err != nil {
			return fmt.Errorf("header %s: %w", k, err)
		}
		if *h == nil {
			*h = map[string]string{}
		}
		(*h)[k] = dv
	}
	return nil
}

// pctDecode undoes percent-encoding; unlike url.QueryUnescape it keeps
// "+" as it is.
func pctDecode(s string) (string, error) {
	if !strings.Contains(s, "%") {
		return s, nil
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '%' {
			b.WriteByte(s[i])
			continue
		}
		if i+2 >= len(s) {
			return "", errors.New("bad percent-encoding")
		}
		n, err := strconv.ParseUint(s[i+1:i+3], 16, 8)
		if err != nil {
			return "", errors.New("bad percent-encoding")
		}
		b.WriteByte(byte(n))
		i += 2
	}
	return b.String(), nil
}
