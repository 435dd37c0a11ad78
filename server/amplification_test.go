package server_test

import (
	"bytes"
	"context"
	"runtime"
	"runtime/metrics"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/toolwire/toolwire/jsonrpc"
	"github.com/toolwire/toolwire/mcp"
	"github.com/toolwire/toolwire/server"
	"github.com/toolwire/toolwire/transport"
	"github.com/toolwire/toolwire/transport/stdio"
)

// The amplification of one request: how many bytes the server allocates
// per byte of the request's body while decoding and serving it, and the
// peak of the live heap meanwhile. Run with -v to see the figures:
//
//	go test -run 'TestAmplification' -v -count=1 ./server

// smallInts is a JSON array of n small integers, "[0,1,...,9,0,1,...]":
// two bytes per element, the densest way to ask a decoder for values.
func smallInts(n int) []byte {
	b := make([]byte, 0, 2*n+1)
	b = append(b, '[')
	for i := range n {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendInt(b, int64(i%10), 10)
	}
	return append(b, ']')
}

// amplificationElems makes the array 3,000,000 bytes (2.86 MiB), the size
// of the report.
const amplificationElems = 1_500_000

// usage is what one run cost.
type usage struct {
	body      int
	allocated uint64 // bytes allocated during the run (TotalAlloc delta)
	peak      uint64 // the highest live heap seen, above the heap before
}

func (u usage) perByte() float64 { return float64(u.allocated) / float64(u.body) }

// measure runs f once after a warm-up run, and reports the bytes it
// allocated (runtime.MemStats.TotalAlloc, exact) and the peak of the heap's
// objects (live, or dead and not yet freed: what the process holds) above
// the heap it started with, sampled by a goroutine while f runs: a figure
// for the report, never asserted.
func measure(body int, f func()) usage {
	f() // warm-up: caches, pools, lazily built plans
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(sample)
	base := sample[0].Value.Uint64()
	var peak atomic.Uint64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
		for {
			metrics.Read(s)
			if v := s[0].Value.Uint64(); v > peak.Load() {
				peak.Store(v)
			}
			select {
			case <-stop:
				return
			default:
				time.Sleep(20 * time.Microsecond)
			}
		}
	}()
	f()
	close(stop)
	wg.Wait()
	runtime.ReadMemStats(&after)
	u := usage{body: body, allocated: after.TotalAlloc - before.TotalAlloc}
	if p := peak.Load(); p > base {
		u.peak = p - base
	}
	return u
}

type intsIn struct {
	Values []int `json:"values"`
}

// amplificationServer has a typed tool over []int and a raw tool with the
// same schema, both doing nothing with their input but counting it.
func amplificationServer(t testing.TB) *server.Server {
	t.Helper()
	s := server.New(mcp.Implementation{Name: "amp", Version: "1"})
	if err := server.AddTool(s, &mcp.Tool{Name: "typed"}, func(ctx context.Context, req *server.CallRequest, in intsIn) (string, error) {
		return strconv.Itoa(len(in.Values)), nil
	}); err != nil {
		t.Fatal(err)
	}
	if err := server.AddRawTool(s, &mcp.Tool{Name: "raw", InputSchema: []byte(`{"type":"object"}`)}, func(ctx context.Context, req *server.CallRequest) (*mcp.CallToolResult, error) {
		return mcp.ErrorResult("%d bytes", len(req.Arguments)), nil
	}); err != nil {
		t.Fatal(err)
	}
	if err := server.AddRawTool(s, &mcp.Tool{Name: "tree", InputSchema: []byte(`{"type":"object","anyOf":[{"required":["values"]},{"required":["other"]}],"properties":{"values":{"type":"array","items":{"type":"integer"}}}}`)}, func(ctx context.Context, req *server.CallRequest) (*mcp.CallToolResult, error) {
		return mcp.ErrorResult("%d bytes", len(req.Arguments)), nil
	}); err != nil {
		t.Fatal(err)
	}
	return s
}

// amplificationCase is a message measured, with the bound asserted on the
// bytes allocated per body byte while it is decoded and served, and what the
// reply must be.
type amplificationCase struct {
	name, msg string
	bound     float64 // allocated bytes per body byte, at most (with room for -race)
	isError   bool    // the reply is an isError result
	// before is the figure measured before the fix (issue: 118-133 MiB of
	// heap for one such request), for the record.
	before string
}

