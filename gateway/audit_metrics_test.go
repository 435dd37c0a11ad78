package gateway_test

import (
	"context"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/toolwire/toolwire/gateway"
	"github.com/toolwire/toolwire/gateway/audit"
)

// collectingLog is an audit log that reports a metric of its own.
type collectingLog struct{ n float64 }

var collectedDesc = prometheus.NewDesc("toolwire_gateway_audit_head_sequence", "test", nil, nil)

func (l *collectingLog) Append(context.Context, *audit.Record) error { l.n++; return nil }
func (l *collectingLog) Describe(ch chan<- *prometheus.Desc)         { ch <- collectedDesc }
func (l *collectingLog) Collect(ch chan<- prometheus.Metric) {
	ch <- prometheus.MustNewConstMetric(collectedDesc, prometheus.GaugeValue, 7)
}

// TestAuditLogMetricsAreServed: an audit log that is a
// prometheus.Collector (the command's, reporting the chain's head) has its
// metrics on the gateway's /metrics.
func TestAuditLogMetricsAreServed(t *testing.T) {
	g := newGateway(t, gateway.Config{Upstreams: []gateway.Upstream{{Name: "a", Server: echoServer("a")}}},
		gateway.WithAudit(&collectingLog{}))
	if v, ok := value(scrape(t, g), "toolwire_gateway_audit_head_sequence", nil); !ok || v != 7 {
		t.Fatalf("toolwire_gateway_audit_head_sequence = %v (found %v)", v, ok)
	}
}
