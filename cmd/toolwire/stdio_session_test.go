package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/toolwire/toolwire/internal/testenv"
	"github.com/toolwire/toolwire/internal/testwait"
	"github.com/toolwire/toolwire/jsonrpc"
	"github.com/toolwire/toolwire/mcp"
	"github.com/toolwire/toolwire/reference"
)

// stdioProc is a `toolwire serve --stdio` child driven line by line.
type stdioProc struct {
	t     *testing.T
	cmd   *exec.Cmd
	in    io.WriteCloser
	lines chan string
	notes []*jsonrpc.Notification
	next  int
}

const stdioWait = testwait.Limit // a failure bound, never a speed assertion

func startStdio(t *testing.T, args ...string) *stdioProc {
	t.Helper()
	bin := testenv.Toolwire(t)
	cmd := exec.Command(bin, append([]string{"serve", "--stdio", "--data-dir", t.TempDir()}, args...)...)
	in, out := stdioPipes(t, cmd)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &stdioProc{t: t, cmd: cmd, in: in, lines: make(chan string, 256)}
	go func() {
		sc := bufio.NewScanner(out)
		sc.Buffer(nil, 16<<20)
		for sc.Scan() {
			p.lines <- sc.Text()
		}
		close(p.lines)
	}()
	t.Cleanup(func() {
		in.Close()
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(stdioWait):
			cmd.Process.Kill()
		}
	})
	return p
}

func (p *stdioProc) writeLine(s string) {
	p.t.Helper()
	if _, err := io.WriteString(p.in, s+"\n"); err != nil {
		p.t.Fatal(err)
	}
}

// request sends a request and returns its response, keeping notifications
// that arrive first.
func (p *stdioProc) request(method string, params any) *jsonrpc.Response {
	p.t.Helper()
	p.next++
	id := jsonrpc.Int64ID(int64(p.next))
	req := &jsonrpc.Request{ID: id, Method: method}
	if params != nil {
		req.Params, _ = json.Marshal(params)
	}
	b, _ := jsonrpc.Encode(req)
	p.writeLine(string(b))
	return p.await(id)
}

func (p *stdioProc) await(id jsonrpc.ID) *jsonrpc.Response {
	p.t.Helper()
	for {
		m := p.read()
		switch m := m.(type) {
		case *jsonrpc.Notification:
			p.notes = append(p.notes, m)
		case *jsonrpc.Response:
			if m.ID == id {
				return m
			}
			p.t.Fatalf("response for %s while waiting for %s", m.ID, id)
		default:
			p.t.Fatalf("server sent a request: %+v", m)
		}
	}
}

func (p *stdioProc) read() jsonrpc.Message {
	p.t.Helper()
	select {
	case line, ok := <-p.lines:
		if !ok {
			p.t.Fatal("server closed stdout")
		}
		m, _, err := jsonrpc.Decode([]byte(line))
		if err != nil {
			p.t.Fatalf("stdout carried a non-MCP line %q: %v", line, err)
		}
		return m
	case <-time.After(stdioWait):
		p.t.Fatal("no message from the server")
		return nil
	}
}

func (p *stdioProc) initialize(version string) mcp.InitializeResult {
	p.t.Helper()
	var res mcp.InitializeResult
	mustResult(p.t, p.request("initialize", map[string]any{"protocolVersion": version, "capabilities": map[string]any{},
		"clientInfo": map[string]any{"name": "binary-test", "version": "1"}}), &res)
	p.writeLine(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	return res
}

func (p *stdioProc) call(name string, args any) *jsonrpc.Response {
	p.t.Helper()
	params := map[string]any{"name": name}
	if args != nil { // absent, as clients send it; null is refused
		params["arguments"] = args
	}
	return p.request("tools/call", params)
}

func mustResult(t *testing.T, r *jsonrpc.Response, v any) {
	t.Helper()
	if r.Error != nil {
		t.Fatalf("error %d: %s", r.Error.Code, r.Error.Message)
	}
	if err := json.Unmarshal(r.Result, v); err != nil {
		t.Fatalf("%s: %v", r.Result, err)
	}
}

func mustCode(t *testing.T, r *jsonrpc.Response, code int64) *jsonrpc.Error {
	t.Helper()
	if r.Error == nil || r.Error.Code != code {
		t.Fatalf("want error %d, got %+v %s", code, r.Error, r.Result)
	}
	return r.Error
}

func toolResult(t *testing.T, r *jsonrpc.Response) *mcp.CallToolResult {
	t.Helper()
	var res mcp.CallToolResult
	mustResult(t, r, &res)
	return &res
}

func texts(res *mcp.CallToolResult) []string {
	var out []string
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			out = append(out, tc.Text)
		}
	}
	return out
}

