package client_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/toolwire/toolwire/client"
	"github.com/toolwire/toolwire/internal/testenv"
	"github.com/toolwire/toolwire/internal/testwait"
	"github.com/toolwire/toolwire/jsonrpc"
	"github.com/toolwire/toolwire/mcp"
)

func legacy() client.Option { return client.WithEra(mcp.EraLegacy) }

func TestHTTPRefusedConnection(t *testing.T) {
	addr := testenv.FreeAddr(t) // nothing listens there now
	_, err := client.Connect(context.Background(), &client.HTTP{URL: "http://" + addr + "/mcp"})
	var te *client.TransportError
	if !errors.As(err, &te) || client.CodeOf(err) != client.CodeTransport {
		t.Fatalf("err = %v, want a transport error", err)
	}
	if !strings.Contains(err.Error(), "refused") {
		t.Errorf("error %q does not say the connection was refused", err)
	}
}

func TestHTTPAutoFallsBackToLegacy(t *testing.T) {
	f := newFake(t)
	f.handle = legacyOnly
	c := connect(t, f.transport())
	if c.Era() != mcp.EraLegacy || c.ProtocolVersion() != "2025-11-25" {
		t.Fatalf("era %v version %q", c.Era(), c.ProtocolVersion())
	}
	if len(f.calls("server/discover")) != 1 || len(f.calls("initialize")) != 1 || len(f.calls("notifications/initialized")) != 1 {
		t.Fatalf("requests: %+v", f.requests())
	}
	ini := f.calls("notifications/initialized")[0]
	if !hasHeader(ini.Header, "Mcp-Session-Id", "session-1") || !hasHeader(ini.Header, "MCP-Protocol-Version", "2025-11-25") {
		t.Errorf("initialized headers: %v", ini.Header)
	}
}

