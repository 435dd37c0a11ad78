package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/toolwire/toolwire/internal/testwait"
	"github.com/toolwire/toolwire/jsonrpc"
	"github.com/toolwire/toolwire/mcp"
	"github.com/toolwire/toolwire/server"
	"github.com/toolwire/toolwire/transport"
	"github.com/toolwire/toolwire/transport/memory"
)

// peer is a minimal client over the in-memory transport: it sends raw
// messages and sorts what comes back into responses and notifications.
type peer struct {
	t     *testing.T
	conn  *memory.Conn
	mu    sync.Mutex
	next  int64
	resps map[string]chan *jsonrpc.Response
	notes chan *jsonrpc.Notification
	other chan *jsonrpc.Response // replies that answer no request we sent
	reqs  chan *jsonrpc.Request  // requests the server sends us
}

// connect serves s to a new peer over the in-memory transport. When the
// test ends the peer closes its side and waits until the server has ended
// the session (requests still open, such as a subscription, are cancelled
// after a short drain), so that nothing outlives the test, or its synctest
// bubble.
func connect(t *testing.T, s *server.Server) *peer {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	conn := memory.Serve(ctx, s, transport.WithLimits(transport.Limits{DrainTimeout: 10 * time.Millisecond}))
	p := &peer{t: t, conn: conn, resps: map[string]chan *jsonrpc.Response{},
		notes: make(chan *jsonrpc.Notification, 100), other: make(chan *jsonrpc.Response, 10), reqs: make(chan *jsonrpc.Request, 10)}
	closing, done := make(chan struct{}), make(chan struct{})
	t.Cleanup(func() {
		close(closing)
		conn.Close()
		testwait.Closed(t, done, "the server to end the session")
		cancel()
	})
	go func() {
		defer close(done)
		p.readLoop(ctx, closing)
	}()
	return p
}

// readLoop sorts what the server sends until its side ends; once closing,
// what the test did not take is dropped.
func (p *peer) readLoop(ctx context.Context, closing <-chan struct{}) {
	for {
		b, err := p.conn.Read(ctx)
		if err != nil {
			return
		}
		msg, _, derr := jsonrpc.Decode(b)
		if derr != nil {
			p.t.Errorf("server sent an invalid message %s: %v", b, derr)
			continue
		}
		switch m := msg.(type) {
		case *jsonrpc.Request:
			select {
			case p.reqs <- m:
			case <-closing:
			}
			continue
		case *jsonrpc.Notification:
			select {
			case p.notes <- m:
			case <-closing:
			}
			continue
		case *jsonrpc.Response:
			p.mu.Lock()
			ch := p.resps[m.ID.String()]
			p.mu.Unlock()
			if ch == nil {
				ch = p.other
			}
			select {
			case ch <- m:
			case <-closing:
			}
		}
	}
}

// start sends a request and returns the channel its response will arrive on.
func (p *peer) start(method string, params any) (jsonrpc.ID, chan *jsonrpc.Response) {
	p.t.Helper()
	p.mu.Lock()
	p.next++
	id := jsonrpc.Int64ID(p.next)
	ch := make(chan *jsonrpc.Response, 1)
	p.resps[id.String()] = ch
	p.mu.Unlock()
	req := &jsonrpc.Request{ID: id, Method: method}
	if params != nil {
		raw, err := json.Marshal(params)
		if err != nil {
			p.t.Fatal(err)
		}
		req.Params = raw
	}
	p.send(req)
	return id, ch
}

// startRaw sends a raw message whose id is id and returns the channel its
// response will arrive on.
func (p *peer) startRaw(id jsonrpc.ID, msg string) (jsonrpc.ID, chan *jsonrpc.Response) {
	p.t.Helper()
	ch := make(chan *jsonrpc.Response, 1)
	p.mu.Lock()
	p.resps[id.String()] = ch
	p.mu.Unlock()
	p.sendRaw(msg)
	return id, ch
}

func (p *peer) send(m jsonrpc.Message) {
	p.t.Helper()
	b, err := jsonrpc.Encode(m)
	if err != nil {
		p.t.Fatal(err)
	}
	p.sendRaw(string(b))
}

func (p *peer) sendRaw(s string) {
	p.t.Helper()
	if err := p.conn.Write(context.Background(), []byte(s)); err != nil {
		p.t.Fatal(err)
	}
}

func (p *peer) call(method string, params any) *jsonrpc.Response {
	p.t.Helper()
	_, ch := p.start(method, params)
	return p.wait(ch)
}

func (p *peer) wait(ch chan *jsonrpc.Response) *jsonrpc.Response {
	p.t.Helper()
	return testwait.Recv(p.t, ch, "a response")
}

func (p *peer) note() *jsonrpc.Notification {
	p.t.Helper()
	return testwait.Recv(p.t, p.notes, "a notification")
}