func TestStdioInitializeVersions(t *testing.T) {
	for requested, want := range map[string]string{
		"2025-11-25": "2025-11-25", "2025-06-18": "2025-06-18", "2025-03-26": "2025-03-26", "2024-11-05": "2025-11-25",
	} {
		t.Run(requested, func(t *testing.T) {
			p := startStdio(t)
			res := p.initialize(requested)
			if res.ProtocolVersion != want || res.ServerInfo.Name != reference.Info().Name {
				t.Errorf("got %+v", res)
			}
			if r := p.request("ping", nil); r.Error != nil || string(r.Result) != "{}" {
				t.Errorf("ping: %+v", r)
			}
		})
	}
}

func TestStdioSessionThroughBinary(t *testing.T) {
	p := startStdio(t, "--page-size", "5")
	if r := p.request("tools/list", nil); r.Error == nil {
		t.Fatal("tools/list before initialize was served")
	}
	p.initialize("2025-11-25")

	// Paging: 12 tools, 5 per page.
	var names []string
	cursor, pages := "", 0
	for {
		params := map[string]any{}
		if cursor != "" {
			params["cursor"] = cursor
		}
		var page mcp.ListToolsResult
		mustResult(t, p.request("tools/list", params), &page)
		pages++
		for _, tool := range page.Tools {
			names = append(names, tool.Name)
		}
		if cursor = page.NextCursor; cursor == "" {
			break
		}
	}
	want := "[echo gallery get-annotated-message get-env get-resource-links get-resource-reference get-roots-list get-structured-content get-sum get-tiny-image get-version gzip-file-as-resource safe_divide simulate-research-query toggle-simulated-logging toggle-subscriber-updates trigger-long-running-operation weather]"
	if fmt.Sprint(names) != want || pages != 4 {
		t.Errorf("listed %v in %d pages", names, pages)
	}
	mustCode(t, p.request("tools/list", map[string]any{"cursor": "bogus"}), jsonrpc.CodeInvalidParams)

	t.Run("reference tools", func(t *testing.T) {
		checkText := func(name string, args any, want ...string) {
			t.Helper()
			res := toolResult(t, p.call(name, args))
			if res.IsError || fmt.Sprint(texts(res)) != fmt.Sprint(want) {
				t.Errorf("%s: isError %v texts %q, want %q", name, res.IsError, texts(res), want)
			}
		}
		checkText("echo", map[string]any{"message": "hi"}, "Echo: hi")
		checkText("get-sum", map[string]any{"a": 7, "b": 5}, "The sum of 7 and 5 is 12.")
		checkText("get-version", map[string]any{}, "toolwire reference server "+binaryVersion(t))

		res := toolResult(t, p.call("get-structured-content", map[string]any{"location": "Chicago"}))
		if string(res.StructuredContent) != `{"temperature":36,"conditions":"Light rain / drizzle","humidity":82}` ||
			texts(res)[0] != string(res.StructuredContent) {
			t.Errorf("get-structured-content: %s / %q", res.StructuredContent, texts(res))
		}
		res = toolResult(t, p.call("weather", map[string]any{}))
		if texts(res)[0] != `{"conditions":"partly cloudy","temp_c":22.5}` {
			t.Errorf("weather text %q", texts(res))
		}

		res = toolResult(t, p.call("get-tiny-image", nil))
		if img, ok := res.Content[1].(*mcp.ImageContent); !ok || img.MIMEType != "image/png" || string(img.Data[1:4]) != "PNG" {
			t.Errorf("get-tiny-image: %+v", res.Content)
		}
		res = toolResult(t, p.call("get-annotated-message", map[string]any{"messageType": "debug", "includeImage": true}))
		tc := res.Content[0].(*mcp.TextContent)
		if tc.Annotations == nil || tc.Annotations.Priority == nil || *tc.Annotations.Priority != 0 || len(res.Content) != 2 {
			t.Errorf("annotated: priority 0 must be sent: %+v", res.Content)
		}
		res = toolResult(t, p.call("get-resource-links", map[string]any{"count": 2}))
		if l, ok := res.Content[2].(*mcp.ResourceLink); !ok || l.URI != "demo://resource/2" || len(res.Content) != 3 {
			t.Errorf("links: %+v", res.Content)
		}
		res = toolResult(t, p.call("get-resource-reference", map[string]any{"resourceType": "blob", "resourceId": 4}))
		if er, ok := res.Content[1].(*mcp.EmbeddedResource); !ok || er.Resource.ResourceURI() != "demo://blob/4" {
			t.Errorf("reference: %+v", res.Content)
		} else if _, ok := er.Resource.(*mcp.BlobResourceContents); !ok {
			t.Errorf("blob reference carries %T", er.Resource)
		}

		// gallery: byte-for-byte the five blocks of seed 000.
		r := p.call("gallery", nil)
		var raw struct {
			Content json.RawMessage `json:"content"`
		}
		mustResult(t, r, &raw)
		seed := `[{"type":"text","text":"a result can carry many blocks","annotations":{"audience":["user"],"priority":0.9}},` +
			`{"type":"image","mimeType":"image/png","data":"UE5HREFUQQ=="},{"type":"audio","mimeType":"audio/wav","data":"V0FWREFUQQ=="},` +
			`{"type":"resource_link","mimeType":"text/x-go","uri":"file:///project/main.go","name":"main.go"},` +
			`{"type":"resource","resource":{"uri":"file:///note.txt","mimeType":"text/plain","text":"embedded inline"}}]`
		if !sameJSON(t, seed, string(raw.Content)) {
			t.Errorf("gallery content\n got %s\nwant %s", raw.Content, seed)
		}

		res = toolResult(t, p.call("safe_divide", map[string]any{"a": 1, "b": 0}))
		if !res.IsError || texts(res)[0] != "cannot divide by zero; pass a non-zero b" {
			t.Errorf("divide by zero: %+v %q", res.IsError, texts(res))
		}
		res = toolResult(t, p.call("safe_divide", map[string]any{"a": 9, "b": 2}))
		if res.IsError || string(res.StructuredContent) != `{"quotient":4.5}` {
			t.Errorf("divide: %s", res.StructuredContent)
		}
	})

	t.Run("schema failure names the path", func(t *testing.T) {
		res := toolResult(t, p.call("get-sum", map[string]any{"a": "seven"}))
		msg := strings.Join(texts(res), " ")
		if !res.IsError || !strings.Contains(msg, "/a: expected number, got string") || !strings.Contains(msg, "/b: required property is missing") {
			t.Errorf("isError %v: %q", res.IsError, msg)
		}
	})

	t.Run("protocol errors", func(t *testing.T) {
		mustCode(t, p.call("no-such-tool", nil), jsonrpc.CodeInvalidParams)
		mustCode(t, p.request("tools/frobnicate", nil), jsonrpc.CodeMethodNotFound)
		p.writeLine(`{"jsonrpc":"2.0","id":"x", this is not json`)
		if r, ok := p.read().(*jsonrpc.Response); !ok || r.Error == nil || r.Error.Code != jsonrpc.CodeParseError {
			t.Fatalf("malformed line: %+v", r)
		}
		if r := p.request("ping", nil); r.Error != nil {
			t.Errorf("request after a malformed line: %+v", r.Error)
		}
	})

	t.Run("progress", func(t *testing.T) {
		p.notes = nil
		r := p.request("tools/call", map[string]any{"name": "trigger-long-running-operation",
			"arguments": map[string]any{"duration": 0.1, "steps": 3}, "_meta": map[string]any{"progressToken": "prog-7"}})
		if res := toolResult(t, r); res.IsError {
			t.Fatalf("long-running failed: %q", texts(res))
		}
		if len(p.notes) != 3 {
			t.Fatalf("want 3 progress notifications before the response, got %d", len(p.notes))
		}
		for i, n := range p.notes {
			var pp mcp.ProgressParams
			_ = json.Unmarshal(n.Params, &pp)
			if n.Method != "notifications/progress" || string(pp.ProgressToken) != `"prog-7"` || pp.Progress != float64(i+1) || *pp.Total != 3 {
				t.Errorf("notification %d: %s %s", i, n.Method, n.Params)
			}
		}
	})

	t.Run("cancellation", func(t *testing.T) {
		p.writeLine(`{"jsonrpc":"2.0","id":"long","method":"tools/call","params":{"name":"trigger-long-running-operation","arguments":{"duration":60,"steps":2}}}`)
		p.writeLine(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"long","reason":"test"}}`)
		// The next answer on stdout is the ping's: the cancelled call never replies.
		r := p.request("ping", nil)
		if r.Error != nil {
			t.Fatal(r.Error)
		}
	})
}

// Through the binary: with one request running at a
// time, a call queued behind a long one and cancelled never runs and is never
// answered, and cancelling the long one frees the connection: the next
// request is answered, where the long call, an hour long (past the test's
// bound; the tool timeout is 10 minutes), would hold the only slot.
func TestStdioCancelQueuedRequest(t *testing.T) {
	p := startStdio(t, "--max-concurrency", "1")
	p.initialize("2025-11-25") // id 1
	p.writeLine(`{"jsonrpc":"2.0","id":"1","method":"tools/call","params":{"name":"trigger-long-running-operation","arguments":{"duration":3600,"steps":5}}}`)
	p.writeLine(`{"jsonrpc":"2.0","id":"2","method":"tools/call","params":{"name":"echo","arguments":{"message":"queued"}}}`)
	p.writeLine(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"2","reason":"test"}}`)
	p.writeLine(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"1","reason":"test"}}`)
	p.writeLine(`{"jsonrpc":"2.0","id":3,"method":"ping"}`)
	deadline := time.After(testwait.Limit) // a hang bound: far under the long call's hour
	for {
		select {
		case line, ok := <-p.lines:
			if !ok {
				t.Fatal("server closed stdout")
			}
			m, _, err := jsonrpc.Decode([]byte(line))
			if err != nil {
				t.Fatalf("bad line %q: %v", line, err)
			}
			r, ok := m.(*jsonrpc.Response)
			if !ok {
				continue // progress of the long call
			}
			if r.ID != jsonrpc.Int64ID(3) {
				t.Fatalf("a cancelled request was answered: %s", line)
			}
			if r.Error != nil {
				t.Fatalf("ping: %+v", r.Error)
			}
			p.next = 3
			// Nothing for ids "1" or "2" follows either.
			if r := p.call("echo", map[string]any{"message": "after"}); texts(toolResult(t, r))[0] != "Echo: after" {
				t.Errorf("call after the cancellations: %+v", r)
			}
			return
		case <-deadline:
			t.Fatalf("no answer to a ping %v after cancelling the queued and the running call", testwait.Limit)
		}
	}
}

// Through the binary: a line over --max-message-size is
// answered with -32600 carrying the request's id, read from the start of the
// line, and the session goes on.
func TestStdioTooLargeLineKeepsItsID(t *testing.T) {
	refusedBigCall(t, []string{"--max-message-size", "300"}, jsonrpc.CodeInvalidRequest, "300 bytes")
}

// refusedBigCall runs the binary over stdio with flags and sends a
// tools/call of over 1,000 bytes: it must be answered with code, with its
// id and a message containing limit, and an ordinary call must work after.
func refusedBigCall(t *testing.T, flags []string, code int64, limit string) {
	t.Helper()
	p := startStdio(t, flags...)
	p.initialize("2025-11-25")
	p.writeLine(`{"jsonrpc":"2.0","id":"big-7","method":"tools/call","params":{"name":"echo","arguments":{"message":"` + strings.Repeat("x", 1000) + `"}}}`)
	e := mustCode(t, p.await(jsonrpc.StringID("big-7")), code)
	if !strings.Contains(e.Message, limit) {
		t.Errorf("message %q does not name the limit (%s)", e.Message, limit)
	}
	if r := p.call("echo", map[string]any{"message": "after"}); texts(toolResult(t, r))[0] != "Echo: after" {
		t.Errorf("call after the refused one: %+v", r)
	}
}

func TestStdioModernWithoutInitialize(t *testing.T) {
	p := startStdio(t)
	meta := map[string]any{mcp.MetaProtocolVersion: "2026-07-28", mcp.MetaClientCapabilities: map[string]any{}}
	var d mcp.DiscoverResult
	mustResult(t, p.request("server/discover", map[string]any{"_meta": meta}), &d)
	if d.ResultType != mcp.ResultComplete || d.SupportedVersions[0] != "2026-07-28" || d.Capabilities.Tools == nil {
		t.Errorf("discover %+v", d)
	}
	r := p.request("tools/call", map[string]any{"name": "get-sum", "arguments": map[string]any{"a": 7, "b": 5}, "_meta": meta})
	res := toolResult(t, r)
	if res.ResultType != mcp.ResultComplete || texts(res)[0] != "The sum of 7 and 5 is 12." {
		t.Errorf("modern call %+v", res)
	}
	var list map[string]json.RawMessage
	mustResult(t, p.request("tools/list", map[string]any{"_meta": meta}), &list)
	if list["ttlMs"] == nil || string(list["cacheScope"]) != `"public"` {
		t.Errorf("modern list lacks caching members: %v", list)
	}
	meta[mcp.MetaProtocolVersion] = "2030-01-01"
	e := mustCode(t, p.request("tools/list", map[string]any{"_meta": meta}), mcp.CodeUnsupportedProtocolVersion)
	if !strings.Contains(string(e.Data), `"requested":"2030-01-01"`) || !strings.Contains(string(e.Data), `"supported":["2026-07-28"`) {
		t.Errorf("-32022 data %s", e.Data)
	}
	delete(meta, mcp.MetaClientCapabilities)
	meta[mcp.MetaProtocolVersion] = "2026-07-28"
	mustCode(t, p.request("tools/list", map[string]any{"_meta": meta}), jsonrpc.CodeInvalidParams)
}

func TestStdioEOFIsCleanExit(t *testing.T) {
	bin := testenv.Toolwire(t)
	ctx, cancel := context.WithTimeout(context.Background(), stdioWait)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "serve", "--stdio", "--data-dir", t.TempDir())
	cmd.Stdin = strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}` + "\n")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("exit: %v\nstderr: %s", err, stderr.String())
	}
	if strings.TrimSpace(string(out)) != `{"jsonrpc":"2.0","id":1,"result":{}}` {
		t.Errorf("stdout %q", out)
	}
	if !strings.Contains(stderr.String(), "serving reference tools") {
		t.Errorf("logs did not go to stderr: %q", stderr.String())
	}
}

func sameJSON(t *testing.T, a, b string) bool {
	t.Helper()
	var x, y any
	if json.Unmarshal([]byte(a), &x) != nil || json.Unmarshal([]byte(b), &y) != nil {
		return false
	}
	xa, _ := json.Marshal(x)
	ya, _ := json.Marshal(y)
	return string(xa) == string(ya)
}

// --memory-budget bounds the request bytes in flight: a request larger than
// the whole budget is refused, undecoded, with -32005 and its id, and the
// session goes on.
func TestStdioMemoryBudgetFlag(t *testing.T) {
	refusedBigCall(t, []string{"--memory-budget", "400"}, jsonrpc.CodeOverloaded, "memory budget of 400 bytes")
}
