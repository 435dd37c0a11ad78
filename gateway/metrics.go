package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/toolwire/toolwire/client"
	"github.com/toolwire/toolwire/gateway/audit"
	"github.com/toolwire/toolwire/internal/wirejson"
	"github.com/toolwire/toolwire/server"
)

// The outcomes of a forwarded call: the outcome label of
// toolwire_gateway_calls_total and the audit record's outcome alike.
const (
	outcomeOK            = string(audit.OutcomeOK)            // answered; for tools/call, not an isError result
	outcomeToolError     = string(audit.OutcomeToolError)     // tools/call answered with isError: true
	outcomeProtocolError = string(audit.OutcomeProtocolError) // the upstream answered with a JSON-RPC error
	outcomeUpstreamError = string(audit.OutcomeUpstreamError) // no answer: the upstream is down, was lost, sent garbage
	outcomeTimeout       = string(audit.OutcomeTimeout)       // the call's timeout (the upstream's, or the server's tool timeout) ran out
	outcomeCancelled     = string(audit.OutcomeCancelled)     // the downstream caller cancelled it
)

// outcomeNote carries a forwarded call's outcome, as the metrics classify
// it, out to the trust layer that audits the request.
type outcomeNote struct{ outcome string }

type outcomeKey struct{}

// observe counts a forwarded call in the metrics and notes its outcome
// for the request's audit record.
func (g *Gateway) observe(ctx context.Context, u *upstream, method, name, outcome string, start time.Time) {
	g.metrics.observe(u, method, name, outcome, start)
	if n, ok := ctx.Value(outcomeKey{}).(*outcomeNote); ok {
		n.outcome = outcome
	}
}

// metrics are the gateway's Prometheus metrics, on a registry of its own
// (never the default one: two gateways in a process do not clash).
//
// Calls are counted as they end (an increment and an observation on
// series found by their labels); everything about upstreams (state,
// restarts, tools, calls in flight) is read from the upstreams when
// scraped, so it costs nothing otherwise and an upstream removed by
// Reload is no longer reported. Labels stay bounded: the upstream is a
// configured name, tool a name of the catalog (a call to a name the
// catalog does not route is not forwarded, so not counted at all).
type metrics struct {
	reg      *prometheus.Registry
	calls    *prometheus.CounterVec
	duration *prometheus.HistogramVec

	refusals    *prometheus.CounterVec // trust.go: denied, rate_limited
	auditErrors prometheus.Counter
	enrichFails prometheus.Counter
}

// callBuckets span 0.5ms (an in-process upstream) to 60s (the default
// call timeout).
var callBuckets = []float64{0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60}

func newMetrics(g *Gateway) *metrics {
	m := &metrics{
		reg: prometheus.NewRegistry(),
		calls: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "toolwire_gateway_calls_total",
			Help: "Calls forwarded to upstreams, by upstream, method (tools/call, prompts/get, resources/read), tool (the downstream tool name; empty for other methods) and outcome (ok, tool_error, protocol_error, upstream_error, timeout, cancelled).",
		}, []string{"upstream", "method", "tool", "outcome"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "toolwire_gateway_call_duration_seconds",
			Help:    "Duration of calls forwarded to upstreams, by upstream, method and tool (the downstream tool name; empty for other methods).",
			Buckets: callBuckets,
		}, []string{"upstream", "method", "tool"}),
		refusals: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "toolwire_gateway_refusals_total",
			Help: "Requests the gateway answered itself without forwarding, by reason (denied by a persona, rate_limited).",
		}, []string{"reason"}),
		auditErrors: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "toolwire_gateway_audit_errors_total",
			Help: "Audit records that could not be written; each withheld its request's answer.",
		}),
		enrichFails: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "toolwire_gateway_enrichment_failures_total",
			Help: "Enrichment rules that failed on a result (the result went out without them).",
		}),
	}
	m.reg.MustRegister(m.calls, m.duration, m.refusals, m.auditErrors, m.enrichFails, upstreamCollector{g}, sessionCollector{g},
		prometheus.NewCounterFunc(prometheus.CounterOpts{
			Name: "toolwire_gateway_audit_dropped_total",
			Help: "Audit records dropped by async delivery because its queue was full.",
		}, func() float64 {
			if a, ok := g.opts.audit.(interface{ Dropped() uint64 }); ok {
				return float64(a.Dropped())
			}
			return 0
		}),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "toolwire_gateway_sessions",
			Help: "Downstream sessions open on the gateway's server.",
		}, func() float64 { return float64(g.srv.SessionCount()) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "toolwire_gateway_pending_inputs",
			Help: "Forwarded calls waiting for a 2026-07-28 client's answer to an upstream's question (input_required).",
		}, func() float64 { return float64(g.inputs.len()) }),
		// The process's own health (go_* and process_*), for watching a
		// gateway's heap, goroutines and file descriptors.
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	// An audit log that reports metrics of its own (the chain's head, for
	// an external log store to anchor) reports them here.
	if c, ok := g.opts.audit.(prometheus.Collector); ok {
		m.reg.MustRegister(c)
	}
	return m
}