// listen opens a 2026-07-28 subscriptions/listen stream asking for
// notifications, and returns its id, the channel of its reply and its
// acknowledgement, which must be the first notification to come.
func (p *peer) listen(notifications map[string]any) (jsonrpc.ID, chan *jsonrpc.Response, *mcp.ListenAcknowledgedParams) {
	p.t.Helper()
	id, ch := p.start("subscriptions/listen", map[string]any{"_meta": modernMeta(), "notifications": notifications})
	ack := p.note()
	var ap mcp.ListenAcknowledgedParams
	if ack.Method != mcp.NotificationListenAck || json.Unmarshal(ack.Params, &ap) != nil {
		p.t.Fatalf("first message %s %s, want the acknowledgement", ack.Method, ack.Params)
	}
	return id, ch, &ap
}

// listened waits for the next notification and fails the test unless it
// is method, sent on the listen stream id (its _meta subscriptionId).
func (p *peer) listened(method string, id jsonrpc.ID) *jsonrpc.Notification {
	p.t.Helper()
	n := p.note()
	var np struct {
		Meta mcp.Meta `json:"_meta"`
	}
	_ = json.Unmarshal(n.Params, &np)
	if n.Method != method || fmt.Sprint(np.Meta[mcp.MetaSubscriptionID]) != fmt.Sprint(id.Int()) {
		p.t.Errorf("got %s %s, want %s on subscription %v", n.Method, n.Params, method, id)
	}
	return n
}

// request waits for the next request the server sends.
func (p *peer) request() *jsonrpc.Request {
	p.t.Helper()
	return testwait.Recv(p.t, p.reqs, "a request from the server")
}

// quiesce, in a synctest bubble (the test, its server and its peers in
// it), lets the bubble's clock move on by a second and waits until every
// goroutine is blocked: what the server was to send by then has been read
// into the peers' channels, however slow the machine. (The server passes
// reading on from a running request after its 1ms inline budget: a
// cancellation sent meanwhile is read once the clock moves.)
func quiesce() {
	time.Sleep(time.Second)
	synctest.Wait()
}

// noRequest fails the test if the server has sent a request to the client
// (why says why it must not have); it does not wait (in a synctest bubble,
// quiesce first).
func (p *peer) noRequest(why string) {
	p.t.Helper()
	select {
	case r := <-p.reqs:
		p.t.Errorf("%s: the server sent %s", why, r.Method)
	default:
	}
}

// noNote fails the test if a notification has come or is on its way; it
// runs in a synctest bubble (see quiesce).
func (p *peer) noNote() {
	p.t.Helper()
	quiesce()
	select {
	case n := <-p.notes:
		p.t.Fatalf("unexpected notification %s %s", n.Method, n.Params)
	default:
	}
}

// initialize opens a legacy session at version, for a client declaring no
// capabilities.
func (p *peer) initialize(version string) *mcp.InitializeResult {
	p.t.Helper()
	return p.initializeWith(version, map[string]any{})
}

// initializeWith opens a legacy session at version for a client declaring
// caps.
func (p *peer) initializeWith(version string, caps map[string]any) *mcp.InitializeResult {
	p.t.Helper()
	r := p.call("initialize", map[string]any{"protocolVersion": version, "capabilities": caps,
		"clientInfo": map[string]any{"name": "test", "version": "1"}})
	var res mcp.InitializeResult
	decodeResult(p.t, r, &res)
	p.send(&jsonrpc.Notification{Method: mcp.NotificationInitialized})
	// Notifications are handled in arrival order before later requests are
	// dispatched, so once a ping is answered the session is ready.
	if r := p.call("ping", nil); r.Error != nil {
		p.t.Fatal(r.Error)
	}
	return &res
}

// modernMeta is the _meta every 2026-07-28 request carries.
func modernMeta() map[string]any {
	return map[string]any{mcp.MetaProtocolVersion: mcp.Version20260728, mcp.MetaClientCapabilities: map[string]any{},
		mcp.MetaClientInfo: map[string]any{"name": "test", "version": "1"}}
}

// must fails the test on a registration (or any other setup) error.
func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func decodeResult(t *testing.T, r *jsonrpc.Response, v any) {
	t.Helper()
	if r.Error != nil {
		t.Fatalf("unexpected error %d: %s %s", r.Error.Code, r.Error.Message, r.Error.Data)
	}
	if err := json.Unmarshal(r.Result, v); err != nil {
		t.Fatalf("decode %s: %v", r.Result, err)
	}
}

func wantError(t *testing.T, r *jsonrpc.Response, code int64) *jsonrpc.Error {
	t.Helper()
	if r.Error == nil {
		t.Fatalf("want error %d, got result %s", code, r.Result)
	}
	if r.Error.Code != code {
		t.Fatalf("want error %d, got %d: %s", code, r.Error.Code, r.Error.Message)
	}
	return r.Error
}

func callResult(t *testing.T, r *jsonrpc.Response) *mcp.CallToolResult {
	t.Helper()
	var res mcp.CallToolResult
	decodeResult(t, r, &res)
	return &res
}

func text(t *testing.T, res *mcp.CallToolResult) string {
	t.Helper()
	if len(res.Content) == 0 {
		t.Fatal("result has no content")
	}
	tc, ok := res.Content[0].(*mcp.TextContent)
	if !ok {
		t.Fatalf("first block is %T", res.Content[0])
	}
	return tc.Text
}
