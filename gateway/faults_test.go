package gateway_test

// Hostile upstreams, written here, next to a well-behaved one that must
// keep serving: one that sends 10,000 progress notifications and 10,000
// log messages before its result, and one whose result is 1 GiB (generated
// as it is written, never held by the test), over Streamable HTTP (a JSON
// body, an SSE event) and over stdio (this test binary, re-executed). The
// gateway must stay within its memory limits, end the 1 GiB call with an
// isError result naming the upstream and its message size limit, keep the
// upstream's session, and serve the other upstream throughout. (Upstreams
// that answer garbage or hang: TestGarbageReplyIsError, TestTimeoutIsError.)

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/toolwire/toolwire/client"
	"github.com/toolwire/toolwire/gateway"
	"github.com/toolwire/toolwire/internal/testmcp"
	"github.com/toolwire/toolwire/internal/testwait"
	"github.com/toolwire/toolwire/jsonrpc"
	"github.com/toolwire/toolwire/mcp"
)

const (
	floodCount = 10_000  // progress notifications, and as many log messages, before the result
	hugeSize   = 1 << 30 // bytes of the hostile result
	pauseAfter = 1 << 20 // the huge answer pauses after this much, until the test has called the other upstream
	// heapAllowance is the most the gateway's heap may grow during a hostile
	// call: far below the 1 GiB payload, above the limits under test.
	heapAllowance = 64 << 20
)

// floodStructured is the flood's structuredContent, odd spacing included:
// it must come through byte for byte.
const floodStructured = `{"notifications": 20000, "kept":"as sent"}`

// init makes the test binary a hostile stdio upstream when TW_GW_HOSTILE is
// set (before TestMain runs, which owns TW_GW_FAKE): "huge" or "flood",
// pausing as told by files in TW_GW_DIR (see stdioPause).
func init() {
	if mode := os.Getenv("TW_GW_HOSTILE"); mode != "" {
		hostileStdio(mode, os.Getenv("TW_GW_DIR"))
		os.Exit(0)
	}
}

// framing wraps one message on the wire.
type framing struct{ before, after string }

var (
	plainJSON = framing{}
	sseEvent  = framing{"data: ", "\n\n"}
	stdioLine = framing{"", "\n"}
)

// countingWriter counts the bytes its writer accepted.
type countingWriter struct {
	w io.Writer
	n *atomic.Int64
}

func (c countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n.Add(int64(n))
	return n, err
}

// hugeAnswer writes a tools/call result of hugeSize bytes (a text block of
// x's), a 64 KiB chunk at a time, calling pause once after pauseAfter
// bytes (false from pause: stop). It returns the error that stopped it,
// nil when all of it was written.
func hugeAnswer(w io.Writer, fr framing, id string, flush func(), pause func() bool) error {
	prefix := fr.before + `{"jsonrpc":"2.0","id":` + id + `,"result":{"content":[{"type":"text","text":"`
	suffix := `"}]}}` + fr.after
	if _, err := io.WriteString(w, prefix); err != nil {
		return err
	}
	chunk := []byte(strings.Repeat("x", 64<<10))
	left := hugeSize - len(prefix) - len(suffix)
	paused := false
	for sent := 0; left > 0; {
		n := min(left, len(chunk))
		if _, err := w.Write(chunk[:n]); err != nil {
			return err
		}
		left -= n
		sent += n
		if !paused && sent >= pauseAfter {
			paused = true
			flush()
			if !pause() {
				return errors.New("stopped while paused")
			}
		}
	}
	_, err := io.WriteString(w, suffix)
	flush()
	return err
}

