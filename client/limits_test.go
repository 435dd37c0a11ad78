package client_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"runtime"
	"runtime/metrics"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/toolwire/toolwire/client"
	"github.com/toolwire/toolwire/jsonrpc"
	"github.com/toolwire/toolwire/mcp"
)

// The client's limits against servers hostile on purpose: a reply stream
// that never answers, replies of 1 GiB. Figures are logged with -v.

const (
	mib = 1 << 20
	gib = 1 << 30
)

// heapAfterGC is the live heap once garbage is collected: the heap the
// collection marked (runtime/metrics /gc/heap/live:bytes), which what other
// goroutines allocate after it does not inflate, as HeapAlloc would be.
func heapAfterGC() uint64 {
	runtime.GC()
	s := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

// settledHeap is the least of a few heapAfterGC samples taken while
// nothing is sent to the client, 10 ms apart: what the client still
// allocates for data already buffered can only add to a sample.
func settledHeap() uint64 {
	least := heapAfterGC()
	for range 3 {
		time.Sleep(10 * time.Millisecond)
		least = min(least, heapAfterGC())
	}
	return least
}

// totalAlloc is the bytes allocated since the program started.
func totalAlloc() uint64 {
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.TotalAlloc
}

// sseNoise is about size bytes of SSE the client reads and drops: comments
// (keep-alives, some of pad bytes), events of another type (some with pad
// bytes of data), events without data that set id and retry,
// notifications nobody listens to, progress for no request, a response to
// no request, and an empty data field.
func sseNoise(size, pad int) []byte {
	var b bytes.Buffer
	for i := 0; b.Len() < size; i++ {
		fmt.Fprintf(&b, ": keep-alive %d\n\n", i)
		fmt.Fprintf(&b, ": %s\n\n", strings.Repeat("k", pad))
		fmt.Fprintf(&b, "event: ping\ndata: {\"seq\":%d}\n\n", i)
		fmt.Fprintf(&b, "event: ping\ndata: {\"seq\":%d,\"pad\":%q}\n\n", i, strings.Repeat("p", pad))
		fmt.Fprintf(&b, "id: ev-%d\nretry: 3000\n\n", i)
		b.WriteString(sseData(`{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"debug","data":"` + strings.Repeat("n", 300) + `"}}`))
		b.WriteString(sseData(`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"nobody's","progress":1}}`))
		b.WriteString(sseData(`{"jsonrpc":"2.0","id":987654321,"result":{}}`))
		b.WriteString("data\n\n")
	}
	return b.Bytes()
}

// streamNoise writes chunk to w again and again until the client goes away
// or, when limit > 0, limit bytes are written; every written byte is
// added to n, and at each multiple of every bytes (when every > 0) onMark
// is called with the total. It returns the write error that ended it, nil
// at the limit.
func streamNoise(w http.ResponseWriter, chunk []byte, limit int64, n *atomic.Int64, every int64, onMark func(int64)) error {
	fl := w.(http.Flusher)
	next := every
	for limit <= 0 || n.Load() < limit {
		m, err := w.Write(chunk)
		total := n.Add(int64(m))
		if err != nil {
			return err
		}
		fl.Flush()
		if every > 0 && total >= next {
			onMark(total)
			next += every
		}
	}
	return nil
}

// A POST whose SSE reply sends keep-alives and events the client does not
// need for ever, never the response: the call ends with the client's
// timeout error, the stream is closed (the server's write fails), in both
// eras.
func TestHTTPEndlessSSEStreamTimesOut(t *testing.T) {
	chunk := sseNoise(64<<10, 1<<10)
	for _, era := range []mcp.Era{mcp.EraLegacy, mcp.EraModern} {
		t.Run(era.String(), func(t *testing.T) {
			var written atomic.Int64
			ended := make(chan error, 1)
			endless := func(w http.ResponseWriter, r *http.Request, req *jsonrpc.Request) {
				w.Header().Set("Content-Type", "text/event-stream")
				w.WriteHeader(200)
				ended <- streamNoise(w, chunk, 0, &written, 0, nil)
			}
			f := modernFake(t, `[]`, endless)
			if era == mcp.EraLegacy {
				f.handle = func(w http.ResponseWriter, r *http.Request, req *jsonrpc.Request) bool {
					if req.Method != "tools/call" {
						return false
					}
					endless(w, r, req)
					return true
				}
			}
			// The timeout given to the call, not to Connect, which a loaded
			// machine may take longer than 300 ms to finish.
			c := connect(t, f.transport(), client.WithEra(era))
			_, err := c.CallTool(context.Background(), "endless", nil, client.WithOutputValidation(false), client.WithTimeout(300*time.Millisecond))
			if client.CodeOf(err) != client.CodeTransport || !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "no response within 300ms") {
				t.Fatalf("err = %v, want the client's timeout (a transport error, context.DeadlineExceeded)", err)
			}
			writeFails(t, ended, "the server stopped writing without an error", "the stream was not closed: the server still writes a minute after the call ended")
			t.Logf("%s: the server streamed %.1f MiB of events before the timeout closed the stream", era, float64(written.Load())/mib)
		})
	}
}

