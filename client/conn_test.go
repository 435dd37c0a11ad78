package client_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/toolwire/toolwire/client"
	"github.com/toolwire/toolwire/internal/testmcp"
	"github.com/toolwire/toolwire/internal/testwait"
	"github.com/toolwire/toolwire/jsonrpc"
	"github.com/toolwire/toolwire/mcp"
	"github.com/toolwire/toolwire/server"
	"github.com/toolwire/toolwire/transport"
	"github.com/toolwire/toolwire/transport/memory"
	"github.com/toolwire/toolwire/transport/stdio"
)

// serverRequestsServer is a real toolwire server whose "roots" tool asks
// the client mid-call: ping, then roots/list. Its "wait" tool blocks until
// the call is cancelled and reports the cancellation on cancelled.
func serverRequestsServer(cancelled chan<- error) *server.Server {
	s := server.New(mcp.Implementation{Name: "asks-back", Version: "1"})
	type none struct{}
	err := server.AddTool(s, &mcp.Tool{Name: "roots"}, func(ctx context.Context, req *server.CallRequest, _ none) (string, error) {
		if err := req.Ping(ctx); err != nil {
			return "", fmt.Errorf("ping: %w", err)
		}
		res, err := req.ListRoots(ctx)
		if err != nil {
			return "", fmt.Errorf("roots/list: %w", err)
		}
		var uris []string
		for _, r := range res.Roots {
			uris = append(uris, r.URI+" "+r.Name)
		}
		return "roots: " + strings.Join(uris, ", "), nil
	})
	if err != nil {
		panic(err)
	}
	err = server.AddTool(s, &mcp.Tool{Name: "wait"}, func(ctx context.Context, req *server.CallRequest, _ none) (string, error) {
		<-ctx.Done()
		if cancelled != nil {
			cancelled <- context.Cause(ctx)
		}
		return "", ctx.Err()
	})
	if err != nil {
		panic(err)
	}
	return s
}