// floodAnswer writes floodCount progress notifications for token (each
// followed by a log message carrying its number), then the result, calling
// pause once halfway.
func floodAnswer(w io.Writer, fr framing, id, token string, flush func(), pause func() bool) error {
	bw := bufio.NewWriterSize(w, 32<<10)
	for i := 1; i <= floodCount; i++ {
		fmt.Fprintf(bw, `%s{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":%s,"progress":%d,"total":%d,"message":"step %d"}}%s`,
			fr.before, token, i, floodCount, i, fr.after)
		fmt.Fprintf(bw, `%s{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","logger":"flood","data":%d}}%s`,
			fr.before, i, fr.after)
		if i%100 == 0 || i == floodCount/2 {
			if err := bw.Flush(); err != nil {
				return err
			}
			flush()
		}
		if i == floodCount/2 && !pause() {
			return errors.New("stopped while paused")
		}
	}
	fmt.Fprintf(bw, `%s{"jsonrpc":"2.0","id":%s,"result":{"content":[{"type":"text","text":"flood over"}],"structuredContent":%s}}%s`,
		fr.before, id, floodStructured, fr.after)
	err := bw.Flush()
	flush()
	return err
}

// answer is the hostile upstream's reply to a request other than the
// hostile call: a session that works, tools work (hostile) and small, and
// -32601 for everything else (server/discover too: a 2025-era server).
func answer(req *jsonrpc.Request) string {
	id, _ := json.Marshal(req.ID)
	result := ""
	switch req.Method {
	case mcp.MethodInitialize:
		result = `{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"hostile","version":"1"}}`
	case mcp.MethodListTools:
		result = `{"tools":[{"name":"work","inputSchema":{"type":"object"}},{"name":"small","inputSchema":{"type":"object"}}]}`
	case mcp.MethodPing:
		result = `{}`
	case mcp.MethodCallTool:
		result = `{"content":[{"type":"text","text":"small from ` + strconv.Itoa(os.Getpid()) + `"}]}`
	default:
		return fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"error":{"code":-32601,"message":"no %s here"}}`, id, req.Method)
	}
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":%s}`, id, result)
}

// hostileCall says whether req is a call of the hostile tool, and its
// progress token (null when none).
func hostileCall(req *jsonrpc.Request) (bool, string) {
	var p struct {
		Name string `json:"name"`
		Meta struct {
			ProgressToken json.RawMessage `json:"progressToken"`
		} `json:"_meta"`
	}
	if req.Method != mcp.MethodCallTool || json.Unmarshal(req.Params, &p) != nil || p.Name != "work" {
		return false, ""
	}
	if len(p.Meta.ProgressToken) == 0 {
		return true, "null"
	}
	return true, string(p.Meta.ProgressToken)
}

// hostileHTTP is a Streamable HTTP upstream (2025-11-25, one session)
// whose tool work answers its first call as mode says: "flood" (an SSE
// stream), "json" (a 1 GiB JSON body, chunked) or "sse" (one 1 GiB SSE
// event); later calls, and tool small, get a small result.
type hostileHTTP struct {
	mode     string
	srv      *httptest.Server
	started  chan struct{} // closed when the hostile answer is paused partway
	release  chan struct{} // closed by the test: the answer goes on
	done     chan struct{} // closed when the hostile answer's handler has returned
	written  atomic.Int64  // bytes of the hostile answer written to the connection
	writeErr error         // why it stopped; read after done
	calls    atomic.Int32  // hostile calls begun
	relOnce  sync.Once
}

func newHostileHTTP(t *testing.T, mode string) *hostileHTTP {
	h := &hostileHTTP{mode: mode, started: make(chan struct{}), release: make(chan struct{}), done: make(chan struct{})}
	h.srv = httptest.NewServer(http.HandlerFunc(h.serve))
	t.Cleanup(func() {
		h.let()
		h.srv.Close()
	})
	return h
}

func (h *hostileHTTP) url() string { return h.srv.URL + "/mcp" }

// let releases the paused answer.
func (h *hostileHTTP) let() { h.relOnce.Do(func() { close(h.release) }) }