// amplificationCases put the array in the arguments of a typed tool (its
// handler decodes []int: 8 bytes per 2-byte element, plus slice growth, is
// what remains), of a raw tool, and of a tool whose schema needs a decoded
// tree (the fallback, the worst case left); invalid arguments; and _meta
// where the server reads only its own keys.
func amplificationCases() []amplificationCase {
	ints := string(smallInts(amplificationElems))
	call := func(tool, args, meta string) string {
		return `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"` + tool + `","arguments":` + args + meta + `}}`
	}
	return []amplificationCase{
		{"typed tool arguments", call("typed", `{"values":`+ints+`}`, ""), 30, false, "218.2 B/B allocated, peak heap +142 MiB"},
		{"raw tool arguments", call("raw", `{"values":`+ints+`}`, ""), 1, true, "54.0 B/B, peak +70-101 MiB"},
		{"typed, invalid", call("typed", `{"values":`+strings.ReplaceAll(ints, "1", `"x"`)+`}`, ""), 1, true, "209.0 B/B, peak +175 MiB"},
		{"tree schema", call("tree", `{"values":`+ints+`}`, ""), 400, true, "196.4 B/B, peak +141 MiB: unchanged, the validator needs the tree"},
		{"tools/call _meta", call("raw", `{}`, `,"_meta":{"progressToken":"p","x":`+ints+`}`), 1, true, "0.0 B/B (already scanned)"},
		{"2026 tools/call _meta", call("raw", `{}`, `,"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"x":`+ints+`}`), 1, true, "0.0 B/B"},
		{"tools/list _meta", `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"progressToken":"p","x":` + ints + `}}}`, 1, false, "54.0 B/B, peak +99 MiB"},
		{"ping _meta", `{"jsonrpc":"2.0","id":1,"method":"ping","params":{"_meta":{"x":` + ints + `}}}`, 1, false, "0.0 B/B"},
	}
}

// serveOne decodes one message and serves it on a session.
func serveOne(t testing.TB, ss *server.Session, msg []byte) *jsonrpc.Response {
	m, _, derr := jsonrpc.Decode(msg)
	if derr != nil {
		t.Fatalf("decode: %v", derr)
	}
	return ss.HandleRequest(context.Background(), m.(*jsonrpc.Request), discard{})
}

func initializedSession(t testing.TB, s *server.Server) *server.Session {
	ss := s.NewSession(nil)
	t.Cleanup(ss.Close)
	init := []byte(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"b","version":"1"}}}`)
	if r := serveOne(t, ss, init); r == nil || r.Error != nil {
		t.Fatalf("initialize: %+v", r)
	}
	return ss
}

// TestAmplification bounds what one large request costs: the bytes
// allocated while it is decoded and served, per byte of its body, measured
// exactly (TotalAlloc) after a warm-up. Run with -v for the figures, the
// peak heap among them.
func TestAmplification(t *testing.T) {
	if testing.Short() {
		t.Skip("decodes some 40 MiB of JSON")
	}
	s := amplificationServer(t)
	ss := initializedSession(t, s)
	for _, c := range amplificationCases() {
		msg := []byte(c.msg)
		var resp *jsonrpc.Response
		u := measure(len(msg), func() { resp = serveOne(t, ss, msg) })
		if resp == nil || resp.Error != nil {
			t.Fatalf("%s: %+v", c.name, resp)
		}
		if isError := bytes.Contains(resp.Result, []byte(`"isError":true`)); isError != c.isError {
			t.Errorf("%s: isError %v, want %v: %.200s", c.name, isError, c.isError, resp.Result)
		}
		if len(resp.Result) > 64<<10 {
			t.Errorf("%s: a reply of %d bytes", c.name, len(resp.Result))
		}
		t.Logf("%-22s body %5.2f MiB: allocated %6.1f MiB = %5.1f bytes per body byte; peak heap +%5.1f MiB (before: %s)", c.name,
			float64(u.body)/(1<<20), float64(u.allocated)/(1<<20), u.perByte(), float64(u.peak)/(1<<20), c.before)
		if u.perByte() > c.bound {
			t.Errorf("%s: %.1f bytes allocated per body byte, want at most %.0f", c.name, u.perByte(), c.bound)
		}
	}

	// One 8 MiB stdio line (the largest stdio.Serve accepts by default),
	// read, decoded and served through transport.Serve: before the fix,
	// 216.7 bytes allocated per body byte, peak heap +318 MiB (the issue
	// saw 283 MiB).
	n := (stdio.DefaultMaxMessageSize - 200) / 2
	line := []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"typed","arguments":{"values":` + string(smallInts(n)) + `}}}`)
	init := `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"b","version":"1"}}}` + "\n"
	input := append([]byte(init), line...)
	input = append(input, '\n')
	var out bytes.Buffer
	u := measure(len(line), func() {
		out.Reset()
		// The input ends at once: the drain timeout is only a failure
		// bound (under -race the call takes seconds).
		if err := stdio.Serve(context.Background(), s, bytes.NewReader(input), &out, transport.WithLimits(transport.Limits{DrainTimeout: time.Minute})); err != nil {
			t.Fatal(err)
		}
	})
	if !bytes.Contains(out.Bytes(), []byte(`"text":"`+strconv.Itoa(n)+`"`)) {
		t.Fatalf("the 8 MiB line was not served: %.300s", out.Bytes()[bytes.IndexByte(out.Bytes(), '\n')+1:])
	}
	t.Logf("%-22s body %5.2f MiB: allocated %6.1f MiB = %5.1f bytes per body byte; peak heap +%5.1f MiB (before: 216.7 B/B, peak +318 MiB)", "stdio line",
		float64(u.body)/(1<<20), float64(u.allocated)/(1<<20), u.perByte(), float64(u.peak)/(1<<20))
	if u.perByte() > 30 {
		t.Errorf("stdio line: %.1f bytes allocated per body byte, want at most 30", u.perByte())
	}
}