func TestHTTPSSENotificationsBeforeResponse(t *testing.T) {
	f := newFake(t)
	f.handle = func(w http.ResponseWriter, r *http.Request, req *jsonrpc.Request) bool {
		if req.Method != "tools/call" {
			return false
		}
		var p struct {
			Meta struct {
				Token string `json:"progressToken"`
			} `json:"_meta"`
		}
		json.Unmarshal(req.Params, &p)
		tok, _ := json.Marshal(p.Meta.Token)
		writeSSE(w,
			": a comment\n\n",
			"id: 1\nretry: 100\ndata: \n\n", // priming event
			sseData(`{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"working"}}`),
			sseData(fmt.Sprintf(`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":%s,"progress":1,"total":2}}`, tok)),
			"event: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\n"+
				fmt.Sprintf("data: \"params\":{\"progressToken\":%s,\"progress\":2,\"total\":2,\"message\":\"split over two data lines\"}}\n\n", tok),
			sseData(`{"jsonrpc":"2.0","id":"srv-1","method":"ping"}`),
			sseData(`{"jsonrpc":"2.0","id":"srv-2","method":"elicitation/create","params":{"message":"?"}}`),
			"event: other\ndata: not json at all\n\n", // not a message event: ignored
			sseData(fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":%s}`, req.ID, textResult("done"))),
		)
		return true
	}
	var logs []client.LogMessage
	var progress []client.Progress
	var mu sync.Mutex
	c := connect(t, f.transport(), client.WithEra(mcp.EraLegacy), client.WithLogHandler(func(m client.LogMessage) { mu.Lock(); logs = append(logs, m); mu.Unlock() }))
	res, err := c.CallTool(context.Background(), "slow", nil, client.WithOutputValidation(false),
		client.WithProgress(func(p client.Progress) { mu.Lock(); progress = append(progress, p); mu.Unlock() }))
	if err != nil {
		t.Fatal(err)
	}
	if res.Content[0].(*mcp.TextContent).Text != "done" {
		t.Fatalf("result %+v", res)
	}
	mu.Lock()
	if len(logs) != 1 || string(logs[0].Data) != `"working"` {
		t.Errorf("logs = %+v", logs)
	}
	if len(progress) != 2 || progress[1].Message != "split over two data lines" {
		t.Errorf("progress = %+v", progress)
	}
	mu.Unlock()
	// The server requests were answered by POSTed responses: ping with {},
	// elicitation (no handler) with -32601.
	var answers []string
	testwait.WaitFor(t, "the two server requests to be answered", func() bool {
		answers = nil
		for _, s := range f.requests() {
			if s.Method == "POST" && s.RPC == "" {
				answers = append(answers, string(s.Body))
			}
		}
		return len(answers) >= 2
	})
	joined := strings.Join(answers, "\n")
	if len(answers) != 2 || !strings.Contains(joined, `"id":"srv-1","result":{}`) || !strings.Contains(joined, `"id":"srv-2","error":{"code":-32601`) {
		t.Errorf("answers: %s", joined)
	}
}

func TestHTTPMalformedJSON(t *testing.T) {
	f := newFake(t)
	f.on("tools/call", func(w http.ResponseWriter, r *http.Request, req *jsonrpc.Request) {
		writeJSON(w, 200, `{"jsonrpc":"2.0","id":`+req.ID.String()+`,"result":{"content":[`)
	})
	c := connect(t, f.transport(), legacy())
	_, err := c.CallTool(context.Background(), "x", nil, client.WithOutputValidation(false))
	var pe *client.ProtocolError
	if !errors.As(err, &pe) || client.CodeOf(err) != client.CodeProtocol {
		t.Fatalf("err = %v, want a protocol error", err)
	}
}

func TestHTTPMalformedEnvelopes(t *testing.T) {
	cases := map[string]string{
		"no jsonrpc member":        `{"id":%s,"result":{"content":[]}}`,
		"neither result nor error": `{"jsonrpc":"2.0","id":%s}`,
		"content not an array":     `{"jsonrpc":"2.0","id":%s,"result":{"content":{"type":"text","text":"x"}}}`,
		"unknown block type":       `{"jsonrpc":"2.0","id":%s,"result":{"content":[{"type":"text","text":"ok"},{"type":"video","data":"AA=="}]}}`,
		"block missing a field":    `{"jsonrpc":"2.0","id":%s,"result":{"content":[{"type":"image","data":"AA=="}]}}`,
		"link without a name":      `{"jsonrpc":"2.0","id":%s,"result":{"content":[{"type":"resource_link","uri":"file:///x"}]}}`,
	}
	for name, reply := range cases {
		t.Run(name, func(t *testing.T) {
			f := newFake(t)
			f.on("tools/call", func(w http.ResponseWriter, r *http.Request, req *jsonrpc.Request) {
				writeJSON(w, 200, fmt.Sprintf(reply, req.ID))
			})
			c := connect(t, f.transport(), legacy())
			_, err := c.CallTool(context.Background(), "x", nil, client.WithOutputValidation(false))
			if client.CodeOf(err) != client.CodeProtocol {
				t.Fatalf("err = %v, want a protocol error", err)
			}
		})
	}
}

func TestHTTPBadBlockIsNamed(t *testing.T) {
	f := newFake(t)
	f.on("tools/call", func(w http.ResponseWriter, r *http.Request, req *jsonrpc.Request) {
		writeResult(w, req.ID, `{"content":[{"type":"text","text":"ok"},{"type":"audio","data":"AA=="}]}`)
	})
	c := connect(t, f.transport(), legacy())
	_, err := c.CallTool(context.Background(), "x", nil, client.WithOutputValidation(false))
	var pe *client.ProtocolError
	if !errors.As(err, &pe) || pe.Path != "content[1]" || !strings.Contains(err.Error(), "mimeType") {
		t.Fatalf("err = %v (path %q)", err, pe.Path)
	}
}

func TestHTTPMalformedSSE(t *testing.T) {
	f := newFake(t)
	f.on("tools/call", func(w http.ResponseWriter, r *http.Request, req *jsonrpc.Request) {
		writeSSE(w, sseData(`{"jsonrpc":"2.0","method":"notifications/progress"`), sseData(`{"jsonrpc":"2.0","id":`+req.ID.String()+`,"result":{"content":[]}}`))
	})
	c := connect(t, f.transport(), legacy())
	_, err := c.CallTool(context.Background(), "x", nil, client.WithOutputValidation(false))
	if client.CodeOf(err) != client.CodeProtocol || !strings.Contains(err.Error(), "malformed SSE event") {
		t.Fatalf("err = %v, want a protocol error about SSE", err)
	}
}

func TestHTTPStatusAndContentType(t *testing.T) {
	cases := []struct {
		name   string
		reply  func(w http.ResponseWriter)
		status int
	}{
		{"500", func(w http.ResponseWriter) { http.Error(w, "boom", 500) }, 500},
		{"401 without JSON-RPC body", func(w http.ResponseWriter) { http.Error(w, "who are you", http.StatusUnauthorized) }, http.StatusUnauthorized},
		{"text/html", func(w http.ResponseWriter) {
			w.Header().Set("Content-Type", "text/html")
			w.Write([]byte("<html>"))
		}, 200},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := newFake(t)
			f.on("tools/call", func(w http.ResponseWriter, r *http.Request, req *jsonrpc.Request) {
				tc.reply(w)
			})
			c := connect(t, f.transport(), legacy())
			_, err := c.CallTool(context.Background(), "x", nil, client.WithOutputValidation(false))
			var te *client.TransportError
			if !errors.As(err, &te) || te.StatusCode != tc.status {
				t.Fatalf("err = %v, want a transport error with status %d", err, tc.status)
			}
		})
	}
}

