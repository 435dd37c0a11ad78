package server_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/toolwire/toolwire/internal/testwait"
	"github.com/toolwire/toolwire/jsonrpc"
	"github.com/toolwire/toolwire/mcp"
	"github.com/toolwire/toolwire/server"
)

// recorder is a Sender that keeps what it is sent.
type recorder struct {
	mu   sync.Mutex
	msgs []jsonrpc.Message
}

func (r *recorder) Send(ctx context.Context, m jsonrpc.Message) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.msgs = append(r.msgs, m)
	return nil
}

func (r *recorder) count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.msgs)
}

func TestProgressRules(t *testing.T) { synctest.Test(t, testProgressRules) }

func testProgressRules(t *testing.T) {
	s := newTestServer(t)
	var after error
	var saved *server.CallRequest
	errs := make(chan error, 3)
	if err := server.AddTool(s, &mcp.Tool{Name: "work"}, func(ctx context.Context, req *server.CallRequest, in struct{}) (string, error) {
		if !req.HasProgress() {
			return "", errors.New("no progress token seen")
		}
		errs <- req.Progress(ctx, 1, 3, "one")
		errs <- req.Progress(ctx, 1, 3, "again") // not increasing
		errs <- req.Progress(ctx, 2.5, 0, "")
		saved = req
		return "done", nil
	}); err != nil {
		t.Fatal(err)
	}
	p := connect(t, s)
	p.initialize("2025-11-25")
	r := p.call("tools/call", map[string]any{"name": "work", "_meta": map[string]any{"progressToken": "tok-1"}})
	if text(t, callResult(t, r)) != "done" {
		t.Fatal("call failed")
	}
	if e := <-errs; e != nil {
		t.Errorf("first report: %v", e)
	}
	if e := <-errs; !errors.Is(e, server.ErrProgressNotIncreasing) {
		t.Errorf("repeated value: %v", e)
	}
	if e := <-errs; e != nil {
		t.Errorf("third report: %v", e)
	}
	// The notifications arrived before the response, in order.
	n1, n2 := p.note(), p.note()
	var p1, p2 mcp.ProgressParams
	_ = json.Unmarshal(n1.Params, &p1)
	_ = json.Unmarshal(n2.Params, &p2)
	if string(p1.ProgressToken) != `"tok-1"` || p1.Progress != 1 || *p1.Total != 3 || p1.Message != "one" {
		t.Errorf("first progress %s", n1.Params)
	}
	if p2.Progress != 2.5 || p2.Total != nil {
		t.Errorf("second progress %s", n2.Params)
	}
	after = saved.Progress(context.Background(), 10, 0, "late")
	if !errors.Is(after, server.ErrProgressDone) {
		t.Errorf("progress after the response: %v", after)
	}
	p.noNote()
}

func TestProgressTokenEchoedExactly(t *testing.T) {
	s := newTestServer(t)
	_ = server.AddTool(s, &mcp.Tool{Name: "tick"}, func(ctx context.Context, req *server.CallRequest, in struct{}) (string, error) {
		return "ok", req.Progress(ctx, 1, 0, "")
	})
	p := connect(t, s)
	p.initialize("2025-11-25")
	p.sendRaw(`{"jsonrpc":"2.0","id":"x","method":"tools/call","params":{"name":"tick","_meta":{"progressToken":12345678901234}}}`)
	n := p.note()
	if !strings.Contains(string(n.Params), `"progressToken":12345678901234`) {
		t.Errorf("token changed: %s", n.Params)
	}
	testwait.Recv(t, p.other, "the response")
}

func TestCancellationStopsHandlerAndSuppressesReply(t *testing.T) {
	s := newTestServer(t)
	stopped := make(chan error, 1)
	started := make(chan struct{})
	_ = server.AddTool(s, &mcp.Tool{Name: "slow"}, func(ctx context.Context, req *server.CallRequest, in struct{}) (string, error) {
		close(started)
		<-ctx.Done()
		stopped <- context.Cause(ctx)
		return "too late", nil
	})
	p := connect(t, s)
	p.initialize("2025-11-25")
	id, ch := p.start("tools/call", map[string]any{"name": "slow"})
	testwait.Closed(t, started, "the handler to start")
	p.send(&jsonrpc.Notification{Method: mcp.NotificationCancelled, Params: testwait.MustJSON(t, map[string]any{"requestId": id.Int(), "reason": "user gave up"})})
	if err := testwait.Recv(t, stopped, "the handler's context to be cancelled"); err == nil || !strings.Contains(err.Error(), "cancelled") {
		t.Errorf("cause %v", err)
	}
	// Nothing answers the cancelled request; the next request is served.
	if r := p.call("ping", nil); r.Error != nil {
		t.Fatal(r.Error)
	}
	select {
	case r := <-ch:
		t.Errorf("cancelled request answered: %s", r.Result)
	default:
	}
	// Cancelling an unknown or finished request is ignored.
	p.send(&jsonrpc.Notification{Method: mcp.NotificationCancelled, Params: testwait.MustJSON(t, map[string]any{"requestId": 999})})
	p.sendRaw(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":null}}`)
	if r := p.call("ping", nil); r.Error != nil {
		t.Fatal(r.Error)
	}
}

// The timeouts are the subject: in a synctest bubble they fire at their
// time, however busy the machine.
func TestTimeouts(t *testing.T) { synctest.Test(t, testTimeouts) }

func testTimeouts(t *testing.T) {
	s := newTestServer(t, server.WithTimeout(time.Hour))
	causes := make(chan error, 1)
	_ = server.AddTool(s, &mcp.Tool{Name: "polite"}, func(ctx context.Context, req *server.CallRequest, in struct{}) (string, error) {
		if req.Deadline.IsZero() {
			return "", errors.New("no deadline given")
		}
		<-ctx.Done()
		causes <- context.Cause(ctx)
		return "", ctx.Err()
	}, server.WithTimeout(10*time.Millisecond))
	_ = server.AddTool(s, &mcp.Tool{Name: "finishes-late"}, func(ctx context.Context, req *server.CallRequest, in struct{}) (string, error) {
		<-ctx.Done() // the deadline passes, but the work was done: its result stands
		return "finished", nil
	}, server.WithTimeout(10*time.Millisecond))
	p := connect(t, s)
	p.initialize("2025-11-25")
	res := callResult(t, p.call("tools/call", map[string]any{"name": "polite"}))
	if !res.IsError || !strings.Contains(text(t, res), "timed out after 10ms") {
		t.Errorf("polite: %+v %q", res.IsError, text(t, res))
	}
	if c := <-causes; c != server.ErrTimeout {
		t.Errorf("handler saw cause %v, want server.ErrTimeout", c)
	}
	res = callResult(t, p.call("tools/call", map[string]any{"name": "finishes-late"}))
	if res.IsError || text(t, res) != "finished" {
		t.Errorf("finishes-late: %+v %q", res.IsError, text(t, res))
	}
	// A server-wide timeout applies to tools without their own.
	s2 := server.New(mcp.Implementation{Name: "s", Version: "1"}, server.WithTimeout(10*time.Millisecond))
	_ = server.AddTool(s2, &mcp.Tool{Name: "slow"}, func(ctx context.Context, req *server.CallRequest, in struct{}) (string, error) {
		<-ctx.Done()
		return "", ctx.Err()
	})
	res, err := s2.CallTool(context.Background(), "slow", nil, nil)
	if err != nil || !res.IsError || !strings.Contains(text(t, res), fmt.Sprint(10*time.Millisecond)) {
		t.Errorf("server-wide timeout: %v %v", res, err)
	}
}