// While the server streams 200 MiB of events the client does not need, the
// client's live heap, measured every 25 MiB, does not grow by more than
// endlessSlack: nothing is accumulated (measured: under 0.1 MiB). The
// response that comes after them is still read.
func TestHTTPEndlessSSEStreamMemory(t *testing.T) {
	const (
		total        = 200 * mib
		every        = 25 * mib
		endlessSlack = 1 * mib
	)
	chunk := sseNoise(256<<10, 32<<10)
	var written atomic.Int64
	var peak atomic.Uint64
	f := modernFake(t, `[]`, func(w http.ResponseWriter, r *http.Request, req *jsonrpc.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(200)
		err := streamNoise(w, chunk, total, &written, every, func(int64) {
			h := settledHeap()
			t.Logf("mark %d MiB: %.3f MiB", written.Load()/mib, float64(h)/mib)
			if h > peak.Load() {
				peak.Store(h)
			}
		})
		if err == nil {
			io.WriteString(w, sseData(`{"jsonrpc":"2.0","id":`+req.ID.String()+`,"result":`+textResult("at last")+`}`))
		}
	})
	c := connect(t, f.transport(), client.WithTimeout(2*time.Minute))
	base := settledHeap()
	alloc := totalAlloc()
	res, err := c.CallTool(context.Background(), "endless", nil, client.WithOutputValidation(false))
	if err != nil {
		t.Fatal(err)
	}
	if textOf(res) != "at last" {
		t.Fatalf("result %+v", res)
	}
	churn := totalAlloc() - alloc
	grew := int64(peak.Load()) - int64(base)
	t.Logf("streamed %d MiB of events: live heap %.2f MiB before, at most %.2f MiB while streaming (%+.2f MiB; slack %d MiB); %.0f MiB allocated in all",
		written.Load()/mib, float64(base)/mib, float64(peak.Load())/mib, float64(grew)/mib, endlessSlack/mib, float64(churn)/mib)
	if written.Load() < total {
		t.Fatalf("the server wrote %d bytes, want %d", written.Load(), total)
	}
	if grew > endlessSlack {
		t.Errorf("the live heap grew by %d bytes while the server streamed %d MiB of events, want at most %d", grew, total/mib, endlessSlack)
	}
}

// countingBodies wraps the body of every response to a 2026-07-28
// tools/call (Mcp-Method) its client reads, adding the bytes read from
// them to n.
type countingBodies struct {
	base http.RoundTripper
	n    *atomic.Int64
}

func (c countingBodies) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := c.base.RoundTrip(r)
	if err == nil && r.Header.Get("Mcp-Method") == "tools/call" {
		resp.Body = countedBody{resp.Body, c.n}
	}
	return resp, err
}

type countedBody struct {
	io.ReadCloser
	n *atomic.Int64
}

func (b countedBody) Read(p []byte) (int, error) {
	m, err := b.ReadCloser.Read(p)
	b.n.Add(int64(m))
	return m, err
}

// hugeReplies are replies of 1 GiB to a tools/call: a JSON body (its
// length declared, or chunked) and SSE, as one data line, as endless data
// lines of one event, and as one endless comment line. An SSE event's limit
// is on its data; wire is how many bytes carry one byte of it (the field
// name and line end of each data line add to it).
var hugeReplies = []struct {
	name        string
	contentType string
	declared    bool
	head        string // then filler bytes up to 1 GiB, never the end
	filler      string
	wire        float64
}{
	{"JSON, length declared", "application/json", true, `{"jsonrpc":"2.0","id":%s,"result":{"content":[{"type":"text","text":"`, "x", 1},
	{"JSON, chunked", "application/json", false, `{"jsonrpc":"2.0","id":%s,"result":{"content":[{"type":"text","text":"`, "x", 1},
	{"SSE, one data line", "text/event-stream", false, `event: message` + "\n" + `data: {"jsonrpc":"2.0","id":%s,"result":{"content":[{"type":"text","text":"`, "x", 1},
	{"SSE, endless data lines", "text/event-stream", false, "event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":%s,\"result\":{\"content\":[{\"type\":\"text\",\"text\":\"\n", "data: " + strings.Repeat("x", 1017) + "\n", 1024.0 / 1018},
	{"SSE, one comment line", "text/event-stream", false, ": ", "x", 1},
}