func TestHTTPJSONRPCErrorKeepsCodeMessageData(t *testing.T) {
	f := newFake(t)
	f.on("tools/call", func(w http.ResponseWriter, r *http.Request, req *jsonrpc.Request) {
		writeJSON(w, 200, `{"jsonrpc":"2.0","id":`+req.ID.String()+`,"error":{"code":-32602,"message":"Unknown tool: nope","data":{"name":"nope","near":["nope2"]}}}`)
	})
	c := connect(t, f.transport(), legacy())
	_, err := c.CallTool(context.Background(), "nope", nil, client.WithOutputValidation(false))
	var je *client.JSONRPCError
	if !errors.As(err, &je) || client.CodeOf(err) != client.CodeJSONRPC {
		t.Fatalf("err = %v", err)
	}
	if je.Code != -32602 || je.Message != "Unknown tool: nope" || string(je.Data) != `{"name":"nope","near":["nope2"]}` {
		t.Errorf("error = %+v", je)
	}
}

func TestHTTPToolError(t *testing.T) {
	f := newFake(t)
	f.on("tools/call", func(w http.ResponseWriter, r *http.Request, req *jsonrpc.Request) {
		writeResult(w, req.ID, `{"isError":true,"content":[{"type":"text","text":"city not found"}],"_meta":{"dev.toolwire/retry":{"canRetry":true,"retryAfterMs":250}}}`)
	})
	c := connect(t, f.transport(), legacy())
	res, err := c.CallTool(context.Background(), "weather", map[string]string{"city": "Atlantis"}, client.WithOutputValidation(false))
	var te *client.ToolError
	if !errors.As(err, &te) || client.CodeOf(err) != client.CodeToolError {
		t.Fatalf("err = %v", err)
	}
	if res == nil || !res.IsError || te.Content()[0].(*mcp.TextContent).Text != "city not found" {
		t.Errorf("result %+v, tool error %+v", res, te)
	}
	if te.RetryGuidance == nil || !te.RetryGuidance.CanRetry || te.RetryGuidance.RetryAfterMs != 250 {
		t.Errorf("retry guidance = %+v", te.RetryGuidance)
	}
}

