package sqlitestore

import (
	"net/http"
	"path/filepath"
	"testing"

	"github.com/toolwire/toolwire/transport/streamable"
)

// BenchmarkSessionStore is what keeping 2025-era sessions in SQLite costs:
// W1 (sequential tools/call of an echo tool on an open session) and open
// (initialize and notifications/initialized), over HTTP on loopback,
// against the same endpoint with sessions in memory only. sqlite-ops/op
// counts the SQLite statements of one operation:
// go test -run '^$' -bench SessionStore -benchtime 2000x ./transport/streamable/sqlitestore/
func BenchmarkSessionStore(b *testing.B) {
	for _, store := range []string{"memory", "sqlite"} {
		var opts []streamable.HandlerOption
		var st *Store
		if store == "sqlite" {
			var err error
			if st, err = Open(filepath.Join(b.TempDir(), "sessions.db")); err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { st.Close() })
			opts = []streamable.HandlerOption{streamable.WithSessionStore(st)}
		}
		url, _ := endpoint(b, opts...)
		hc := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 4}}
		ops := func() int64 {
			if st == nil {
				return 0
			}
			return st.ops.Load()
		}
		report := func(b *testing.B, before int64) {
			if st != nil {
				b.ReportMetric(float64(ops()-before)/float64(b.N), "sqlite-ops/op")
			}
		}
		b.Run(store+"/W1", func(b *testing.B) {
			sid := benchOpen(b, hc, url)
			benchPost(b, hc, url, sid, echoBody)
			before := ops()
			b.ResetTimer()
			for b.Loop() {
				benchPost(b, hc, url, sid, echoBody)
			}
			b.StopTimer()
			report(b, before)
		})
		b.Run(store+"/open", func(b *testing.B) {
			benchOpen(b, hc, url)
			before := ops()
			b.ResetTimer()
			for b.Loop() {
				benchOpen(b, hc, url)
			}
			b.StopTimer()
			report(b, before)
		})
	}
}

// benchOpen opens a session as a client does: initialize, then
// notifications/initialized.
func benchOpen(b *testing.B, hc *http.Client, url string) string {
	sid := benchPost(b, hc, url, "", initBody)
	benchPost(b, hc, url, sid, readyBody)
	return sid
}

// benchPost sends one message and returns the session id answered.
func benchPost(b *testing.B, hc *http.Client, url, sid, body string) string {
	status, _, answered := post(b, hc, url, sid, body)
	if status/100 != 2 {
		b.Fatalf("status %d for %s", status, body)
	}
	return answered
}
