package hostile

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/toolwire/toolwire/internal/testwait"
	"github.com/toolwire/toolwire/reference"
	"github.com/toolwire/toolwire/server"
	"github.com/toolwire/toolwire/transport"
	"github.com/toolwire/toolwire/transport/stdio"
	"github.com/toolwire/toolwire/transport/streamable"
)

// limit is the message size limit every transport of the rig is given:
// stdio's line limit (transport.WithMaxMessageSize) and the HTTP body limit
// (streamable.WithMaxBodyBytes). It is small so that the oversized cases
// stay cheap, and at most what net/http drains after a handler that did
// not read the body (256 KiB), so that a refused body never resets the
// connection under the client.
const limit = 128 << 10

// waitLimit bounds every wait for a reply: a hang bound, never a speed
// check.
const waitLimit = testwait.Limit

// kind is a transport the table runs over.
type kind int

const (
	stdioK  kind = iota // transport.Serve over a stdio.Conn, an initialized 2025-11-25 session
	legacyK             // Streamable HTTP, an initialized 2025-11-25 session
	modernK             // Streamable HTTP, stateless 2026-07-28 requests
)

var kinds = []kind{stdioK, legacyK, modernK}

func (k kind) String() string {
	switch k {
	case stdioK:
		return "stdio"
	case legacyK:
		return "http-2025-11-25"
	case modernK:
		return "http-2026-07-28"
	}
	return "?"
}

// modernMembers are the _meta members every 2026-07-28 request carries.
const modernMembers = `"io.modelcontextprotocol/protocolVersion":"2026-07-28",` +
	`"io.modelcontextprotocol/clientCapabilities":{},` +
	`"io.modelcontextprotocol/clientInfo":{"name":"hostile","version":"1"}`

// expand fills a message template for a transport: "$M" becomes
// `,"_meta":{...}` (a following member of params), "$m" `"_meta":{...}`
// (the first member) and "$I" the modern members followed by a comma
// (inside an _meta the template writes itself); on the 2025-era
// transports all three vanish.
func expand(tmpl string, k kind) string {
	if k != modernK {
		return strings.NewReplacer("$M", "", "$m", "", "$I", "").Replace(tmpl)
	}
	return strings.NewReplacer(
		"$M", `,"_meta":{`+modernMembers+`}`,
		"$m", `"_meta":{`+modernMembers+`}`,
		"$I", modernMembers+",",
	).Replace(tmpl)
}

// rig is one server hosting the reference tools, reached over stdio (one
// connection, in-process) and over one httptest server running the
// streamable handler (one 2025-era session; 2026-era requests need none).
type rig struct {
	srv *server.Server

	// stdio
	in    *io.PipeWriter
	lines chan []byte // every line the server wrote

	// HTTP
	ts      *httptest.Server
	hc      *http.Client
	session string
}

func newRig(t *testing.T) *rig {
	t.Helper()
	srv, err := reference.NewServer()
	if err != nil {
		t.Fatal(err)
	}
	r := &rig{srv: srv}

	// stdio: the transport reads what the test writes to in and writes to
	// a pipe a goroutine turns into lines.
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	r.in = inW
	r.lines = make(chan []byte, 64)
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() {
		served <- transport.Serve(ctx, stdio.NewConn(inR, outW, 0), srv, transport.WithLimits(transport.Limits{MaxMessageBytes: limit}))
		outW.Close()
	}()
	go func() {
		br := bufio.NewReaderSize(outR, 64<<10)
		for {
			line, err := br.ReadBytes('\n')
			if len(line) > 0 {
				r.lines <- bytes.TrimSuffix(line, []byte("\n"))
			}
			if err != nil {
				close(r.lines)
				return
			}
		}
	}()

	h := streamable.NewHandler(srv, streamable.WithLimits(streamable.Limits{MaxBodyBytes: limit}))
	r.ts = httptest.NewServer(h)
	r.hc = &http.Client{Timeout: waitLimit}
	t.Cleanup(func() {
		inW.Close()
		select {
		case err := <-served:
			if err != nil {
				t.Errorf("stdio Serve: %v", err)
			}
		case <-time.After(waitLimit):
			t.Errorf("stdio Serve did not end after its input closed")
		}
		cancel()
		for range r.lines {
		}
		h.Close()
		r.ts.Close()
		r.hc.CloseIdleConnections()
	})

	// Open the 2025-era session on both.
	const initMsg = `{"jsonrpc":"2.0","id":"init","method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"hostile","version":"1"}}}`
	r.write(t, []byte(initMsg))
	if line := r.nextLine(t); !bytes.Contains(line, []byte(`"protocolVersion":"2025-11-25"`)) {
		t.Fatalf("stdio initialize: %s", line)
	}
	r.write(t, []byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}`))

	resp := r.post(t, legacyK, http.MethodPost, initMsg, nil)
	if resp.status != http.StatusOK || resp.header.Get("Mcp-Session-Id") == "" {
		t.Fatalf("HTTP initialize: %d %s", resp.status, resp.body)
	}
	r.session = resp.header.Get("Mcp-Session-Id")
	if resp := r.post(t, legacyK, http.MethodPost, `{"jsonrpc":"2.0","method":"notifications/initialized"}`, nil); resp.status != http.StatusAccepted {
		t.Fatalf("notifications/initialized: %d %s", resp.status, resp.body)
	}
	return r
}

// write sends one line to the stdio server.
func (r *rig) write(t *testing.T, line []byte) {
	t.Helper()
	done := make(chan error, 1)
	go func() {
		_, err := r.in.Write(append(append([]byte(nil), line...), '\n'))
		done <- err
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("stdio write: %v", err)
		}
	case <-time.After(waitLimit):
		t.Fatal("stdio write blocked: the server stopped reading")
	}
}

// nextLine waits for the stdio server's next line.
func (r *rig) nextLine(t *testing.T) []byte {
	t.Helper()
	select {
	case l, ok := <-r.lines:
		if !ok {
			t.Fatal("the stdio server closed its output")
		}
		return l
	case <-time.After(waitLimit):
		t.Fatal("no line from the stdio server")
	}
	return nil
}

// httpReply is what an HTTP exchange returned.
type httpReply struct {
	status int
	header http.Header
	body   string
}

// post sends one HTTP request with the headers of its era set right;
// edit may then spoil them. A method other than POST carries no body.
func (r *rig) post(t *testing.T, k kind, method, body string, edit func(*http.Request)) httpReply {
	t.Helper()
	rep, err := r.send(k, method, body, edit)
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

// send is post for any goroutine: it returns the failure.
func (r *rig) send(k kind, method, body string, edit func(*http.Request)) (httpReply, error) {
	var rd io.Reader
	if method == http.MethodPost {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, r.ts.URL, rd)
	if err != nil {
		return httpReply{}, err
	}
	if method == http.MethodPost {
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
	} else {
		req.Header.Set("Accept", "text/event-stream")
	}
	switch k {
	case legacyK:
		if r.session != "" {
			req.Header.Set("Mcp-Session-Id", r.session)
			req.Header.Set("MCP-Protocol-Version", "2025-11-25")
		}
	case modernK:
		req.Header.Set("MCP-Protocol-Version", "2026-07-28")
	}
	if edit != nil {
		edit(req)
	}
	resp, err := r.hc.Do(req)
	if err != nil {
		return httpReply{}, fmt.Errorf("HTTP %s: %w", method, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return httpReply{}, fmt.Errorf("reading the HTTP reply: %w", err)
	}
	return httpReply{status: resp.StatusCode, header: resp.Header, body: string(b)}, nil
}

// reply is one JSON-RPC message the server sent, read loosely (the test
// judges it; it must not refuse what it judges).
type reply struct {
	raw     string
	JSONRPC *string         `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Result  json.RawMessage `json:"result"`
	Error   *struct {
		Code    int64           `json:"code"`
		Message string          `json:"message"`
		Data    json.RawMessage `json:"data"`
	} `json:"error"`
	Method string `json:"method"`
}

