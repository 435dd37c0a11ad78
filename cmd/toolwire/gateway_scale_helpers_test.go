package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/toolwire/toolwire/gateway/audit"
	"github.com/toolwire/toolwire/internal/testenv"
	"github.com/toolwire/toolwire/internal/testhttp"
	"github.com/toolwire/toolwire/internal/testwait"
	"github.com/toolwire/toolwire/mcp"
)

// The test harness of TestGatewayScaleOut: a round-robin proxy in front of
// the replicas, raw 2025-11-25 and 2026-07-28 requests, SSE reading.

// scaleBackend is one replica behind the proxy.
type scaleBackend struct {
	name string
	base *url.URL // scheme and host only
	down bool     // a dial to it failed: the proxy skips it
}

// scaleProxy is a round-robin reverse proxy over the replicas: each request
// goes to the next replica that is not down, unless scalePin names one; a
// replica refusing connections is marked down and the request, which it
// never saw, goes to the next one.
type scaleProxy struct {
	url string // the proxy's MCP endpoint

	mu        sync.Mutex
	backends  []*scaleBackend
	next      int
	failovers int // requests sent on after their replica refused the connection
}

// scaleReq is what the proxy's transport needs of the incoming request.
type scaleReq struct {
	body []byte
	pin  string
}

type scaleReqKey struct{}

func newScaleProxy(t *testing.T, replicas map[string]string, order ...string) *scaleProxy {
	t.Helper()
	p := &scaleProxy{}
	for _, name := range order {
		u, err := url.Parse(replicas[name])
		if err != nil {
			t.Fatal(err)
		}
		p.backends = append(p.backends, &scaleBackend{name: name, base: &url.URL{Scheme: u.Scheme, Host: u.Host}})
	}
	rp := &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			b := p.pick(pr.In.Header.Get(scalePin), "")
			pr.SetURL(b.base)
			pr.Out.Header.Del(scalePin)
		},
		Transport:     &scaleTransport{p: p},
		FlushInterval: -1,
		ModifyResponse: func(r *http.Response) error {
			r.Header.Set(scaleServed, p.nameOf(r.Request.URL.Host))
			return nil
		},
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// The body is kept so that a request a dead replica never read can
		// go to another.
		body, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		r = r.WithContext(context.WithValue(r.Context(), scaleReqKey{}, &scaleReq{body: body, pin: r.Header.Get(scalePin)}))
		rp.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	p.url = srv.URL + "/mcp"
	return p
}

// pick returns the pinned replica, or the next one up other than skip.
func (p *scaleProxy) pick(pin, skip string) *scaleBackend {
	p.mu.Lock()
	defer p.mu.Unlock()
	if pin != "" {
		for _, b := range p.backends {
			if b.name == pin {
				return b
			}
		}
	}
	for range p.backends {
		b := p.backends[p.next%len(p.backends)]
		p.next++
		if !b.down && b.name != skip {
			return b
		}
	}
	return p.backends[0]
}

func (p *scaleProxy) nameOf(host string) string {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, b := range p.backends {
		if b.base.Host == host {
			return b.name
		}
	}
	return "?"
}

// markDown records that host refused a connection.
func (p *scaleProxy) markDown(host string) string {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, b := range p.backends {
		if b.base.Host == host {
			b.down = true
			return b.name
		}
	}
	return ""
}

// scaleTransport retries, on another replica, a request whose replica
// refused the connection (it never saw the request).
type scaleTransport struct{ p *scaleProxy }

func (st *scaleTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	in, _ := req.Context().Value(scaleReqKey{}).(*scaleReq)
	pinned := in == nil || in.pin != ""
	for attempt := 0; ; attempt++ {
		resp, err := http.DefaultTransport.RoundTrip(req)
		var op *net.OpError
		if err == nil || pinned || attempt > 0 || !errors.As(err, &op) || op.Op != "dial" {
			return resp, err
		}
		dead := st.p.markDown(req.URL.Host)
		b := st.p.pick("", dead)
		if b.name == dead {
			return resp, err
		}
		st.p.mu.Lock()
		st.p.failovers++
		st.p.mu.Unlock()
		retry := req.Clone(req.Context())
		retry.URL.Host = b.base.Host
		retry.Host = b.base.Host
		if req.Body != nil {
			retry.Body = io.NopCloser(bytes.NewReader(in.body))
		}
		req = retry
	}
}

