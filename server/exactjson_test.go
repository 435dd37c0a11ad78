package server_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/toolwire/toolwire/internal/testhttp"
	"github.com/toolwire/toolwire/internal/testtools"
	"github.com/toolwire/toolwire/internal/testwait"
	"github.com/toolwire/toolwire/jsonrpc"
	"github.com/toolwire/toolwire/mcp"
	"github.com/toolwire/toolwire/server"
	"github.com/toolwire/toolwire/transport/stdio"
	"github.com/toolwire/toolwire/transport/streamable"
)

// exactCase is a message that a reader matching names case-insensitively,
// or letting a repeated name win, would take for a call of "spy"; toolwire
// refuses it. %s marks where a 2026-07-28 request's params carry _meta (a
// leading comma included).
type exactCase struct {
	name string
	msg  string
	code int64  // the JSON-RPC error code; 0: an isError result
	text string // in the error message or the isError text
	// legacyHTTP is the HTTP status in a 2025-era session (the envelope
	// errors are 400; errors of a decoded request are 200 replies).
	legacyHTTP int
	// modernHTTPCode, when set, is the code over 2026-07-28 HTTP, where the
	// Mcp-Name header (naming "spy", as a lax reader of the body would)
	// is checked against the exact reading of the body first.
	modernHTTPCode int64
}

var exactCases = []exactCase{
	{"Method", `{"jsonrpc":"2.0","id":7,"Method":"tools/call","params":{"name":"spy"%s}}`, -32600, `did you mean "method"`, 400, 0},
	{"JSONRPC", `{"JSONRPC":"2.0","id":7,"method":"tools/call","params":{"name":"spy"%s}}`, -32600, `did you mean "jsonrpc"`, 400, 0},
	{"Params", `{"jsonrpc":"2.0","id":7,"method":"tools/call","Params":{"name":"spy"%s}}`, -32600, `did you mean "params"`, 400, 0},
	{"ID", `{"jsonrpc":"2.0","ID":7,"method":"tools/call","params":{"name":"spy"%s}}`, -32600, `did you mean "id"`, 400, 0},
	{"escaped Method", `{"jsonrpc":"2.0","id":7,"M\u0065thod":"tools/call","params":{"name":"spy"%s}}`, -32600, `"Method"`, 400, 0},
	{"method twice", `{"jsonrpc":"2.0","id":7,"method":"ping","method":"tools/call","params":{"name":"spy"%s}}`, -32600, `duplicate member "method"`, 400, 0},
	{"method twice, once escaped", `{"jsonrpc":"2.0","id":7,"method":"ping","m\u0065thod":"tools/call","params":{"name":"spy"%s}}`, -32600, `duplicate member "method"`, 400, 0},
	{"id twice", `{"jsonrpc":"2.0","id":7,"id":8,"method":"tools/call","params":{"name":"spy"%s}}`, -32600, `duplicate member "id"`, 400, 0},
	{"params twice", `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"other"%s},"params":{"name":"spy"%[1]s}}`, -32600, `duplicate member "params"`, 400, 0},
	{"jsonrpc twice", `{"jsonrpc":"1.0","jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"spy"%s}}`, -32600, `duplicate member "jsonrpc"`, 400, 0},
	{"id of the wrong type", `{"jsonrpc":"2.0","id":true,"method":"tools/call","params":{"name":"spy"%s}}`, -32600, `not a boolean`, 400, 0},
	{"invalid UTF-8 in a name", "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"tools/call\",\"params\":{\"name\":\"sp\xffy\"%s}}", -32700, "invalid UTF-8", 400, 0},
	{"params Name", `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"Name":"spy"%s}}`, -32602, `did you mean "name"`, 200, 0},
	{"params name and NAME", `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"other","NAME":"spy"%s}}`, -32602, `"NAME"`, 200, mcp.CodeHeaderMismatch},
	{"params name twice", `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"other","name":"spy"%s}}`, -32602, `duplicate`, 200, 0},
	{"params Arguments", `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"spy","Arguments":{"n":1}%s}}`, -32602, `did you mean "arguments"`, 200, 0},
	{"_meta member twice", `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"spy","_meta":{"progressToken":1,"progressToken":2}%s}}`, -32602, `duplicate`, 200, 0},
	{"arguments member twice", `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"spy","arguments":{"n":1,"n":2}%s}}`, 0, `/n`, 200, 0},
	{"nested arguments member twice", `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"spy","arguments":{"o":{"k":1,"k":2}}%s}}`, 0, `/o/k`, 200, 0},
	// An inferred inputSchema allows no other properties; a typed input
	// whose schema does would refuse "N" when decoding it (wirejson).
	{"argument N for n", `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"spy","arguments":{"N":1}%s}}`, 0, `additional properties 'N'`, 200, 0},
	{"argument N for n, open schema", `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"spy-open","arguments":{"N":1}%s}}`, 0, `did you mean "n"`, 200, 0},
}