func parseReply(raw string) (*reply, error) {
	var r reply
	if err := json.Unmarshal([]byte(raw), &r); err != nil {
		return nil, fmt.Errorf("reply is not JSON: %v: %.300s", err, raw)
	}
	r.raw = raw
	return &r, nil
}

// sseMessages returns the data of each SSE event that carries one.
func sseMessages(body string) []string {
	var out []string
	for _, ev := range strings.Split(strings.ReplaceAll(body, "\r\n", "\n"), "\n\n") {
		var data []string
		for _, l := range strings.Split(ev, "\n") {
			if v, ok := strings.CutPrefix(l, "data:"); ok {
				data = append(data, strings.TrimPrefix(v, " "))
			}
		}
		if d := strings.Join(data, "\n"); d != "" {
			out = append(out, d)
		}
	}
	return out
}

// toolResult is the part of a tools/call result the table checks.
type toolResult struct {
	Content []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	} `json:"content"`
	IsError    bool   `json:"isError"`
	ResultType string `json:"resultType"`
}

func (tr toolResult) text() string {
	var b strings.Builder
	for _, c := range tr.Content {
		if c.Type == "text" {
			b.WriteString(c.Text)
		}
	}
	return b.String()
}

// idMatches compares a reply's raw id with the id expected: nil for null,
// an int or int64 for an integer (compared digit for digit), a string for
// a string (compared after unescaping).
func idMatches(raw json.RawMessage, want any) error {
	got := strings.TrimSpace(string(raw))
	if got == "" {
		return errors.New(`the reply has no "id" member`)
	}
	switch w := want.(type) {
	case nil:
		if got != "null" {
			return fmt.Errorf("id %s, want null", got)
		}
	case int:
		if got != fmt.Sprint(w) {
			return fmt.Errorf("id %s, want %d", got, w)
		}
	case int64:
		if got != fmt.Sprint(w) {
			return fmt.Errorf("id %s, want %d", got, w)
		}
	case string:
		var s string
		if err := json.Unmarshal(raw, &s); err != nil || s != w {
			return fmt.Errorf("id %s, want %q", got, w)
		}
	default:
		return fmt.Errorf("bad expected id %#v", want)
	}
	return nil
}

// healthCall is the normal tools/call (echo) sent after every case.
func healthCall(i int, k kind) (msg, id, text string) {
	id = fmt.Sprintf("health-%d", i)
	text = fmt.Sprintf("alive %d", i)
	msg = expand(fmt.Sprintf(`{"jsonrpc":"2.0","id":%q,"method":"tools/call","params":{"name":"echo","arguments":{"message":%q}$M}}`, id, text), k)
	return msg, id, "Echo: " + text
}

// checkHealth checks the reply to healthCall.
func checkHealth(raw, id, text string) error {
	r, err := parseReply(raw)
	if err != nil {
		return err
	}
	if err := idMatches(r.ID, id); err != nil {
		return fmt.Errorf("health call: %v", err)
	}
	if r.Error != nil || r.Result == nil {
		return fmt.Errorf("health call failed: %.300s", raw)
	}
	var tr toolResult
	if err := json.Unmarshal(r.Result, &tr); err != nil || tr.IsError || tr.text() != text {
		return fmt.Errorf("health call: want %q, got %.300s", text, raw)
	}
	return nil
}