// MetricsHandler serves the gateway's metrics in the Prometheus exposition
// formats (mount it at /metrics). The metrics, all named
// toolwire_gateway_*: calls_total and call_duration_seconds (calls
// forwarded, by upstream, method, tool and, for the counter, outcome),
// in_flight_calls, upstream_state, upstream_restarts_total and
// upstream_tools (by upstream), upstream_client_sessions,
// upstream_client_sessions_started_total and
// upstream_client_sessions_reaped_total (by per-client upstream, sessions.go),
// sessions (downstream) and pending_inputs;
// refusals_total (by reason), audit_errors_total, audit_dropped_total and
// enrichment_failures_total; and the process's go_* and process_* metrics.
func (g *Gateway) MetricsHandler() http.Handler {
	return promhttp.HandlerFor(g.metrics.reg, promhttp.HandlerOpts{})
}

// observe counts a forwarded call that started at start.
func (m *metrics) observe(u *upstream, method, tool, outcome string, start time.Time) {
	m.calls.WithLabelValues(u.spec.Name, method, tool, outcome).Inc()
	m.duration.WithLabelValues(u.spec.Name, method, tool).Observe(time.Since(start).Seconds())
}

func (m *metrics) refused(reason string) { m.refusals.WithLabelValues(reason).Inc() }
func (m *metrics) auditFailed()          { m.auditErrors.Inc() }
func (m *metrics) enrichFailed()         { m.enrichFails.Inc() }

// forget drops the call series of an upstream no longer configured (it
// runs once a removed upstream is stopped; a name configured again by
// then keeps its series).
func (g *Gateway) forget(name string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	for _, u := range g.ups {
		if u.spec.Name == name {
			return
		}
	}
	g.metrics.calls.DeletePartialMatch(prometheus.Labels{"upstream": name})
	g.metrics.duration.DeletePartialMatch(prometheus.Labels{"upstream": name})
}

// outcomeOf classifies a forwarded call's error; ctx is the downstream
// request's.
func outcomeOf(ctx context.Context, err error) string {
	var je *client.JSONRPCError
	switch {
	case err == nil:
		return outcomeOK
	case ctx.Err() != nil:
		if errors.Is(context.Cause(ctx), server.ErrTimeout) {
			return outcomeTimeout
		}
		return outcomeCancelled
	case errors.As(err, &je):
		return outcomeProtocolError
	case errors.Is(err, context.DeadlineExceeded):
		return outcomeTimeout
	}
	return outcomeUpstreamError
}

// toolOutcome is outcomeOf for tools/call, whose answer may be an isError
// result.
func toolOutcome(ctx context.Context, err error, raw json.RawMessage) string {
	if err != nil {
		return outcomeOf(ctx, err)
	}
	if bytes.Contains(raw, []byte(`"isError"`)) {
		var r struct {
			IsError bool `json:"isError"`
		}
		if wirejson.Unmarshal(raw, &r) == nil && r.IsError {
			return outcomeToolError
		}
	}
	return outcomeOK
}

// upstreamCollector reports the upstreams' state when scraped.
type upstreamCollector struct{ g *Gateway }

var (
	upstreamStateDesc = prometheus.NewDesc("toolwire_gateway_upstream_state",
		"State of each upstream: 1 for its current state (starting, ready, down), 0 for the others.",
		[]string{"upstream", "state"}, nil)
	upstreamRestartsDesc = prometheus.NewDesc("toolwire_gateway_upstream_restarts_total",
		"Reconnections of an upstream after a failed connection or a lost session (for a command, each is a new process).",
		[]string{"upstream"}, nil)
	upstreamToolsDesc = prometheus.NewDesc("toolwire_gateway_upstream_tools",
		"Tools listed by an upstream's current session (0 when it is not ready).",
		[]string{"upstream"}, nil)
	inFlightDesc = prometheus.NewDesc("toolwire_gateway_in_flight_calls",
		"Calls being forwarded to an upstream.",
		[]string{"upstream"}, nil)
)

var upstreamStates = []State{StateStarting, StateReady, StateDown}

func (upstreamCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- upstreamStateDesc
	ch <- upstreamRestartsDesc
	ch <- upstreamToolsDesc
	ch <- inFlightDesc
}

func (c upstreamCollector) Collect(ch chan<- prometheus.Metric) {
	for _, u := range c.g.upstreams() {
		name := u.spec.Name
		u.mu.Lock()
		state, tools, inflight := u.state, len(u.list.tools), u.inflight.n
		u.mu.Unlock()
		for _, s := range upstreamStates {
			v := 0.0
			if s == state {
				v = 1
			}
			ch <- prometheus.MustNewConstMetric(upstreamStateDesc, prometheus.GaugeValue, v, name, string(s))
		}
		ch <- prometheus.MustNewConstMetric(upstreamRestartsDesc, prometheus.CounterValue, float64(u.restarts.Load()), name)
		ch <- prometheus.MustNewConstMetric(upstreamToolsDesc, prometheus.GaugeValue, float64(tools), name)
		ch <- prometheus.MustNewConstMetric(inFlightDesc, prometheus.GaugeValue, float64(inflight), name)
	}
}