func (h *hostileHTTP) serve(w http.ResponseWriter, r *http.Request) {
	switch r.Method {
	case http.MethodPost:
	case http.MethodDelete:
		return
	default:
		w.WriteHeader(http.StatusMethodNotAllowed) // no standalone stream
		return
	}
	body, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	msg, _, derr := jsonrpc.Decode(body)
	req, ok := msg.(*jsonrpc.Request)
	if derr != nil || !ok {
		w.WriteHeader(http.StatusAccepted) // notifications and replies
		return
	}
	hostile, token := hostileCall(req)
	if !hostile || h.calls.Add(1) > 1 {
		w.Header().Set("Content-Type", "application/json")
		if req.Method == mcp.MethodInitialize {
			w.Header().Set(mcp.HeaderSessionID, "hostile-session")
		}
		_, _ = io.WriteString(w, answer(req))
		return
	}
	defer close(h.done)
	flusher := w.(http.Flusher)
	out := countingWriter{w, &h.written}
	pause := func() bool {
		close(h.started)
		t := time.NewTimer(20 * time.Second) // the test went away
		defer t.Stop()
		select {
		case <-h.release:
			return true
		case <-r.Context().Done():
		case <-t.C:
		}
		return false
	}
	id, _ := json.Marshal(req.ID)
	switch h.mode {
	case "flood":
		w.Header().Set("Content-Type", "text/event-stream")
		h.writeErr = floodAnswer(out, sseEvent, string(id), token, flusher.Flush, pause)
	case "json":
		w.Header().Set("Content-Type", "application/json") // no Content-Length: read until the limit
		h.writeErr = hugeAnswer(out, plainJSON, string(id), flusher.Flush, pause)
	case "sse":
		w.Header().Set("Content-Type", "text/event-stream")
		h.writeErr = hugeAnswer(out, sseEvent, string(id), flusher.Flush, pause)
	}
}

// hostileStdio serves stdin and stdout as the hostile upstream: the
// hostile answer is written on its own goroutine (so requests are still
// read meanwhile), pausing until the test creates dir/release.
func hostileStdio(mode, dir string) {
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 64<<10), 1<<20)
	var mu sync.Mutex // one message at a time on stdout
	out := bufio.NewWriterSize(os.Stdout, 64<<10)
	send := func(s string) {
		mu.Lock()
		defer mu.Unlock()
		out.WriteString(s + "\n")
		out.Flush()
	}
	pause := func() bool {
		_ = os.WriteFile(filepath.Join(dir, "started"), nil, 0o600)
		for range 2000 { // 20 s at most
			if _, err := os.Stat(filepath.Join(dir, "release")); err == nil {
				return true
			}
			time.Sleep(10 * time.Millisecond)
		}
		return false
	}
	var once sync.Once
	for in.Scan() {
		msg, _, err := jsonrpc.Decode(in.Bytes())
		req, ok := msg.(*jsonrpc.Request)
		if err != nil || !ok {
			continue
		}
		hostile, token := hostileCall(req)
		if !hostile {
			send(answer(req))
			continue
		}
		once.Do(func() {
			go func() {
				id, _ := json.Marshal(req.ID)
				mu.Lock()
				defer mu.Unlock()
				if mode == "flood" {
					_ = floodAnswer(out, stdioLine, string(id), token, func() { out.Flush() }, pause)
				} else {
					_ = hugeAnswer(out, stdioLine, string(id), func() { out.Flush() }, pause)
				}
			}()
		})
	}
}

// stdioHostile is the test binary as a hostile stdio upstream, and the
// directory through which it says it paused and is released.
func stdioHostile(t *testing.T, name, mode string) (gateway.Upstream, string) {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	t.Cleanup(func() { _ = os.WriteFile(filepath.Join(dir, "release"), nil, 0o600) })
	return gateway.Upstream{Name: name, Command: []string{exe}, Env: map[string]string{"TW_GW_HOSTILE": mode, "TW_GW_DIR": dir}, Timeout: testwait.Limit}, dir
}

// heapPeak samples the process's heap in use until stopped, to find how
// far it rose above where it started.
type heapPeak struct {
	base, peak uint64
	stop, done chan struct{}
}

