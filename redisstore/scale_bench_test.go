package redisstore

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/toolwire/toolwire/internal/testenv"
	"github.com/toolwire/toolwire/internal/testtools"
	"github.com/toolwire/toolwire/mcp"
	"github.com/toolwire/toolwire/server"
	"github.com/toolwire/toolwire/transport/streamable"
)

// BenchmarkSharedSessions is the cost of sharing 2025-era sessions through
// Redis: W1 (sequential tools/call of an echo tool on an open session) and
// session open (initialize and notifications/initialized), over HTTP on
// loopback, against the same endpoint with the default in-memory stores.
// redis-rt/op counts the Redis round trips of one operation (target: at
// most one per tools/call on an existing session):
// go test -run '^$' -bench SharedSessions -benchtime 2000x ./redisstore/
func BenchmarkSharedSessions(b *testing.B) {
	srv := testenv.Redis(b)
	for _, store := range []string{"memory", "redis"} {
		var opts []streamable.HandlerOption
		var rt *roundTrips
		if store == "redis" {
			c := open(b, srv.URL())
			rt = countRoundTrips(c)
			opts = []streamable.HandlerOption{streamable.WithSessionStore(c.SessionStore()),
				streamable.WithEventStore(c.EventStore()), streamable.WithSessionBus(c.SessionBus())}
		}
		url := benchEndpoint(b, opts...)
		hc := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 4}}
		b.Run(store+"/W1", func(b *testing.B) {
			sid := benchOpen(b, hc, url)
			benchPost(b, hc, url, sid, echoBody) // warm: scripts loaded, copies made
			before := counted(rt)
			b.ResetTimer()
			for b.Loop() {
				benchPost(b, hc, url, sid, echoBody)
			}
			b.StopTimer()
			if rt != nil {
				b.ReportMetric(float64(counted(rt)-before)/float64(b.N), "redis-rt/op")
			}
		})
		b.Run(store+"/open", func(b *testing.B) {
			benchOpen(b, hc, url)
			before := counted(rt)
			b.ResetTimer()
			for b.Loop() {
				benchOpen(b, hc, url)
			}
			b.StopTimer()
			if rt != nil {
				b.ReportMetric(float64(counted(rt)-before)/float64(b.N), "redis-rt/op")
			}
		})
	}
}

func counted(rt *roundTrips) int64 {
	if rt == nil {
		return 0
	}
	return rt.count()
}

// benchEndpoint serves an echo tool on a loopback Streamable HTTP endpoint.
func benchEndpoint(b *testing.B, opts ...streamable.HandlerOption) string {
	return benchEndpointTB(b, opts...)
}

func benchEndpointTB(b testing.TB, opts ...streamable.HandlerOption) string {
	s := server.New(mcp.Implementation{Name: "bench", Version: "1"})
	testtools.AddEcho(b, s, "Echo: ")
	h := streamable.NewHandler(s, append(opts, streamable.WithLimits(streamable.Limits{MaxSessions: 1 << 20}))...)
	ts := httptest.NewServer(h)
	b.Cleanup(func() { h.Close(); ts.Close() })
	return ts.URL
}

// benchOpen opens a session as a client does: initialize, then
// notifications/initialized.
func benchOpen(b *testing.B, hc *http.Client, url string) string {
	sid := benchPost(b, hc, url, "", initBody)
	benchPost(b, hc, url, sid, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	return sid
}

// benchPost sends one message and returns the session id answered.
func benchPost(b *testing.B, hc *http.Client, url, sid, body string) string {
	status, _, answered := postWith(b, hc, url, sid, body)
	if status/100 != 2 {
		b.Fatalf("status %d for %s", status, body)
	}
	return answered
}