// sessionKeeper forgets sessions on demand: sessions it has forgotten get 404.
func sessionKeeper(f *fake, forget func(callNo int) bool) *atomic.Int32 {
	var calls atomic.Int32
	f.handle = func(w http.ResponseWriter, r *http.Request, req *jsonrpc.Request) bool {
		if req.Method == "tools/call" {
			n := int(calls.Add(1))
			if forget(n) {
				writeJSON(w, 404, `{"jsonrpc":"2.0","id":null,"error":{"code":-32001,"message":"Session not found"}}`)
				return true
			}
			writeResult(w, req.ID, textResult("ok from "+r.Header.Get("Mcp-Session-Id")))
			return true
		}
		return false
	}
	return &calls
}

func TestHTTPSessionLostOnceIsRecovered(t *testing.T) {
	f := newFake(t)
	sessionKeeper(f, func(n int) bool { return n == 1 })
	c := connect(t, f.transport(), legacy())
	res, err := c.CallTool(context.Background(), "x", nil, client.WithOutputValidation(false))
	if err != nil {
		t.Fatal(err)
	}
	if got := res.Content[0].(*mcp.TextContent).Text; got != "ok from session-2" {
		t.Errorf("result %q: the retry did not use the new session", got)
	}
	if n := len(f.calls("initialize")); n != 2 {
		t.Errorf("%d initialize requests, want 2", n)
	}
}

func TestHTTPSessionLostTwiceIsInvalid(t *testing.T) {
	f := newFake(t)
	sessionKeeper(f, func(int) bool { return true })
	c := connect(t, f.transport(), legacy())
	_, err := c.CallTool(context.Background(), "x", nil, client.WithOutputValidation(false))
	var se *client.SessionInvalidError
	if !errors.As(err, &se) || client.CodeOf(err) != client.CodeSessionInvalid {
		t.Fatalf("err = %v, want session invalid", err)
	}
	if se.SessionID != "session-2" {
		t.Errorf("rejected session = %q", se.SessionID)
	}
	if n := len(f.calls("tools/call")); n != 2 {
		t.Errorf("%d tools/call requests, want exactly 2 (one retry)", n)
	}
}

func TestHTTPResumeWithLastEventID(t *testing.T) {
	f := newFake(t)
	var pending atomic.Value
	f.on("tools/call", func(w http.ResponseWriter, r *http.Request, req *jsonrpc.Request) {
		pending.Store(req.ID.String())
		writeSSE(w, "id: ev-1\nretry: 50\ndata: \n\n") // then the stream ends
	})
	var resumed atomic.Int32
	f.get = func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Last-Event-ID") == "" {
			w.WriteHeader(http.StatusMethodNotAllowed) // no standalone stream
			return
		}
		resumed.Add(1)
		id, _ := pending.Load().(string)
		writeSSE(w, "id: ev-2\ndata: \n\n", "id: ev-3\n"+sseData(`{"jsonrpc":"2.0","id":`+id+`,"result":`+textResult("resumed")+`}`))
	}
	c := connect(t, f.transport(), legacy())
	res, err := c.CallTool(context.Background(), "x", nil, client.WithOutputValidation(false))
	if err != nil {
		t.Fatal(err)
	}
	if res.Content[0].(*mcp.TextContent).Text != "resumed" || resumed.Load() != 1 {
		t.Fatalf("result %+v after %d resumptions", res, resumed.Load())
	}
	for _, s := range f.requests() {
		if s.Method == "GET" && s.Header.Get("Last-Event-ID") != "" {
			if s.Header.Get("Last-Event-ID") != "ev-1" || s.Header.Get("Mcp-Session-Id") != "session-1" {
				t.Errorf("resume headers: %v", s.Header)
			}
		}
	}
}

func TestHTTPStreamEndsWithoutResponse(t *testing.T) {
	f := newFake(t)
	f.on("tools/call", func(w http.ResponseWriter, r *http.Request, req *jsonrpc.Request) {
		writeSSE(w, sseData(`{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":1}}`))
	})
	c := connect(t, f.transport(), legacy())
	_, err := c.CallTool(context.Background(), "x", nil, client.WithOutputValidation(false))
	if client.CodeOf(err) != client.CodeTransport || !strings.Contains(err.Error(), "ended before the response") {
		t.Fatalf("err = %v", err)
	}
}

