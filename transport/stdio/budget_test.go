package stdio_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/toolwire/toolwire/internal/testwait"
	"github.com/toolwire/toolwire/jsonrpc"
	"github.com/toolwire/toolwire/mcp"
	"github.com/toolwire/toolwire/server"
	"github.com/toolwire/toolwire/transport"
)

// holdServer serves "hold", which signals started and runs until cancelled,
// and "count"; both take a "pad" argument that makes a request as large as
// a test needs.
func holdServer(t *testing.T) (*server.Server, chan struct{}) {
	t.Helper()
	s := server.New(mcp.Implementation{Name: "s", Version: "1"})
	type in struct {
		Pad string `json:"pad,omitempty"`
	}
	started := make(chan struct{}, 16)
	if err := server.AddTool(s, &mcp.Tool{Name: "hold"}, func(ctx context.Context, req *server.CallRequest, in in) (string, error) {
		started <- struct{}{}
		<-ctx.Done()
		return "", ctx.Err()
	}); err != nil {
		t.Fatal(err)
	}
	if err := server.AddTool(s, &mcp.Tool{Name: "count"}, func(ctx context.Context, req *server.CallRequest, in in) (string, error) {
		return "counted", nil
	}); err != nil {
		t.Fatal(err)
	}
	return s, started
}

// padded is a tools/call of tool, with id first or last, padded to size
// bytes.
func padded(id, tool string, size int, idLast bool) string {
	head, tail := `{"jsonrpc":"2.0","id":`+id+`,"method":"tools/call","params":{"name":"`+tool+`","arguments":{"pad":"`, `"}}}`
	if idLast {
		head, tail = `{"jsonrpc":"2.0","method":"tools/call","params":{"name":"`+tool+`","arguments":{"pad":"`, `"}},"id":`+id+`}`
	}
	return head + strings.Repeat("p", size-len(head)-len(tail)) + tail
}