// scaleMsg is one JSON-RPC message as the client sees it.
type scaleMsg struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

func (m scaleMsg) isResponse() bool { return m.Method == "" && (m.Result != nil || m.Error != nil) }

// progress returns a notifications/progress's progress value.
func (m scaleMsg) progress() (float64, bool) {
	if m.Method != "notifications/progress" {
		return 0, false
	}
	var p struct {
		Progress float64 `json:"progress"`
	}
	if json.Unmarshal(m.Params, &p) != nil {
		return 0, false
	}
	return p.Progress, true
}

// scaleResult is a tools/call result.
type scaleResult struct {
	Content []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	} `json:"content"`
	IsError bool                       `json:"isError"`
	Meta    map[string]json.RawMessage `json:"_meta"`
	Task    *struct {
		TaskID string `json:"taskId"`
		Status string `json:"status"`
	} `json:"task"`
	TaskID string `json:"taskId"`
	Status string `json:"status"`
}

func (r scaleResult) text() string {
	var b strings.Builder
	for _, c := range r.Content {
		b.WriteString(c.Text)
	}
	return b.String()
}

// scaleEvent is one server-sent event, its data decoded.
type scaleEvent struct {
	ID   string
	Data string
	Msg  scaleMsg
}

// scaleStream reads an event stream in the background; next waits for
// each event with a hang detector.
type scaleStream struct {
	t    *testing.T
	resp *http.Response
	ch   chan scaleEvent
}

func newScaleStream(t *testing.T, resp *http.Response) *scaleStream {
	s := &scaleStream{t: t, resp: resp, ch: make(chan scaleEvent, 1024)}
	go func() {
		defer close(s.ch)
		r := testhttp.NewSSEReader(resp.Body)
		for {
			ev, ok := r.Next()
			if !ok {
				return
			}
			e := scaleEvent{ID: ev.ID, Data: ev.Data}
			if e.Data != "" {
				_ = json.Unmarshal([]byte(e.Data), &e.Msg)
			}
			s.ch <- e
		}
	}()
	return s
}

// next returns the next event; ok is false at the stream's end.
func (s *scaleStream) next() (scaleEvent, bool) {
	s.t.Helper()
	select {
	case e, ok := <-s.ch:
		return e, ok
	case <-time.After(scaleHang):
		s.t.Fatalf("no event on the stream (%s) for %v", s.resp.Request.URL, scaleHang)
	}
	return scaleEvent{}, false
}

// drain returns the events that come until the stream ends or stays quiet
// for quiet (a drain, not a timing assertion).
func (s *scaleStream) drain(quiet time.Duration) (events []scaleEvent, ended bool) {
	for {
		select {
		case e, ok := <-s.ch:
			if !ok {
				return events, true
			}
			events = append(events, e)
		case <-time.After(quiet):
			return events, false
		}
	}
}

func (s *scaleStream) close() { s.resp.Body.Close() }

var scaleHTTP = &http.Client{}

// scalePost sends one raw message to url; pin (for the proxy) and sid may
// be empty. Headers for a 2026-07-28 request come in modern.
func scalePost(t *testing.T, url, pin, sid, body string, extra http.Header) *http.Response {
	t.Helper()
	h := http.Header{"Content-Type": {"application/json"}, "Accept": {"application/json, text/event-stream"}}
	if sid != "" {
		h.Set("Mcp-Session-Id", sid)
		h.Set("MCP-Protocol-Version", mcp.Version20251125)
	}
	for k, v := range extra {
		h[k] = v
	}
	return scaleSend(t, http.MethodPost, url, pin, strings.NewReader(body), h)
}

