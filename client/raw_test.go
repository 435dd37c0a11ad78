package client_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/toolwire/toolwire/client"
	"github.com/toolwire/toolwire/jsonrpc"
	"github.com/toolwire/toolwire/mcp"
)

// oddResult is a tools/call result as a server might write it: members out
// of the usual order, spaces and a newline inside, an unknown member, and a
// number a re-encoder would rewrite.
const oddResult = `{"zeta" : 1.50,"content":[ {"text":"hi",  "type":"text"} ],
  "alpha":{"b":2,"a":1},"isError":false , "structuredContent":{"n":1e2}}`

// TestRawResultsAreExact: Call and CallToolRaw return the result member's
// bytes as the server sent them, over HTTP (JSON and SSE) and a Conn.
func TestRawResultsAreExact(t *testing.T) {
	transports := map[string]func(t *testing.T) client.Transport{
		"http-json": func(t *testing.T) client.Transport {
			f := newFake(t)
			f.on("tools/call", func(w http.ResponseWriter, r *http.Request, req *jsonrpc.Request) {
				writeJSON(w, 200, `{"jsonrpc":"2.0","id":`+req.ID.String()+`,"result":`+oddResult+`}`)
			})
			return f.transport()
		},
		"http-sse": func(t *testing.T) client.Transport {
			f := newFake(t)
			f.on("tools/call", func(w http.ResponseWriter, r *http.Request, req *jsonrpc.Request) {
				// One event may carry a message over several data lines.
				msg := `{"jsonrpc":"2.0","id":` + req.ID.String() + `,"result":` + oddResult + `}`
				writeSSE(w, "event: message\ndata: "+strings.ReplaceAll(msg, "\n", "\ndata: ")+"\n\n")
			})
			return f.transport()
		},
		"conn": func(t *testing.T) client.Transport {
			return &client.Conn{Conn: scripted(t, func(req *jsonrpc.Request) string {
				if req.Method == "tools/call" {
					return `{"jsonrpc":"2.0","id":` + req.ID.String() + `,"result":` + oddResult + `}`
				}
				return `{"jsonrpc":"2.0","id":` + req.ID.String() + `,"result":{"tools":[]}}`
			})}
		},
	}
	for name, tr := range transports {
		t.Run(name, func(t *testing.T) {
			c := connect(t, tr(t), client.WithEra(mcp.EraLegacy))
			ctx := context.Background()
			raw, err := c.CallToolRaw(ctx, "odd", map[string]int{"a": 1})
			if err != nil {
				t.Fatal(err)
			}
			if string(raw) != oddResult {
				t.Errorf("CallToolRaw returned\n%s\nwant\n%s", raw, oddResult)
			}
			raw, err = c.Call(ctx, "tools/call", map[string]any{"name": "odd"})
			if err != nil {
				t.Fatal(err)
			}
			if string(raw) != oddResult {
				t.Errorf("Call returned\n%s\nwant\n%s", raw, oddResult)
			}
		})
	}
}

// TestCallToolRawPassesResultsOn: a proxy gets an isError result and a
// result CallTool would refuse (an unknown block type, structuredContent
// breaking the outputSchema) as results, untouched.
func TestCallToolRawPassesResultsOn(t *testing.T) {
	results := []string{
		`{"content":[{"type":"text","text":"city not found"}],"isError":true}`,
		`{"content":[{"type":"video","data":"AA=="}]}`,
		`{"resultType":"complete","content":[],"structuredContent":{"temp":"warm"}}`,
	}
	for _, want := range results {
		f := modernFake(t, `[{"name":"weather","inputSchema":{"type":"object"},"outputSchema":{"type":"object","properties":{"temp":{"type":"number"}}}}]`,
			func(w http.ResponseWriter, r *http.Request, req *jsonrpc.Request) { writeResult(w, req.ID, want) })
		c := connect(t, f.transport())
		raw, err := c.CallToolRaw(context.Background(), "weather", nil)
		if err != nil || string(raw) != want {
			t.Errorf("CallToolRaw = %s, %v; want %s", raw, err, want)
		}
		if _, err := c.CallTool(context.Background(), "weather", nil); err == nil {
			t.Errorf("CallTool accepted %s", want)
		}
	}
}