// serveServerRequestsStdio is the body of the test binary started with
// TW_FAKE_STDIO=toolwire-roots: the server above on stdin and stdout.
func serveServerRequestsStdio() {
	if err := stdio.ServeStdio(context.Background(), serverRequestsServer(nil)); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

func inProcess(t *testing.T, s *server.Server) *client.Conn {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	return &client.Conn{Conn: memory.Serve(ctx, s)}
}

// rootsOptions declares the roots capability and answers roots/list; seen
// records every server request the receiving middleware saw.
func rootsOptions(seen *[]string, mu *sync.Mutex) []client.Option {
	return []client.Option{
		client.WithEra(mcp.EraLegacy), // server-to-client requests exist in 2025-era sessions only
		client.WithCapabilities(mcp.ClientCapabilities{Roots: &mcp.ListChangedCapability{}}),
		client.WithRequestHandler(func(ctx context.Context, method string, params json.RawMessage) (any, error) {
			if method != mcp.MethodListRoots {
				return nil, jsonrpc.NewError(jsonrpc.CodeMethodNotFound, "no %s here", method)
			}
			return mcp.ListRootsResult{Roots: []mcp.Root{{URI: "file:///src", Name: "src"}, {URI: "file:///docs", Name: "docs"}}}, nil
		}),
		client.WithReceivingMiddleware(func(next jsonrpc.MethodHandler) jsonrpc.MethodHandler {
			return func(ctx context.Context, req *jsonrpc.Request) (any, error) {
				mu.Lock()
				*seen = append(*seen, req.Method)
				mu.Unlock()
				return next(ctx, req)
			}
		}),
	}
}

// TestServerRequestsEveryTransport: a real toolwire server pings the client
// and lists its roots in the middle of a tool call, and the answers reach
// it over stdio, legacy Streamable HTTP (POSTed with the session id) and an
// in-process Conn.
func TestServerRequestsEveryTransport(t *testing.T) {
	transports := map[string]func(t *testing.T) client.Transport{
		"stdio": func(t *testing.T) client.Transport { return fakeCommand(t, "toolwire-roots") },
		"http": func(t *testing.T) client.Transport {
			return &client.HTTP{URL: testmcp.ServeHTTP(t, serverRequestsServer(nil))}
		},
		"conn": func(t *testing.T) client.Transport { return inProcess(t, serverRequestsServer(nil)) },
	}
	for name, tr := range transports {
		t.Run(name, func(t *testing.T) {
			var seen []string
			var mu sync.Mutex
			c := connect(t, tr(t), rootsOptions(&seen, &mu)...)
			if c.Era() != mcp.EraLegacy {
				t.Fatalf("era %v", c.Era())
			}
			res, err := c.CallTool(testwait.Context(t), "roots", nil)
			if err != nil {
				t.Fatal(err)
			}
			if got := res.Content[0].(*mcp.TextContent).Text; got != "roots: file:///src src, file:///docs docs" {
				t.Fatalf("result %q", got)
			}
			mu.Lock()
			defer mu.Unlock()
			if fmt.Sprint(seen) != "[ping roots/list]" {
				t.Errorf("receiving middleware saw %v", seen)
			}
		})
	}
}

// TestServerRequestRefused: without the roots capability declared the
// server does not ask; with it but no RequestHandler the client answers
// -32601, which the tool's caller learns of.
func TestServerRequestRefused(t *testing.T) {
	c := connect(t, inProcess(t, serverRequestsServer(nil)), client.WithEra(mcp.EraLegacy))
	_, err := c.CallTool(context.Background(), "roots", nil)
	var te *client.ToolError
	if !errors.As(err, &te) || !strings.Contains(te.Error(), `"roots" capability`) {
		t.Fatalf("err = %v", err)
	}
	c = connect(t, inProcess(t, serverRequestsServer(nil)), client.WithEra(mcp.EraLegacy),
		client.WithCapabilities(mcp.ClientCapabilities{Roots: &mcp.ListChangedCapability{}}))
	_, err = c.CallTool(context.Background(), "roots", nil)
	if !refusedByClient(err, jsonrpc.CodeMethodNotFound, `client does not handle "roots/list"`) {
		t.Fatalf("err = %v", err)
	}
}

// refusedByClient reports whether a tool call failed because the client
// answered the tool's request with the given JSON-RPC error: the server
// passes it on either as the call's JSON-RPC error or as an isError result
// naming it.
func refusedByClient(err error, code int64, message string) bool {
	var je *client.JSONRPCError
	if errors.As(err, &je) {
		return je.Code == code && strings.Contains(je.Message, message)
	}
	var te *client.ToolError
	return errors.As(err, &te) && strings.Contains(te.Error(), fmt.Sprint(code)) && strings.Contains(te.Error(), message)
}

// TestConnInProcess: a client talks to an in-process server in each era,
// with progress, tool errors and JSON-RPC errors as over any transport.
func TestConnInProcess(t *testing.T) {
	for _, era := range []mcp.Era{mcp.EraAuto, mcp.EraModern, mcp.EraLegacy} {
		t.Run(era.String(), func(t *testing.T) {
			s := serverRequestsServer(nil)
			_ = server.AddTool(s, &mcp.Tool{Name: "count"}, func(ctx context.Context, req *server.CallRequest, in struct {
				N int `json:"n"`
			}) (string, error) {
				for i := 1; i <= in.N; i++ {
					if err := req.Progress(ctx, float64(i), float64(in.N), ""); err != nil {
						return "", err
					}
				}
				if in.N < 0 {
					return "", errors.New("negative")
				}
				return fmt.Sprint("counted to ", in.N), nil
			})
			c := connect(t, inProcess(t, s), client.WithEra(era))
			want := mcp.EraModern
			if era == mcp.EraLegacy {
				want = mcp.EraLegacy
			}
			if c.Era() != want || c.ServerInfo().Name != "asks-back" {
				t.Fatalf("era %v server %+v", c.Era(), c.ServerInfo())
			}
			ctx := context.Background()
			var mu sync.Mutex
			var got []client.Progress
			res, err := c.CallTool(ctx, "count", map[string]int{"n": 3}, client.WithProgress(func(p client.Progress) {
				mu.Lock()
				got = append(got, p)
				mu.Unlock()
			}))
			if err != nil || res.Content[0].(*mcp.TextContent).Text != "counted to 3" {
				t.Fatalf("count: %v %+v", err, res)
			}
			mu.Lock()
			if len(got) != 3 || got[2].Progress != 3 || got[2].Total != 3 {
				t.Errorf("progress %+v", got)
			}
			mu.Unlock()
			if _, err := c.CallTool(ctx, "count", map[string]int{"n": -1}); client.CodeOf(err) != client.CodeToolError {
				t.Errorf("tool error: %v", err)
			}
			var je *client.JSONRPCError
			if _, err := c.CallTool(ctx, "nope", nil, client.WithOutputValidation(false)); !errors.As(err, &je) || je.Code != jsonrpc.CodeInvalidParams {
				t.Errorf("unknown tool: %v", err)
			}
		})
	}
}

// TestConnCancelSendsCancelled: cancelling a call over a Conn sends
// notifications/cancelled, which cancels the handler's context. The call's
// timeout is the subject: in a synctest bubble it fires once the request
// is on its way, at its time, however busy the machine.
func TestConnCancelSendsCancelled(t *testing.T) {
	for _, era := range []mcp.Era{mcp.EraModern, mcp.EraLegacy} {
		t.Run(era.String(), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				cancelled := make(chan error, 1)
				c := connect(t, inProcess(t, serverRequestsServer(cancelled)), client.WithEra(era))
				_, err := c.CallTool(context.Background(), "wait", nil, client.WithTimeout(100*time.Millisecond))
				if !errors.Is(err, context.DeadlineExceeded) || client.CodeOf(err) != client.CodeTransport ||
					!strings.Contains(err.Error(), "no response within 100ms") {
					t.Fatalf("err = %v", err)
				}
				if cause := testwait.Recv(t, cancelled, "the handler to be cancelled"); !strings.Contains(fmt.Sprint(cause), "cancelled by the client") {
					t.Errorf("handler context ended with %v", cause)
				}
			})
		})
	}
}