const modernMetaJSON = `,"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"t","version":"1"}}`

// spyServer hosts "spy", which counts its runs, and "echo" for the check
// that the connection still serves.
func spyServer(t *testing.T, runs *atomic.Int32) *server.Server {
	t.Helper()
	s := server.New(mcp.Implementation{Name: "exact", Version: "1"})
	type spyIn struct {
		N int            `json:"n,omitempty"`
		O map[string]int `json:"o,omitempty"`
	}
	spy := func(ctx context.Context, req *server.CallRequest, in spyIn) (string, error) {
		runs.Add(1)
		return "ran", nil
	}
	if err := server.AddTool(s, &mcp.Tool{Name: "spy"}, spy); err != nil {
		t.Fatal(err)
	}
	if err := server.AddTool(s, &mcp.Tool{Name: "spy-open", InputSchema: json.RawMessage(`{"type":"object"}`)}, spy); err != nil {
		t.Fatal(err)
	}
	testtools.AddEcho(t, s, "")
	return s
}

// checkExact checks one reply against its case.
func checkExact(t *testing.T, c exactCase, body string) {
	t.Helper()
	var r struct {
		Result *mcp.CallToolResult `json:"result"`
		Error  *jsonrpc.Error      `json:"error"`
	}
	if err := json.Unmarshal([]byte(body), &r); err != nil {
		t.Fatalf("reply %q: %v", body, err)
	}
	if c.code != 0 {
		if r.Error == nil || r.Error.Code != c.code || !strings.Contains(r.Error.Message, c.text) {
			t.Fatalf("want error %d mentioning %q, got %s", c.code, c.text, body)
		}
		return
	}
	if r.Result == nil || !r.Result.IsError || len(r.Result.Content) == 0 ||
		!strings.Contains(r.Result.Content[0].(*mcp.TextContent).Text, c.text) {
		t.Fatalf("want an isError result mentioning %q, got %s", c.text, body)
	}
}

