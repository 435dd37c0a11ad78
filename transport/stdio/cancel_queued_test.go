package stdio_test

import (
	"context"
	"encoding/json"
	"io"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/toolwire/toolwire/internal/testenv"
	"github.com/toolwire/toolwire/internal/testwait"
	"github.com/toolwire/toolwire/mcp"
	"github.com/toolwire/toolwire/server"
	"github.com/toolwire/toolwire/transport"
	"github.com/toolwire/toolwire/transport/stdio"
)

// pipeSession is a stdio.Serve driven line by line through a pipe.
type pipeSession struct {
	t    *testing.T
	in   *io.PipeWriter
	out  *testenv.SyncBuffer
	done chan error
}

func startPipe(t *testing.T, s *server.Server, opts ...transport.ServeOption) *pipeSession {
	t.Helper()
	pr, pw := io.Pipe()
	p := &pipeSession{t: t, in: pw, out: &testenv.SyncBuffer{}, done: make(chan error, 1)}
	go func() { p.done <- stdio.Serve(context.Background(), s, pr, p.out, opts...) }()
	t.Cleanup(func() { pw.Close() })
	return p
}

func (p *pipeSession) write(lines ...string) {
	p.t.Helper()
	for _, l := range lines {
		if _, err := p.in.Write([]byte(l + "\n")); err != nil {
			p.t.Fatal(err)
		}
	}
}

// replyIDs returns the id member of every line written so far, as JSON.
func (p *pipeSession) replyIDs() []string {
	var ids []string
	for _, l := range strings.Split(strings.TrimSpace(p.out.String()), "\n") {
		var m struct {
			ID json.RawMessage `json:"id"`
		}
		if l != "" && json.Unmarshal([]byte(l), &m) == nil {
			ids = append(ids, string(m.ID))
		}
	}
	return ids
}

// waitReply waits for a line with the given id.
func (p *pipeSession) waitReply(id string) {
	p.t.Helper()
	testwait.WaitFor(p.t, "a reply for id "+id, func() bool {
		for _, got := range p.replyIDs() {
			if got == id {
				return true
			}
		}
		return false
	})
}

// finish ends the input and waits for Serve to return.
func (p *pipeSession) finish() {
	p.t.Helper()
	p.in.Close()
	if err := testwait.Recv(p.t, p.done, "Serve to return at EOF"); err != nil {
		p.t.Fatal(err)
	}
}

// blockAndCount serves "block", which runs until cancelled, and "count",
// which counts its runs.
func blockAndCount(t *testing.T) (*server.Server, *atomic.Int32) {
	t.Helper()
	s := server.New(mcp.Implementation{Name: "s", Version: "1"})
	var n atomic.Int32
	if err := server.AddTool(s, &mcp.Tool{Name: "block"}, func(ctx context.Context, req *server.CallRequest, in struct{}) (string, error) {
		<-ctx.Done()
		return "", ctx.Err()
	}); err != nil {
		t.Fatal(err)
	}
	if err := server.AddTool(s, &mcp.Tool{Name: "count"}, func(ctx context.Context, req *server.CallRequest, in struct{}) (string, error) {
		n.Add(1)
		return "counted", nil
	}); err != nil {
		t.Fatal(err)
	}
	return s, &n
}

func call(id, tool string) string {
	return `{"jsonrpc":"2.0","id":` + id + `,"method":"tools/call","params":{"name":"` + tool + `"}}`
}

func cancelOf(id string) string {
	return `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":` + id + `,"reason":"test"}}`
}

// A request cancelled while it waits for a slot is
// removed from the queue; it never runs and gets no response (a cancelled
// request is never answered), and the running request the client also
// cancels frees its slot, so a later request is served.
func TestCancelledQueuedRequestNeverRuns(t *testing.T) {
	s, counted := blockAndCount(t)
	p := startPipe(t, s, transport.WithLimits(transport.Limits{MaxConcurrency: 1}))
	p.write(initLine, call("1", "block"), call("2", "count"), cancelOf("2"), cancelOf("1"), call("3", "count"))
	p.waitReply("3")
	p.finish()
	for _, id := range p.replyIDs() {
		if id == "1" || id == "2" {
			t.Errorf("cancelled request %s was answered:\n%s", id, p.out.String())
		}
	}
	if n := counted.Load(); n != 1 {
		t.Errorf("count ran %d times, want once (id 3 only): the cancelled id 2 ran", n)
	}
}

// With long calls queued, cancelling them drains the queue: a later request
// does not wait behind them.
func TestCancellingQueuedLongCallsDrainsQueue(t *testing.T) {
	s, _ := blockAndCount(t)
	p := startPipe(t, s, transport.WithLimits(transport.Limits{MaxConcurrency: 1, DrainTimeout: 50 * time.Millisecond}))
	p.write(initLine, call("1", "block"), call(`"two"`, "block"), call("3", "block"),
		cancelOf("3"), cancelOf(`"two"`), cancelOf("1"), call("4", "count"))
	p.waitReply("4")
	p.finish()
	if ids := p.replyIDs(); len(ids) != 2 || ids[0] != "0" || ids[1] != "4" {
		t.Errorf("want replies to initialize and id 4 only, got %v:\n%s", ids, p.out.String())
	}
}

// A cancellation for an id that is not queued leaves the queue alone: the
// queued request with another id still runs and replies.
func TestCancellationOfOtherIDKeepsQueued(t *testing.T) {
	s, counted := blockAndCount(t)
	p := startPipe(t, s, transport.WithLimits(transport.Limits{MaxConcurrency: 1}))
	p.write(initLine, call("1", "block"), call("2", "count"), cancelOf(`"2"`), cancelOf("99"), cancelOf("1"))
	p.waitReply("2")
	p.finish()
	if n := counted.Load(); n != 1 {
		t.Errorf("count ran %d times, want once", n)
	}
}