func watchHeap() *heapPeak {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	h := &heapPeak{base: ms.HeapInuse, peak: ms.HeapInuse, stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(h.done)
		tick := time.NewTicker(5 * time.Millisecond)
		defer tick.Stop()
		for {
			var ms runtime.MemStats
			runtime.ReadMemStats(&ms)
			h.peak = max(h.peak, ms.HeapInuse)
			select {
			case <-h.stop:
				return
			case <-tick.C:
			}
		}
	}()
	return h
}

// growth stops the sampling and returns the peak's rise over the start.
func (h *heapPeak) growth() uint64 {
	close(h.stop)
	<-h.done
	return h.peak - h.base
}

// hostileGateway is a gateway of the hostile upstream big and the
// well-behaved upstream ok.
func hostileGateway(t *testing.T, big gateway.Upstream, opts ...gateway.Option) *gateway.Gateway {
	t.Helper()
	g := newGateway(t, gateway.Config{Upstreams: []gateway.Upstream{big, {Name: "ok", Server: echoServer("ok")}}}, opts...)
	for _, name := range []string{"big", "ok"} {
		if st := stateOf(g, name); st.State != gateway.StateReady {
			t.Fatalf("upstream %s: %+v", name, st)
		}
	}
	return g
}

// duringHostileCall makes the hostile call (call) in a goroutine of its
// own and, once the upstream has started sending (started), serves the
// others (serveOthers) before the upstream goes on (release); it returns
// the call's outcome and how much the heap grew at its peak meanwhile.
func duringHostileCall[T any](t *testing.T, g *gateway.Gateway, started, release func(), call func() T) (T, uint64) {
	t.Helper()
	heap := watchHeap()
	done := make(chan T, 1)
	go func() { done <- call() }()
	started()
	serveOthers(t, g)
	release()
	out := <-done
	return out, heap.growth()
}

// serveOthers makes calls to the well-behaved upstream, on a downstream
// session of its own, while the hostile call is in flight: each must work.
func serveOthers(t *testing.T, g *gateway.Gateway) {
	t.Helper()
	c := downstream(t, g)
	ctx := context.Background()
	for i := range 20 {
		msg := fmt.Sprintf("during %d", i)
		res, err := c.CallTool(ctx, "ok__echo", map[string]any{"text": msg})
		if err != nil || res.IsError {
			t.Fatalf("ok__echo during the hostile call: %+v %v", res, err)
		}
		var out echoOut
		if err := json.Unmarshal(res.StructuredContent, &out); err != nil || out.Echo != msg || out.From != "ok" {
			t.Fatalf("ok__echo during the hostile call: %s %v", res.StructuredContent, err)
		}
	}
	if p, err := c.GetPrompt(ctx, "ok__greet", map[string]string{"who": "Ann"}); err != nil || len(p.Messages) != 1 {
		t.Fatalf("ok__greet during the hostile call: %+v %v", p, err)
	}
	if r, err := c.ReadResource(ctx, "mem://ok/doc"); err != nil || len(r.Contents) != 1 {
		t.Fatalf("reading mem://ok/doc during the hostile call: %+v %v", r, err)
	}
	names := strings.Join(testmcp.ToolNames(t, c), ",")
	if !strings.Contains(names, "big__work") || !strings.Contains(names, "ok__echo") {
		t.Fatalf("tools during the hostile call: %s", names)
	}
}

// socketBuffers is the most the kernel may hold of a loopback connection
// (the sender's and the receiver's largest buffers): what a server can
// have written beyond what its client read.
func socketBuffers() int64 {
	var total int64
	for _, f := range []string{"/proc/sys/net/ipv4/tcp_wmem", "/proc/sys/net/ipv4/tcp_rmem"} {
		b, err := os.ReadFile(f)
		fields := strings.Fields(string(b))
		if err != nil || len(fields) != 3 {
			return 64 << 20
		}
		n, err := strconv.ParseInt(fields[2], 10, 64)
		if err != nil {
			return 64 << 20
		}
		total += n
	}
	return total
}

