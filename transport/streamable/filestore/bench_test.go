package filestore

import (
	"net/http"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/toolwire/toolwire/transport/streamable"
)

// BenchmarkSessionStore is what keeping 2025-era sessions in a file costs:
// W1 (sequential tools/call of an echo tool on an open session) and open
// (initialize and notifications/initialized), over HTTP on loopback,
// against the same endpoint with sessions in memory only (none), and with
// the in-memory SessionStore (memstore: the handler's work for a store,
// without the file's). records/op counts the records written by one
// operation:
// go test -run '^$' -bench SessionStore -benchtime 2000x ./transport/streamable/filestore/
func BenchmarkSessionStore(b *testing.B) {
	for _, store := range []string{"none", "memstore", "file"} {
		// Each run gets an endpoint of its own: an endpoint admits a few
		// thousand anonymous sessions.
		setup := func(b *testing.B) (url string, ops func() int64) {
			var opts []streamable.HandlerOption
			var st *Store
			switch store {
			case "memstore":
				opts = []streamable.HandlerOption{streamable.WithSessionStore(streamable.NewMemorySessionStore())}
			case "file":
				var err error
				if st, err = Open(filepath.Join(b.TempDir(), "sessions.log")); err != nil {
					b.Fatal(err)
				}
				b.Cleanup(func() { st.Close() })
				opts = []streamable.HandlerOption{streamable.WithSessionStore(st)}
			}
			url, _ = endpoint(b, opts...)
			return url, func() int64 {
				if st == nil {
					return -1
				}
				return st.ops.Load()
			}
		}
		hc := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 4}}
		report := func(b *testing.B, ops func() int64, before int64) {
			if before >= 0 {
				b.ReportMetric(float64(ops()-before)/float64(b.N), "records/op")
			}
		}
		b.Run(store+"/W1", func(b *testing.B) {
			url, ops := setup(b)
			sid := benchOpen(b, hc, url)
			benchPost(b, hc, url, sid, echoBody)
			before := ops()
			b.ResetTimer()
			for b.Loop() {
				benchPost(b, hc, url, sid, echoBody)
			}
			b.StopTimer()
			report(b, ops, before)
		})
		b.Run(store+"/open", func(b *testing.B) {
			url, ops := setup(b)
			benchOpen(b, hc, url)
			before := ops()
			b.ResetTimer()
			for b.Loop() {
				benchOpen(b, hc, url)
			}
			b.StopTimer()
			report(b, ops, before)
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
	status, got, answered := post(b, hc, url, sid, body)
	if status/100 != 2 {
		b.Fatalf("status %d for %s: %s", status, body, got)
	}
	return answered
}

// BenchmarkStore is the store's own cost per operation, without HTTP:
// Touch of an established session (in memory, no record), Update and
// Create (one record each):
// go test -run '^$' -bench '^BenchmarkStore$' ./transport/streamable/filestore/
func BenchmarkStore(b *testing.B) {
	ctx := b.Context()
	st, err := Open(filepath.Join(b.TempDir(), "sessions.log"))
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	state := []byte(`{"version":"2025-11-25","clientInfo":{"name":"bench","version":"1"},"capabilities":{},"ready":true}`)
	if err := st.Create(ctx, &streamable.SessionRecord{ID: "s", State: state}, time.Hour); err != nil {
		b.Fatal(err)
	}
	b.Run("Touch", func(b *testing.B) {
		for b.Loop() {
			if _, err := st.Touch(ctx, "s", time.Hour); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("Update", func(b *testing.B) {
		for b.Loop() {
			if err := st.Update(ctx, "s", state, time.Hour); err != nil {
				b.Fatal(err)
			}
		}
	})
	i := 0 // ids stay unique across the runs of Create
	b.Run("Create", func(b *testing.B) {
		for b.Loop() {
			i++
			if err := st.Create(ctx, &streamable.SessionRecord{ID: "c" + strconv.Itoa(i), State: state}, time.Hour); err != nil {
				b.Fatal(err)
			}
		}
	})
}