// scaleGet opens the GET stream of sid on url, resuming after last.
func scaleGet(t *testing.T, url, pin, sid, last string) *http.Response {
	t.Helper()
	h := http.Header{"Accept": {"text/event-stream"}, "Mcp-Session-Id": {sid}}
	h.Set("MCP-Protocol-Version", mcp.Version20251125)
	if last != "" {
		h.Set("Last-Event-ID", last)
	}
	return scaleSend(t, http.MethodGet, url, pin, nil, h)
}

// scaleSend sends a request with header h (and pin for the proxy, unless
// empty) through scaleHTTP; closing the response's body ends the request,
// which may take up to 2*durableDeadline.
func scaleSend(t *testing.T, method, url, pin string, body io.Reader, h http.Header) *http.Response {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*durableDeadline)
	r, err := http.NewRequestWithContext(ctx, method, url, body)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	r.Header = h
	if pin != "" {
		r.Header.Set(scalePin, pin)
	}
	resp, err := scaleHTTP.Do(r)
	if err != nil {
		cancel()
		t.Fatalf("%s %s: %v", method, url, err)
	}
	resp.Body = &cancelBody{ReadCloser: resp.Body, cancel: cancel}
	return resp
}

// cancelBody is a response body whose Close ends its request's context.
type cancelBody struct {
	io.ReadCloser
	cancel context.CancelFunc
}

func (b *cancelBody) Close() error {
	err := b.ReadCloser.Close()
	b.cancel()
	return err
}

// scaleReply reads the response to a request, JSON or SSE, with the
// notifications before it.
func scaleReply(t *testing.T, resp *http.Response) (scaleMsg, []scaleMsg) {
	t.Helper()
	if !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		body := testhttp.ReadBody(t, resp)
		var m scaleMsg
		if err := json.Unmarshal([]byte(body), &m); err != nil {
			t.Fatalf("status %d, reply not JSON: %v: %q", resp.StatusCode, err, body)
		}
		return m, nil
	}
	s := newScaleStream(t, resp)
	defer s.close()
	var before []scaleMsg
	for e, ok := s.next(); ok; e, ok = s.next() {
		if e.Data == "" {
			continue
		}
		if e.Msg.isResponse() {
			return e.Msg, before
		}
		before = append(before, e.Msg)
	}
	t.Fatalf("the stream from %s ended without a reply", resp.Request.URL)
	return scaleMsg{}, nil
}