// The 1 GiB result: refused at the upstream's message size limit with an
// isError result naming the upstream and the limit, the gateway's heap
// far below the payload meanwhile, the HTTP answer read no further than
// the limit (plus what the sockets buffer), the upstream's session kept,
// and the other upstream served during the call.
func TestHostileHugeResult(t *testing.T) {
	for _, tc := range []struct {
		name  string
		mode  string // hostileHTTP mode, or "" for stdio
		limit int    // set as Upstream.MaxMessageSize (http-json), the gateway's option (stdio), or the default (http-sse)
	}{
		{"http-json", "json", 4 << 20},
		{"http-sse", "sse", gateway.DefaultMaxUpstreamMessage},
		{"stdio", "", 2 << 20},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var (
				g       *gateway.Gateway
				h       *hostileHTTP
				started func()
				release func()
			)
			switch {
			case tc.mode == "":
				up, dir := stdioHostile(t, "big", "huge")
				g = hostileGateway(t, up, gateway.WithLimits(gateway.Limits{MaxMessageBytes: tc.limit}))
				started = func() {
					testwait.WaitFor(t, "the hostile answer to start", func() bool {
						_, err := os.Stat(filepath.Join(dir, "started"))
						return err == nil
					})
				}
				release = func() { must(os.WriteFile(filepath.Join(dir, "release"), nil, 0o600)) }
			default:
				h = newHostileHTTP(t, tc.mode)
				up := gateway.Upstream{Name: "big", URL: h.url(), Timeout: testwait.Limit}
				if tc.limit != gateway.DefaultMaxUpstreamMessage {
					up.MaxMessageSize = tc.limit
				}
				g = hostileGateway(t, up)
				started = func() { <-h.started }
				release = h.let
			}
			c := downstream(t, g)
			ctx := context.Background()
			before, err := c.CallTool(ctx, "big__small", nil)
			if err != nil || before.IsError {
				t.Fatalf("big__small before: %+v %v", before, err)
			}

			type outcome struct {
				res *mcp.CallToolResult
				err error
			}
			out, grew := duringHostileCall(t, g, started, release, func() outcome {
				res, err := c.CallTool(ctx, "big__work", nil)
				return outcome{res, err}
			})

			if client.CodeOf(out.err) != client.CodeToolError || out.res == nil || !out.res.IsError {
				t.Fatalf("the 1 GiB call: %+v %v", out.res, out.err)
			}
			msg := testmcp.Text(out.res)
			if !strings.Contains(msg, `upstream "big"`) || !strings.Contains(msg, fmt.Sprintf("exceeds the %d-byte limit on message size", tc.limit)) {
				t.Fatalf("the 1 GiB call's error does not name the upstream and the limit: %s", msg)
			}
			t.Logf("isError: %s", msg)
			t.Logf("heap in use rose by at most %.1f MiB during the call", float64(grew)/(1<<20))
			if grew > heapAllowance {
				t.Errorf("heap in use rose by %d bytes during the call (allowed %d)", grew, heapAllowance)
			}
			if h != nil {
				select {
				case <-h.done:
				case <-time.After(20 * time.Second):
					t.Fatal("the hostile handler is still writing: the gateway neither read nor closed its connection")
				}
				written, most := h.written.Load(), int64(tc.limit)+socketBuffers()+1<<20
				t.Logf("the upstream wrote %.1f MiB before the gateway closed the connection (%v)", float64(written)/(1<<20), h.writeErr)
				if h.writeErr == nil || written > most {
					t.Errorf("the upstream wrote %d bytes (%v); at most %d (the limit and the socket buffers) should have gone", written, h.writeErr, most)
				}
			}
			// The session is kept (a stdio child is the same process) and
			// serves the next call.
			after, err := c.CallTool(ctx, "big__small", nil)
			if err != nil || after.IsError || testmcp.Text(after) != testmcp.Text(before) {
				t.Fatalf("big__small after: %+v %v (before: %s)", after, err, testmcp.Text(before))
			}
			if st := stateOf(g, "big"); st.State != gateway.StateReady {
				t.Fatalf("upstream big after the call: %+v", st)
			}
			if _, err := c.CallTool(ctx, "ok__echo", map[string]any{"text": "after"}); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// 10,000 progress notifications and 10,000 log messages before the result:
// the result arrives intact (structuredContent byte for byte), the caller
// gets progress in increasing order and log messages in order (the relay
// may drop some when the caller is slower, never reorder them), the heap
// stays bounded, and the other upstream is served meanwhile.
func TestHostileFlood(t *testing.T) {
	for _, tc := range []struct{ name, mode string }{{"http", "flood"}, {"stdio", ""}} {
		t.Run(tc.name, func(t *testing.T) {
			var (
				g       *gateway.Gateway
				started func()
				release func()
			)
			if tc.mode == "" {
				up, dir := stdioHostile(t, "big", "flood")
				g = hostileGateway(t, up)
				started = func() {
					testwait.WaitFor(t, "the flood to start", func() bool {
						_, err := os.Stat(filepath.Join(dir, "started"))
						return err == nil
					})
				}
				release = func() { must(os.WriteFile(filepath.Join(dir, "release"), nil, 0o600)) }
			} else {
				h := newHostileHTTP(t, tc.mode)
				g = hostileGateway(t, gateway.Upstream{Name: "big", URL: h.url(), Timeout: testwait.Limit})
				started = func() { <-h.started }
				release = h.let
			}
			var (
				mu       sync.Mutex
				progress []client.Progress
				logs     []client.LogMessage
			)
			c := downstream(t, g, client.WithEra(mcp.EraLegacy), client.WithLogHandler(func(m client.LogMessage) {
				mu.Lock()
				logs = append(logs, m)
				mu.Unlock()
			}))
			ctx := context.Background()
			type outcome struct {
				raw json.RawMessage
				err error
			}
			out, grew := duringHostileCall(t, g, started, release, func() outcome {
				raw, err := c.CallToolRaw(ctx, "big__work", nil, client.WithProgress(func(p client.Progress) {
					mu.Lock()
					progress = append(progress, p)
					mu.Unlock()
				}))
				return outcome{raw, err}
			})
			if out.err != nil {
				t.Fatalf("the flooded call: %v", out.err)
			}
			if got := string(member(t, out.raw, "structuredContent")); got != floodStructured {
				t.Fatalf("structuredContent %s, want %s as sent", got, floodStructured)
			}
			if got := member(t, out.raw, "isError"); got != nil && string(got) != "false" {
				t.Fatalf("the flooded call's result is an error: %s", out.raw)
			}

			mu.Lock()
			defer mu.Unlock()
			t.Logf("%d of %d progress notifications and %d of %d log messages reached the caller; heap in use rose by at most %.1f MiB",
				len(progress), floodCount, len(logs), floodCount, float64(grew)/(1<<20))
			if len(progress) == 0 || len(progress) > floodCount {
				t.Fatalf("%d progress notifications reached the caller", len(progress))
			}
			last := 0.0
			for _, p := range progress {
				if p.Progress <= last || p.Progress > floodCount || p.Total != floodCount || p.Message != fmt.Sprintf("step %d", int(p.Progress)) {
					t.Fatalf("progress %+v after %v: not increasing, or not as sent", p, last)
				}
				last = p.Progress
			}
			if len(logs) > floodCount {
				t.Fatalf("%d log messages reached the caller", len(logs))
			}
			lastLog := 0
			for _, m := range logs {
				n, err := strconv.Atoi(string(m.Data))
				if err != nil || n <= lastLog || n > floodCount || m.Level != mcp.LevelInfo || m.Logger != "flood" {
					t.Fatalf("log message %+v after %d: out of order, or not as sent", m, lastLog)
				}
				lastLog = n
			}
			if grew > heapAllowance {
				t.Errorf("heap in use rose by %d bytes during the flood (allowed %d)", grew, heapAllowance)
			}
			if _, err := c.CallTool(ctx, "big__small", nil); err != nil {
				t.Fatalf("big__small after the flood: %v", err)
			}
		})
	}
}