// TestExactJSON: results and messages are read exactly: a member name that
// differs from a known one only by case, or a name given twice, is a
// protocol error rather than something a case-insensitive or last-wins
// reader would quietly accept.
func TestExactJSON(t *testing.T) {
	cases := map[string]string{
		"case variant of isError":     `{"content":[],"IsError":true}`,
		"case variant in a block":     `{"content":[{"type":"text","text":"a","Text":"b"}]}`,
		"case variant in a resource":  `{"content":[{"type":"resource","resource":{"uri":"file:///a","text":"t","URI":"file:///b"}}]}`,
		"case variant in annotations": `{"content":[{"type":"text","text":"a","annotations":{"Priority":1}}]}`,
		"duplicate content":           `{"content":[{"type":"text","text":"a"}],"content":[]}`,
		"duplicate deep inside":       `{"content":[],"structuredContent":{"a":{"b":1,"b":2}}}`,
		"duplicate member in a block": `{"content":[{"type":"text","text":"a","text":"b"}]}`,
		"case variant of resultType":  `{"content":[],"ResultType":"input_required"}`,
		"duplicate structuredContent": `{"content":[], "structuredContent": {"x":1}, "structuredContent": null}`,
	}
	for name, result := range cases {
		t.Run(name, func(t *testing.T) {
			f := newFake(t)
			f.on("tools/call", func(w http.ResponseWriter, r *http.Request, req *jsonrpc.Request) {
				writeResult(w, req.ID, result)
			})
			c := connect(t, f.transport(), legacy())
			_, err := c.CallTool(context.Background(), "x", nil, client.WithOutputValidation(false))
			if client.CodeOf(err) != client.CodeProtocol {
				t.Fatalf("err = %v, want a protocol error", err)
			}
			t.Log(err)
		})
	}
	for name, tc := range map[string]struct {
		method, result string
		era            client.Option
	}{
		"initialize result": {"initialize", `{"protocolVersion":"2025-11-25","ProtocolVersion":"1999-01-01","capabilities":{},"serverInfo":{"name":"x","version":"1"}}`, legacy()},
		"discover result":   {"server/discover", `{"supportedVersions":["2026-07-28"],"capabilities":{},"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"a","Name":"b","version":"1"}}}`, client.WithEra(mcp.EraModern)},
	} {
		t.Run(name, func(t *testing.T) {
			f := newFake(t)
			f.on(tc.method, func(w http.ResponseWriter, r *http.Request, req *jsonrpc.Request) {
				writeResult(w, req.ID, tc.result)
			})
			_, err := client.Connect(context.Background(), f.transport(), tc.era)
			if client.CodeOf(err) != client.CodeProtocol {
				t.Fatalf("err = %v", err)
			}
			t.Log(err)
		})
	}
	t.Run("tool listing", func(t *testing.T) {
		f := newFake(t)
		f.tools = `[{"name":"a","inputSchema":{"type":"object"},"Name":"b"}]`
		c := connect(t, f.transport(), legacy())
		if _, err := c.ListTools(context.Background()); client.CodeOf(err) != client.CodeProtocol {
			t.Fatalf("err = %v", err)
		}
	})
	t.Run("task answers", func(t *testing.T) {
		const times = `"createdAt":"2026-07-28T12:00:00Z","lastUpdatedAt":"2026-07-28T12:00:00Z"`
		for name, answer := range map[string]string{
			"duplicate inside the task":    `{"task":{"taskId":"a","taskId":"b","status":"working",` + times + `}}`,
			"case variant inside the task": `{"task":{"taskId":"a","status":"working","Status":"failed",` + times + `}}`,
			"duplicate task":               `{"task":{"taskId":"a","status":"working",` + times + `},"task":{}}`,
			"case variant of ttlMs":        `{"resultType":"task","taskId":"a","status":"working","ttlMs":5,"TtlMs":6,` + times + `}`,
			"case variant in the error":    `{"resultType":"task","taskId":"a","status":"failed","error":{"code":1,"message":"x","Code":2},` + times + `}`,
			"ttl not a number":             `{"task":{"taskId":"a","status":"working","ttl":"1h",` + times + `}}`,
			"huge ttl":                     `{"task":{"taskId":"a","status":"working","ttl":1e400,` + times + `}}`,
		} {
			f := newFake(t)
			f.handle = func(w http.ResponseWriter, r *http.Request, req *jsonrpc.Request) bool {
				switch req.Method {
				case "tools/call", "tasks/get":
					writeResult(w, req.ID, answer)
					return true
				}
				return false
			}
			c := connect(t, f.transport(), legacy())
			if _, err := c.CallTool(context.Background(), "x", nil, client.WithOutputValidation(false)); client.CodeOf(err) != client.CodeProtocol {
				t.Errorf("%s: tools/call: err = %v, want a protocol error", name, err)
			}
			if _, err := c.GetTask(context.Background(), "a"); client.CodeOf(err) != client.CodeProtocol {
				t.Errorf("%s: tasks/get: err = %v, want a protocol error", name, err)
			}
		}
	})
	t.Run("raw params from the caller", func(t *testing.T) {
		f := newFake(t)
		c := connect(t, f.transport(), legacy())
		if _, err := c.CallToolRaw(context.Background(), "x", []byte(`{}`)); err == nil {
			t.Error("[]byte arguments accepted: they encode to a base64 string, not an object")
		}
		if _, err := c.CallTool(context.Background(), "x", json.RawMessage(`{"a":1,"a":2}`)); err == nil || client.CodeOf(err) != "" {
			t.Errorf("duplicate argument names: err = %v, want a local error", err)
		}
		if len(f.calls("tools/call")) != 0 {
			t.Error("refused arguments were sent")
		}
	})
}