func TestExactJSONOverStdio(t *testing.T) {
	for _, era := range []string{"legacy", "modern"} {
		t.Run(era, func(t *testing.T) {
			var runs atomic.Int32
			inR, inW := io.Pipe()
			outR, outW := io.Pipe()
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan error, 1)
			go func() { done <- stdio.Serve(ctx, spyServer(t, &runs), inR, outW) }()
			t.Cleanup(func() {
				inW.Close()
				cancel()
				<-done
			})
			lines := bufio.NewScanner(outR)
			lines.Buffer(nil, 1<<20)
			roundTrip := func(msg string) string {
				t.Helper()
				if _, err := io.WriteString(inW, msg+"\n"); err != nil {
					t.Fatal(err)
				}
				got := make(chan string, 1)
				go func() {
					if lines.Scan() {
						got <- lines.Text()
					}
					close(got)
				}()
				select {
				case l, ok := <-got:
					if !ok {
						t.Fatal("server closed its output")
					}
					return l
				case <-time.After(testwait.Limit): // a hang bound, not a speed check
					t.Fatal("no reply")
					return ""
				}
			}
			meta := ""
			if era == "modern" {
				meta = modernMetaJSON
			} else {
				roundTrip(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
				if _, err := io.WriteString(inW, `{"jsonrpc":"2.0","method":"notifications/initialized"}`+"\n"); err != nil {
					t.Fatal(err)
				}
			}
			for i, c := range exactCases {
				t.Run(c.name, func(t *testing.T) {
					checkExact(t, c, roundTrip(fmt.Sprintf(c.msg, meta)))
					if runs.Load() != 0 {
						t.Fatalf("the tool ran")
					}
					// The same connection still serves a normal call.
					ok := roundTrip(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"echo","arguments":{"message":"still here"}%s}}`, 100+i, meta))
					if !strings.Contains(ok, `"text":"still here"`) {
						t.Fatalf("after the refusal: %s", ok)
					}
				})
			}
		})
	}
}

func TestExactJSONOverHTTP(t *testing.T) {
	var runs atomic.Int32
	h := streamable.NewHandler(spyServer(t, &runs))
	ts := httptest.NewServer(h)
	t.Cleanup(func() { h.Close(); ts.Close() })
	post := func(body, session string, modern bool, name string) (int, string) {
		t.Helper()
		r := testhttp.MCPPost(t, ts.URL, session, body)
		if modern {
			r.Header.Set("MCP-Protocol-Version", "2026-07-28")
			r.Header.Set("Mcp-Method", "tools/call")
			r.Header.Set("Mcp-Name", name)
		}
		resp, b := testhttp.Do(t, nil, r)
		return resp.StatusCode, b
	}
	initResp, _ := testhttp.Do(t, nil, testhttp.MCPPost(t, ts.URL, "",
		`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`))
	session := initResp.Header.Get("Mcp-Session-Id")
	if status, _ := post(`{"jsonrpc":"2.0","method":"notifications/initialized"}`, session, false, ""); status != http.StatusAccepted {
		t.Fatalf("initialized: %d", status)
	}
	for i, c := range exactCases {
		t.Run("legacy/"+c.name, func(t *testing.T) {
			status, body := post(fmt.Sprintf(c.msg, ""), session, false, "")
			if status != c.legacyHTTP {
				t.Errorf("status %d, want %d: %s", status, c.legacyHTTP, body)
			}
			checkExact(t, c, body)
			_, ok := post(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"echo","arguments":{"message":"still here"}}}`, 100+i), session, false, "")
			if !strings.Contains(ok, `"text":"still here"`) {
				t.Fatalf("the session no longer serves: %s", ok)
			}
		})
		t.Run("modern/"+c.name, func(t *testing.T) {
			name := "spy"
			if strings.Contains(c.msg, `"spy-open"`) {
				name = "spy-open"
			}
			status, body := post(fmt.Sprintf(c.msg, modernMetaJSON), "", true, name)
			want := http.StatusBadRequest
			if c.code == 0 {
				want = http.StatusOK
			}
			if status != want {
				t.Errorf("status %d, want %d: %s", status, want, body)
			}
			mc := c
			if c.modernHTTPCode != 0 {
				mc.code, mc.text = c.modernHTTPCode, "Mcp-Name"
			}
			checkExact(t, mc, body)
		})
	}
	if runs.Load() != 0 {
		t.Errorf("the tool ran %d times", runs.Load())
	}
}

// A member name spelled with escapes is that member: "_m\u0065ta" carrying
// a 2026-07-28 version is served as a 2026-07-28 request, as any other
// exact reader would take it, not as a request of the session.
func TestEscapedMetaIsMeta(t *testing.T) {
	var runs atomic.Int32
	p := connect(t, spyServer(t, &runs))
	msg := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"message":"x"},"_m\u0065ta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`
	_, ch := p.startRaw(jsonrpc.Int64ID(1), msg)
	r := p.wait(ch)
	if r.Error != nil || !strings.Contains(string(r.Result), `"resultType":"complete"`) {
		t.Fatalf("escaped _meta not served as 2026-07-28: %s %v", r.Result, r.Error)
	}
}