// writeHuge writes head and then filler up to 1 GiB in all, adding every
// byte written to n; it returns the write error that stopped it.
func writeHuge(w http.ResponseWriter, contentType string, declared bool, head, filler string, n *atomic.Int64) error {
	w.Header().Set("Content-Type", contentType)
	if declared {
		w.Header().Set("Content-Length", fmt.Sprint(gib))
	}
	w.WriteHeader(200)
	m, err := io.WriteString(w, head)
	n.Add(int64(m))
	if err != nil {
		return err
	}
	block := []byte(strings.Repeat(filler, (64<<10)/len(filler)))
	for n.Load() < gib {
		m, err := w.Write(block[:min(len(block), int(gib-n.Load()))])
		n.Add(int64(m))
		if err != nil {
			return err
		}
	}
	return nil
}

// A reply of 1 GiB is refused with a transport error naming the limit,
// having read from the body no more than the limit (in the wire bytes that
// carry it) plus hugeReadSlack (the SSE reader reads ahead 32 KiB), and
// nothing at all of a JSON body whose declared length is over the limit;
// allocating no more than hugeAllocFactor times the limit plus
// hugeAllocSlack for it (buffers at most double as they grow); and the
// connection is closed rather than drained: the server's writes fail. For
// the client's default limit and a smaller one.
func TestHTTPHugeReplyRefused(t *testing.T) {
	const (
		hugeReadSlack   = 64 << 10
		hugeAllocFactor = 2.5
		hugeAllocSlack  = 2 * mib
		hugeWriteSlack  = 64 * mib
	)
	for _, limit := range []int{1 * mib, client.DefaultMaxMessageSize} {
		for _, tc := range hugeReplies {
			t.Run(fmt.Sprintf("%s/limit %d MiB", tc.name, limit/mib), func(t *testing.T) {
				var written, read atomic.Int64
				ended := make(chan error, 1)
				f := modernFake(t, `[]`, func(w http.ResponseWriter, r *http.Request, req *jsonrpc.Request) {
					ended <- writeHuge(w, tc.contentType, tc.declared, strings.Replace(tc.head, "%s", req.ID.String(), 1), tc.filler, &written)
				})
				hc := &http.Client{Transport: countingBodies{http.DefaultTransport.(*http.Transport).Clone(), &read}}
				opts := []client.Option{client.WithTimeout(time.Minute)}
				if limit != client.DefaultMaxMessageSize {
					opts = append(opts, client.WithLimits(client.Limits{MaxMessageBytes: limit}))
				}
				c := connect(t, &client.HTTP{URL: f.url(), Client: hc}, opts...)
				if _, err := c.ListTools(context.Background()); err != nil { // listed before the call, for its Mcp-Param headers
					t.Fatal(err)
				}
				alloc := totalAlloc()
				_, err := c.CallTool(context.Background(), "huge", nil, client.WithOutputValidation(false))
				allocated := totalAlloc() - alloc
				var te *client.TransportError
				if !errors.As(err, &te) || client.CodeOf(err) != client.CodeTransport || !strings.Contains(err.Error(), fmt.Sprintf("exceeds the %d-byte limit on message size", limit)) {
					t.Fatalf("err = %v, want a transport error naming the %d-byte limit", err, limit)
				}
				writeFails(t, ended, "the server wrote the whole GiB: the client read it all", "the server still writes a minute after the call ended: the connection was not closed")
				t.Logf("limit %d MiB: read %d bytes of the body (limit%+d), the server wrote %.1f MiB before its write failed, %.1f MiB allocated during the call",
					limit/mib, read.Load(), read.Load()-int64(limit), float64(written.Load())/mib, float64(allocated)/mib)
				want := int64(float64(limit)*tc.wire) + hugeReadSlack
				if tc.declared {
					want = 0
				}
				if r := read.Load(); r > want {
					t.Errorf("the client read %d bytes of the body, want at most %d (the limit of %d in wire bytes, + %d)", r, want, limit, hugeReadSlack)
				}
				// What the server got written also counts the socket buffers
				// of both ends (a few MiB on loopback): far from the GiB.
				if w := written.Load(); w > int64(float64(limit)*tc.wire)+hugeWriteSlack {
					t.Errorf("the server wrote %d bytes before its write failed, want at most %d + %d", w, limit, hugeWriteSlack)
				}
				if max := uint64(hugeAllocFactor*float64(limit)) + hugeAllocSlack; allocated > max {
					t.Errorf("the call allocated %d bytes, want at most %d (%.1f times the limit + %d)", allocated, max, hugeAllocFactor, hugeAllocSlack)
				}
			})
		}
	}
}

// writeFails waits for a server's endless write to end, as the client
// closing the connection makes it: a write that ended without an error
// fails the test with whole, and one still going on a minute later (a
// bound for a hang, not a speed) with hang.
func writeFails(t *testing.T, ended <-chan error, whole, hang string) {
	t.Helper()
	select {
	case werr := <-ended:
		if werr == nil {
			t.Fatal(whole)
		}
	case <-time.After(time.Minute):
		t.Fatal(hang)
	}
}