// TestConnClose: Close closes the connection and fails later calls with a
// transport error; the server's serve loop ends.
func TestConnClose(t *testing.T) {
	client1, server1 := memory.NewPipe(8)
	served := make(chan error, 1)
	go func() {
		served <- transport.Serve(context.Background(), server1, serverRequestsServer(nil))
		server1.Close()
	}()
	c, err := client.Connect(context.Background(), &client.Conn{Conn: client1}, client.WithEra(mcp.EraLegacy))
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	testwait.Recv(t, served, "the server to see the connection close")
	if _, err := c.ListTools(context.Background()); client.CodeOf(err) != client.CodeTransport {
		t.Fatalf("after Close: %v", err)
	}
	if _, err := client.Connect(context.Background(), &client.Conn{}); client.CodeOf(err) != client.CodeTransport {
		t.Fatalf("no connection: %v", err)
	}
}

// scripted answers each request read from the server end of a pipe with
// what reply returns ("" for no answer; several messages joined by msgSep); initialize is answered as a 2025
// server would. It returns the client end.
// msgSep separates the messages of one scripted answer.
const msgSep = "\x1e"

func scripted(t *testing.T, reply func(req *jsonrpc.Request) string) *memory.Conn {
	t.Helper()
	cl, sv := memory.NewPipe(16)
	t.Cleanup(func() { sv.Close() })
	go func() {
		for {
			msg, err := sv.Read(context.Background())
			if err != nil {
				sv.Close()
				return
			}
			m, _, derr := jsonrpc.Decode(msg)
			if derr != nil {
				t.Errorf("client sent a malformed message: %v", derr)
				continue
			}
			req, ok := m.(*jsonrpc.Request)
			if !ok {
				continue
			}
			out := ""
			if req.Method == "initialize" {
				out = fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"scripted","version":"1"}}}`, req.ID)
			} else {
				out = reply(req)
			}
			if out == "close" {
				sv.Close()
				return
			}
			for part := range strings.SplitSeq(out, msgSep) {
				if part != "" {
					_ = sv.Write(context.Background(), []byte(part))
				}
			}
		}
	}()
	return cl
}

func TestConnMalformedOversizedAndEnd(t *testing.T) {
	calls := 0
	var mu sync.Mutex
	conn := scripted(t, func(req *jsonrpc.Request) string {
		mu.Lock()
		defer mu.Unlock()
		calls++
		switch calls {
		case 1:
			return `{"jsonrpc":"2.0","id":` + req.ID.String() + `,"result":{"content":[`
		case 2:
			return `{"jsonrpc":"2.0","id":` + req.ID.String() + `,"result":` + textResult(strings.Repeat("x", 4096)) + `}`
		case 3:
			return `{"jsonrpc":"2.0","id":` + req.ID.String() + `,"result":` + textResult("small") + `}`
		}
		return "close"
	})
	c := connect(t, &client.Conn{Conn: conn}, client.WithEra(mcp.EraLegacy), client.WithLimits(client.Limits{MaxMessageBytes: 1024}), client.WithTimeout(testwait.Limit))
	ctx := context.Background()
	if _, err := c.CallTool(ctx, "x", nil, client.WithOutputValidation(false)); client.CodeOf(err) != client.CodeProtocol {
		t.Fatalf("malformed: %v", err)
	}
	if _, err := c.CallTool(ctx, "x", nil, client.WithOutputValidation(false)); client.CodeOf(err) != client.CodeTransport || !strings.Contains(err.Error(), "1024-byte limit") {
		t.Fatalf("oversized: %v", err)
	}
	res, err := c.CallTool(ctx, "x", nil, client.WithOutputValidation(false))
	if err != nil || res.Content[0].(*mcp.TextContent).Text != "small" {
		t.Fatalf("after the oversized message: %v", err)
	}
	if _, err := c.CallTool(ctx, "x", nil, client.WithOutputValidation(false)); client.CodeOf(err) != client.CodeTransport || !strings.Contains(err.Error(), "connection ended") {
		t.Fatalf("server gone: %v", err)
	}
}

// TestServerCancelsItsRequest: notifications/cancelled from the server ends
// the context the RequestHandler runs under, and no answer is sent.
func TestServerCancelsItsRequest(t *testing.T) {
	cl, sv := memory.NewPipe(16)
	t.Cleanup(func() { sv.Close() })
	answers := make(chan string, 4)
	handling, handled := make(chan struct{}), make(chan struct{})
	// within waits for ch to close, for as long as a test waits.
	within := func(ch <-chan struct{}) bool {
		select {
		case <-ch:
			return true
		case <-time.After(testwait.Limit):
			return false
		}
	}
	go func() {
		ctx := context.Background()
		for {
			msg, err := sv.Read(ctx)
			if err != nil {
				sv.Close()
				return
			}
			m, _, _ := jsonrpc.Decode(msg)
			switch m := m.(type) {
			case *jsonrpc.Response:
				answers <- string(msg)
			case *jsonrpc.Request:
				switch m.Method {
				case "initialize":
					sv.Write(ctx, []byte(`{"jsonrpc":"2.0","id":`+m.ID.String()+`,"result":{"protocolVersion":"2025-11-25","capabilities":{},"serverInfo":{"name":"s","version":"1"}}}`))
				case "tools/call":
					// The request, its cancellation once the client's
					// handler runs, and the call's result once the handler
					// has returned.
					sv.Write(ctx, []byte(`{"jsonrpc":"2.0","id":"s1","method":"roots/list"}`))
					if !within(handling) {
						return
					}
					sv.Write(ctx, []byte(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"s1","reason":"no longer needed"}}`))
					if !within(handled) {
						return
					}
					sv.Write(ctx, []byte(`{"jsonrpc":"2.0","id":`+m.ID.String()+`,"result":`+textResult("done")+`}`))
				}
			}
		}
	}()
	ended := make(chan error, 1)
	c := connect(t, &client.Conn{Conn: cl},
		client.WithEra(mcp.EraLegacy),
		client.WithCapabilities(mcp.ClientCapabilities{Roots: &mcp.ListChangedCapability{}}),
		client.WithRequestHandler(func(ctx context.Context, method string, params json.RawMessage) (any, error) {
			defer close(handled)
			close(handling)
			<-ctx.Done()
			ended <- ctx.Err()
			return mcp.ListRootsResult{}, nil
		}),
	)
	if _, err := c.CallTool(context.Background(), "x", nil, client.WithOutputValidation(false)); err != nil {
		t.Fatal(err)
	}
	if err := testwait.Recv(t, ended, "the handler's context to be cancelled"); !errors.Is(err, context.Canceled) {
		t.Errorf("handler context ended with %v", err)
	}
	select {
	case a := <-answers:
		t.Errorf("the client answered a cancelled request: %s", a)
	case <-time.After(200 * time.Millisecond):
	}
}

