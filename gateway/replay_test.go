package gateway_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/toolwire/toolwire/client"
	"github.com/toolwire/toolwire/gateway"
	"github.com/toolwire/toolwire/internal/testmcp"
	"github.com/toolwire/toolwire/internal/testwait"
	"github.com/toolwire/toolwire/jsonrpc"
	"github.com/toolwire/toolwire/mcp"
)

// rawMCP is a Streamable HTTP upstream (2025-11-25, no session id) written
// on raw TCP: HTTP/1.1 keep-alive, each connection's requests read one
// after the other. Requests other than tools/call are answered as answer
// does, notifications with 202 and the standalone GET with 405. A
// tools/call counts as run when read; call then says whether it is
// answered or the connection closed without a byte of the response (the
// upstream died after running it). after, when set, runs after each
// response and says whether the connection stays open.
type rawMCP struct {
	ln    net.Listener
	call  func(run int64) bool
	after func(c net.Conn) bool
	runs  atomic.Int64 // tools/call requests read
	conns atomic.Int64 // connections accepted

	mu     sync.Mutex
	reused []bool // per tools/call read: on a connection that had carried requests before
	open   map[net.Conn]bool
	wg     sync.WaitGroup
}

func newRawMCP(t *testing.T, call func(run int64) bool, after func(net.Conn) bool) *rawMCP {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &rawMCP{ln: ln, call: call, after: after, open: map[net.Conn]bool{}}
	s.wg.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			s.conns.Add(1)
			s.mu.Lock()
			s.open[c] = true
			s.mu.Unlock()
			s.wg.Go(func() {
				defer func() {
					s.mu.Lock()
					delete(s.open, c)
					s.mu.Unlock()
					c.Close()
				}()
				s.serve(c)
			})
		}
	})
	t.Cleanup(func() {
		// As httptest.Server.Close: the connections a client keeps
		// (a closed gateway's idle ones too) are closed here.
		ln.Close()
		s.mu.Lock()
		for c := range s.open {
			c.Close()
		}
		s.mu.Unlock()
		s.wg.Wait()
	})
	return s
}

func (s *rawMCP) url() string { return "http://" + s.ln.Addr().String() + "/mcp" }

func (s *rawMCP) serve(c net.Conn) {
	br := bufio.NewReader(c)
	for served := 0; ; served++ {
		req, err := http.ReadRequest(br)
		if err != nil {
			return
		}
		body, err := io.ReadAll(req.Body)
		if err != nil {
			return
		}
		status, out := http.StatusOK, ""
		switch req.Method {
		case http.MethodPost:
			msg, _, derr := jsonrpc.Decode(body)
			r, ok := msg.(*jsonrpc.Request)
			switch {
			case derr != nil || !ok:
				status = http.StatusAccepted
			case r.Method == mcp.MethodCallTool:
				n := s.runs.Add(1)
				s.mu.Lock()
				s.reused = append(s.reused, served > 0)
				s.mu.Unlock()
				if !s.call(n) {
					return
				}
				id, _ := json.Marshal(r.ID)
				out = fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":{"content":[{"type":"text","text":"ran %d"}]}}`, id, n)
			default:
				out = answer(r)
			}
		case http.MethodGet:
			status = http.StatusMethodNotAllowed
		}
		head := fmt.Sprintf("HTTP/1.1 %d %s\r\nContent-Length: %d\r\n", status, http.StatusText(status), len(out))
		if out != "" {
			head += "Content-Type: application/json\r\n"
		}
		if _, err := io.WriteString(c, head+"\r\n"+out); err != nil {
			return
		}
		if s.after != nil && !s.after(c) {
			return
		}
	}
}

// flakyClient is a client of a gateway in front of up (flaky, once
// ready) and an in-process echo server (ok).
func flakyClient(t *testing.T, up *rawMCP) *client.Client {
	t.Helper()
	g := newGateway(t, gateway.Config{Upstreams: []gateway.Upstream{
		{Name: "flaky", URL: up.url()},
		{Name: "ok", Server: echoServer("ok")},
	}})
	if st := stateOf(g, "flaky"); st.State != gateway.StateReady {
		t.Fatalf("upstream flaky: %+v", st)
	}
	return downstream(t, g)
}

// TestToolCallLostAfterSendNotReplayed: an HTTP upstream that reads a
// tools/call on a keep-alive connection, runs it, and closes the
// connection without answering (it died) ran the tool once: the gateway
// does not send the call again, and its caller gets an isError result
// naming the upstream and saying the call was sent. The upstream's
// session goes on serving, and so does the other upstream.
func TestToolCallLostAfterSendNotReplayed(t *testing.T) {
	up := newRawMCP(t, func(run int64) bool { return run > 1 }, nil)
	c := flakyClient(t, up)
	ctx := testwait.Context(t)
	res, err := c.CallTool(ctx, "flaky__work", nil)
	if client.CodeOf(err) != client.CodeToolError || res == nil || !res.IsError {
		t.Fatalf("a call whose connection died after it was sent: %+v, %v; want an isError result", res, err)
	}
	if msg := testmcp.Text(res); !strings.Contains(msg, `upstream "flaky"`) || !strings.Contains(msg, "not sent again") {
		t.Fatalf("isError text %q: want it to name upstream \"flaky\" and say the call was not sent again", msg)
	}
	if n := up.runs.Load(); n != 1 {
		t.Fatalf("the upstream ran the call %d times, want 1", n)
	}
	up.mu.Lock()
	reused := up.reused[0]
	up.mu.Unlock()
	if !reused {
		t.Fatal("the call came on a new connection; the case under test is a keep-alive one")
	}

	res, err = c.CallTool(ctx, "flaky__work", nil)
	if err != nil || res.IsError || testmcp.Text(res) != "ran 2" {
		t.Fatalf("the next call: %+v, %v; want \"ran 2\"", res, err)
	}
	if _, err := c.CallTool(ctx, "ok__echo", map[string]any{"text": "x"}); err != nil {
		t.Fatal(err)
	}
	if n := up.runs.Load(); n != 2 {
		t.Fatalf("the upstream ran %d calls, want 2", n)
	}
}