// reply is one line the server wrote.
type reply struct {
	ID     json.RawMessage `json:"id"`
	Result *struct {
		Content []struct {
			Text string `json:"text"`
		} `json:"content"`
	} `json:"result"`
	Error *struct {
		Code    int64  `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

func (p *pipeSession) reply(id string) reply {
	p.t.Helper()
	p.waitReply(id)
	for _, l := range strings.Split(strings.TrimSpace(p.out.String()), "\n") {
		var r reply
		if json.Unmarshal([]byte(l), &r) == nil && string(r.ID) == id {
			return r
		}
	}
	p.t.Fatalf("no reply %s", id)
	return reply{}
}

// waitInUse waits for the budget to hold n bytes.
func waitInUse(t *testing.T, b *transport.MemoryBudget, n int64) {
	t.Helper()
	testwait.WaitFor(t, fmt.Sprintf("the budget to hold %d bytes", n), func() bool { return b.InUse() == n })
}

// Past the memory budget, a request is refused with CodeOverloaded and its
// id, undecoded (its id read from its bytes, wherever it is), while a
// cancellation is still handled; once the budget is free again, requests
// are served, and when the connection ends nothing is held.
func TestMemoryBudgetRefusesPastItOverStdio(t *testing.T) {
	s, started := holdServer(t)
	b := transport.NewMemoryBudget(1000)
	p := startPipe(t, s, transport.WithMemoryBudget(b))
	p.write(initLine)
	p.reply("0")
	waitInUse(t, b, 0)

	hold := padded("1", "hold", 950, false)
	p.write(hold)
	testwait.Recv(t, started, "the hold call to start")
	if got := b.InUse(); got != int64(len(hold)) {
		t.Fatalf("a running request of %d bytes holds %d", len(hold), got)
	}
	for _, c := range []struct{ id, line string }{
		{"2", padded("2", "count", 200, false)},
		{`"late"`, padded(`"late"`, "count", 200, true)},
		// A request its first bytes do not show (it has a "result"
		// member) is refused once decoded.
		{"3", `{"jsonrpc":"2.0","id":3,"method":"tools/call","result":{},"params":{"name":"count","arguments":{"pad":"` + strings.Repeat("p", 150) + `"}}}`},
	} {
		p.write(c.line)
		r := p.reply(c.id)
		want := "server overloaded: requests in flight hold the memory budget of 1000 bytes; this request of " +
			strconv.Itoa(len(c.line)) + " bytes was not read: retry once earlier requests are answered"
		if r.Error == nil || r.Error.Code != jsonrpc.CodeOverloaded || r.Error.Message != want {
			t.Errorf("request %s past the budget: got %+v, want %d %q", c.id, r.Error, jsonrpc.CodeOverloaded, want)
		}
	}
	// A request larger than the whole budget says so.
	huge := padded("4", "count", 1001, false)
	p.write(huge)
	if r := p.reply("4"); r.Error == nil || r.Error.Code != jsonrpc.CodeOverloaded ||
		r.Error.Message != "server overloaded: a request of 1001 bytes exceeds the memory budget of 1000 bytes for requests in flight; it was not read" {
		t.Errorf("a request larger than the budget: %+v", r.Error)
	}
	// The cancellation does not fit either, but is handled: the held
	// request ends, unanswered, and gives its bytes back.
	p.write(cancelOf("1"))
	waitInUse(t, b, 0)
	p.write(padded("5", "count", 900, false))
	if r := p.reply("5"); r.Error != nil || r.Result == nil || r.Result.Content[0].Text != "counted" {
		t.Errorf("the request after the budget freed: %+v", r)
	}
	p.finish()
	if ids := strings.Join(p.replyIDs(), " "); ids != `0 2 "late" 3 4 5` {
		t.Errorf("replies %s: want 0 2 \"late\" 3 4 5 (the cancelled 1 unanswered)", ids)
	}
	if b.InUse() != 0 {
		t.Errorf("%d bytes held after the connection ended", b.InUse())
	}
}

// Every message gives its bytes back once handled, whatever becomes of it:
// served, refused as busy, cancelled in the queue, malformed, a
// notification, a response to nothing, the inline initialize, or dropped
// when serving ends. After all of them the budget holds nothing.
func TestMemoryBudgetReleasedAfterEveryRequest(t *testing.T) {
	s, started := holdServer(t)
	b := transport.NewMemoryBudget(1 << 20)
	p := startPipe(t, s, transport.WithMemoryBudget(b), transport.WithLimits(transport.Limits{MaxConcurrency: 1, MaxQueued: 1,
		DrainTimeout: 20 * time.Millisecond}))
	p.write(initLine)
	p.reply("0")
	for i := range 20 {
		id := strconv.Itoa(100 + i)
		p.write(padded(id, "count", 300+i, i%2 == 0))
		p.reply(id)
	}
	p.write(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"nope"}}`, `{"jsonrpc":"2.0","id":8,`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`, `{"jsonrpc":"2.0","id":"x","result":{}}`,
		`{"jsonrpc":"2.0","id":9,"method":"ping"}`)
	p.reply("7")
	p.reply("9")
	waitInUse(t, b, 0)

	// One running, one queued, one refused as busy, the queued one
	// cancelled; then the running one is cancelled too.
	p.write(call("10", "hold"))
	testwait.Recv(t, started, "the hold call to start")
	p.write(call("11", "count"), call("12", "count"))
	if r := p.reply("12"); r.Error == nil || !strings.Contains(r.Error.Message, "server busy") {
		t.Fatalf("want 12 refused as busy, got %+v", r)
	}
	p.write(cancelOf("11"), cancelOf("10"))
	waitInUse(t, b, 0)

	// Serving ends with one request running and one queued: the drain
	// timeout cancels the first and drops the second.
	p.write(call("13", "hold"))
	testwait.Recv(t, started, "the hold call to start")
	p.write(call("14", "count"))
	p.finish()
	if b.InUse() != 0 || b.Refused() != 0 {
		t.Errorf("after the connection ended: %d bytes held, %d refusals", b.InUse(), b.Refused())
	}
}