// A malformed response fails only the call whose id it carries; another
// call in flight is answered normally.
func TestConnMalformedResponseFailsOnlyItsCall(t *testing.T) {
	var mu sync.Mutex
	var held *jsonrpc.Request
	conn := scripted(t, func(req *jsonrpc.Request) string {
		mu.Lock()
		defer mu.Unlock()
		if req.Method != "tools/call" {
			return ""
		}
		if held == nil {
			held = req // answered once the second call arrives
			return ""
		}
		// Both result and error: malformed, for the second call; then the
		// first call's proper answer.
		return `{"jsonrpc":"2.0","id":` + req.ID.String() + `,"result":{},"error":{"code":1,"message":"x"}}` + msgSep +
			`{"jsonrpc":"2.0","id":` + held.ID.String() + `,"result":` + textResult("first") + `}`
	})
	c := connect(t, &client.Conn{Conn: conn}, client.WithEra(mcp.EraLegacy), client.WithTimeout(testwait.Limit))
	first := make(chan error, 1)
	go func() {
		res, err := c.CallTool(context.Background(), "x", nil, client.WithOutputValidation(false))
		if err == nil && res.Content[0].(*mcp.TextContent).Text != "first" {
			err = fmt.Errorf("first call: %+v", res)
		}
		first <- err
	}()
	testwait.WaitFor(t, "the first call to reach the server", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return held != nil
	})
	if _, err := c.CallTool(context.Background(), "x", nil, client.WithOutputValidation(false)); client.CodeOf(err) != client.CodeProtocol {
		t.Fatalf("second call, answered malformed: %v", err)
	}
	if err := testwait.Recv(t, first, "the first call"); err != nil {
		t.Fatalf("the first call failed with the second's malformed answer: %v", err)
	}
}