func TestHTTPDeleteOnClose(t *testing.T) {
	f := newFake(t)
	c, err := client.Connect(context.Background(), f.transport(), legacy())
	if err != nil {
		t.Fatal(err)
	}
	c.Close()
	var del []seen
	for _, s := range f.requests() {
		if s.Method == "DELETE" {
			del = append(del, s)
		}
	}
	if len(del) != 1 || del[0].Header.Get("Mcp-Session-Id") != "session-1" || del[0].Header.Get("MCP-Protocol-Version") != "2025-11-25" {
		t.Fatalf("DELETE requests: %+v", del)
	}
}

func TestHTTPMaxMessageSize(t *testing.T) {
	big := strings.Repeat("x", 4096)
	for _, sse := range []bool{false, true} {
		t.Run(fmt.Sprint("sse=", sse), func(t *testing.T) {
			f := newFake(t)
			f.on("tools/call", func(w http.ResponseWriter, r *http.Request, req *jsonrpc.Request) {
				msg := `{"jsonrpc":"2.0","id":` + req.ID.String() + `,"result":` + textResult(big) + `}`
				if sse {
					writeSSE(w, sseData(msg))
				} else {
					writeJSON(w, 200, msg)
				}
			})
			c := connect(t, f.transport(), client.WithEra(mcp.EraLegacy), client.WithLimits(client.Limits{MaxMessageBytes: 1024}))
			_, err := c.CallTool(context.Background(), "x", nil, client.WithOutputValidation(false))
			if client.CodeOf(err) != client.CodeTransport || !strings.Contains(err.Error(), "1024-byte limit") {
				t.Fatalf("err = %v", err)
			}
		})
	}
}

// countingTransport counts the requests a caller-supplied client makes.
type countingTransport struct{ n atomic.Int32 }

func (c *countingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	c.n.Add(1)
	return http.DefaultTransport.RoundTrip(r)
}

func TestHTTPCallerHeadersAndClient(t *testing.T) {
	f := newFake(t)
	f.handle = legacyOnly
	rt := &countingTransport{}
	c := connect(t, &client.HTTP{URL: f.url(), Header: http.Header{"Authorization": {"Bearer tok"}}, Client: &http.Client{Transport: rt}})
	if _, err := c.ListTools(context.Background()); err != nil {
		t.Fatal(err)
	}
	for _, s := range f.requests() {
		if s.Header.Get("Authorization") != "Bearer tok" {
			t.Errorf("%s %s without the caller's header", s.Method, s.RPC)
		}
	}
	if int(rt.n.Load()) < len(f.requests()) {
		t.Errorf("the caller's http.Client made %d of %d requests", rt.n.Load(), len(f.requests()))
	}
}

// 410 and JSON-RPC -32001 are not session loss (seed 001's gaps): only a
// 404 on a session re-initializes.
func TestHTTPOnly404IsSessionLoss(t *testing.T) {
	f := newFake(t)
	f.on("tools/call", func(w http.ResponseWriter, r *http.Request, req *jsonrpc.Request) {
		writeJSON(w, 410, `{"jsonrpc":"2.0","id":null,"error":{"code":-32001,"message":"gone"}}`)
	})
	c := connect(t, f.transport(), legacy())
	_, err := c.CallTool(context.Background(), "x", nil, client.WithOutputValidation(false))
	var je *client.JSONRPCError
	if !errors.As(err, &je) || je.Code != -32001 {
		t.Fatalf("err = %v, want the JSON-RPC error as sent", err)
	}
	if n := len(f.calls("initialize")); n != 1 {
		t.Errorf("%d initialize requests: a 410 must not re-initialize", n)
	}
}