const scaleInit = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"scale-test","version":"1"}}}`

// scaleOpen opens a 2025-11-25 session at url (pinned to pin), returning
// its id and the replica that answered.
func scaleOpen(t *testing.T, url, pin string) (string, string) {
	t.Helper()
	resp := scalePost(t, url, pin, "", scaleInit, nil)
	body := testhttp.ReadBody(t, resp)
	sid := resp.Header.Get("Mcp-Session-Id")
	if resp.StatusCode != http.StatusOK || sid == "" {
		t.Fatalf("initialize: status %d, session %q: %s", resp.StatusCode, sid, body)
	}
	served := resp.Header.Get(scaleServed)
	resp = scalePost(t, url, pin, sid, `{"jsonrpc":"2.0","method":"notifications/initialized"}`, nil)
	if testhttp.ReadBody(t, resp); resp.StatusCode != http.StatusAccepted {
		t.Fatalf("notifications/initialized: status %d", resp.StatusCode)
	}
	return sid, served
}

// scaleCallBody is a tools/call request.
func scaleCallBody(t *testing.T, id any, name string, args any, meta map[string]any, task map[string]any) string {
	t.Helper()
	params := map[string]any{"name": name, "arguments": args}
	if meta != nil {
		params["_meta"] = meta
	}
	if task != nil {
		params["task"] = task
	}
	return string(testwait.MustJSON(t, map[string]any{"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params}))
}

// scaleCall makes a tools/call on a session and returns its result and
// the replica that answered (through the proxy).
func scaleCall(t *testing.T, url, pin, sid string, id any, name string, args any) (scaleResult, string) {
	t.Helper()
	resp := scalePost(t, url, pin, sid, scaleCallBody(t, id, name, args, nil, nil), nil)
	served := resp.Header.Get(scaleServed)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("tools/call %s: status %d: %s", name, resp.StatusCode, testhttp.ReadBody(t, resp))
	}
	m, _ := scaleReply(t, resp)
	if m.Error != nil {
		t.Fatalf("tools/call %s: error %+v", name, *m.Error)
	}
	var r scaleResult
	if err := json.Unmarshal(m.Result, &r); err != nil {
		t.Fatalf("tools/call %s: result %s: %v", name, m.Result, err)
	}
	return r, served
}

// scaleModern makes a 2026-07-28 tools/call (no session).
func scaleModern(t *testing.T, url, pin string, id any, name string, args any) (int, scaleMsg, string) {
	t.Helper()
	meta := map[string]any{
		mcp.MetaProtocolVersion:    mcp.Version20260728,
		mcp.MetaClientCapabilities: map[string]any{},
		mcp.MetaClientInfo:         map[string]any{"name": "scale-test", "version": "1"},
	}
	h := http.Header{}
	h.Set("MCP-Protocol-Version", mcp.Version20260728)
	h.Set("Mcp-Method", "tools/call")
	h.Set("Mcp-Name", name)
	resp := scalePost(t, url, pin, "", scaleCallBody(t, id, name, args, meta, nil), h)
	served := resp.Header.Get(scaleServed)
	if resp.StatusCode != http.StatusOK {
		return resp.StatusCode, scaleMsg{}, testhttp.ReadBody(t, resp)
	}
	m, _ := scaleReply(t, resp)
	return resp.StatusCode, m, served
}

func scaleDecode(t *testing.T, m scaleMsg) scaleResult {
	t.Helper()
	if m.Error != nil {
		t.Fatalf("error reply %+v", *m.Error)
	}
	var r scaleResult
	if err := json.Unmarshal(m.Result, &r); err != nil {
		t.Fatalf("result %s: %v", m.Result, err)
	}
	return r
}

// scaleProgressRun checks that the progress values of events, in order,
// go up by one from first with no gap and no duplicate, and returns the
// last.
func scaleProgressRun(t *testing.T, what string, events []scaleEvent, first float64) float64 {
	t.Helper()
	want := first
	for _, e := range events {
		if p, ok := e.Msg.progress(); ok {
			if p != want {
				t.Fatalf("%s: progress %v where %v was due (events %v)", what, p, want, scaleProgressList(events))
			}
			want++
		}
	}
	return want - 1
}

func scaleProgressList(events []scaleEvent) []float64 {
	var out []float64
	for _, e := range events {
		if p, ok := e.Msg.progress(); ok {
			out = append(out, p)
		}
	}
	return out
}

// scaleExpect is a tools/call the audit trail must hold: sent to replica,
// recognised by tag in its arguments, ended with outcome.
type scaleExpect struct {
	replica string
	tag     string
	outcome audit.Outcome
}

// scaleOutcome reports whether r ended with want.
func scaleOutcome(r audit.Record, want audit.Outcome) bool { return r.Outcome == want }

// scaleCancelled reports whether r is a call its client cancelled.
func scaleCancelled(r audit.Record) bool { return r.Outcome == audit.OutcomeCancelled }

// scaleGateway starts one replica on cfg, admin off.
func scaleGateway(t *testing.T, cfg string) *gatewayProc {
	t.Helper()
	cmd := exec.Command(testenv.Toolwire(t), "gateway", "--config", cfg, "--listen", "127.0.0.1:0", "--admin-listen", "off")
	cmd.Env = append(os.Environ(), "XDG_STATE_HOME="+t.TempDir())
	return waitGateway(t, cmd)
}