// TestHTTPResponseOnAnotherStream: a response that comes on the standalone
// GET stream while the request's own SSE reply stays open ends the call,
// and the reply stream is closed rather than left open. The legacy POST
// carries the version and session headers, and not the 2026-07-28
// Mcp-Method and Mcp-Name, which 2025 revisions do not define.
func TestHTTPResponseOnAnotherStream(t *testing.T) {
	f := newFake(t)
	ids := make(chan string, 1)
	reading := make(chan struct{}, 1) // the client is reading the reply stream
	replyClosed := make(chan struct{})
	f.handle = func(w http.ResponseWriter, r *http.Request, req *jsonrpc.Request) bool {
		if req.Method != "tools/call" {
			return false
		}
		ids <- req.ID.String()
		writeSSE(w, "id: 1\ndata: \n\n", sseData(`{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"working"}}`))
		<-r.Context().Done()
		close(replyClosed)
		return true
	}
	f.get = func(w http.ResponseWriter, r *http.Request) {
		writeSSE(w, ": standalone stream\n\n")
		select {
		case <-reading:
			io.WriteString(w, sseData(`{"jsonrpc":"2.0","id":`+<-ids+`,"result":`+textResult("elsewhere")+`}`))
			w.(http.Flusher).Flush()
		case <-r.Context().Done():
			return
		}
		<-r.Context().Done()
	}
	c := connect(t, f.transport(), legacy(), client.WithLogHandler(func(client.LogMessage) { reading <- struct{}{} }))
	// The reply stream never ends on its own: a call that waited for it
	// would end with the client's timeout, a hang bound, as an error.
	res, err := c.CallTool(context.Background(), "x", nil, client.WithTimeout(testwait.Limit), client.WithOutputValidation(false))
	if err != nil {
		t.Fatal(err)
	}
	if res.Content[0].(*mcp.TextContent).Text != "elsewhere" {
		t.Fatalf("result %+v", res)
	}
	testwait.Closed(t, replyClosed, "the reply stream to be closed once the response came on another stream")
	h := f.calls("tools/call")[0].Header
	if h.Get("MCP-Protocol-Version") != "2025-11-25" || h.Get("Mcp-Session-Id") != "session-1" {
		t.Errorf("legacy tools/call headers: %v", h)
	}
	if _, ok := h["Mcp-Method"]; ok {
		t.Errorf("legacy tools/call sent Mcp-Method: %v", h)
	}
	if _, ok := h["Mcp-Name"]; ok {
		t.Errorf("legacy tools/call sent Mcp-Name: %v", h)
	}
}

// TestHTTPCloseEndsCallsInFlight: Close fails a call still waiting for its
// reply (no headers yet, or an SSE stream still open) with a transport
// error, and the server sees the request end.
func TestHTTPCloseEndsCallsInFlight(t *testing.T) {
	for _, sse := range []bool{false, true} {
		t.Run(fmt.Sprint("sse=", sse), func(t *testing.T) {
			f := newFake(t)
			waiting := make(chan struct{})
			ended := make(chan struct{})
			f.handle = func(w http.ResponseWriter, r *http.Request, req *jsonrpc.Request) bool {
				if req.Method != "tools/call" {
					return false
				}
				if sse {
					writeSSE(w, "id: 1\ndata: \n\n")
				}
				close(waiting)
				<-r.Context().Done()
				close(ended)
				return true
			}
			c, err := client.Connect(context.Background(), f.transport(), client.WithEra(mcp.EraLegacy), client.WithTimeout(-1))
			if err != nil {
				t.Fatal(err)
			}
			errc := make(chan error, 1)
			go func() {
				_, err := c.CallTool(context.Background(), "slow", nil, client.WithOutputValidation(false))
				errc <- err
			}()
			testwait.Closed(t, waiting, "the call to reach the server")
			c.Close()
			if err := testwait.Recv(t, errc, "Close to end the call in flight"); client.CodeOf(err) != client.CodeTransport || !strings.Contains(err.Error(), "client closed") {
				t.Fatalf("err = %v", err)
			}
			testwait.Closed(t, ended, "the server to see the request end")
		})
	}
}
