package server_test

import (
	"context"
	"testing"

	"github.com/toolwire/toolwire/internal/testtools"
	"github.com/toolwire/toolwire/jsonrpc"
	"github.com/toolwire/toolwire/mcp"
	"github.com/toolwire/toolwire/server"
)

type discard struct{}

func (discard) Send(context.Context, jsonrpc.Message) error { return nil }

// BenchmarkToolsCall measures one tools/call through a session, from decoded
// request to encoded response: `go test -bench ToolsCall -benchmem ./server`.
func BenchmarkToolsCall(b *testing.B) {
	s := server.New(mcp.Implementation{Name: "bench", Version: "1"})
	testtools.AddEcho(b, s, "")
	type addIn struct {
		A float64 `json:"a"`
		B float64 `json:"b"`
	}
	type addOut struct {
		Sum float64 `json:"sum"`
	}
	if err := server.AddTool(s, &mcp.Tool{Name: "add"}, func(ctx context.Context, req *server.CallRequest, in addIn) (addOut, error) {
		return addOut{in.A + in.B}, nil
	}); err != nil {
		b.Fatal(err)
	}
	ss := s.NewSession(nil)
	defer ss.Close()
	ctx := context.Background()
	init := []byte(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"b","version":"1"}}}`)
	m, _, _ := jsonrpc.Decode(init)
	ss.HandleRequest(ctx, m.(*jsonrpc.Request), discard{})
	for _, c := range []struct{ name, line string }{
		{"echo", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"message":"hello"}}}`},
		{"add", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"add","arguments":{"a":7,"b":5}}}`},
		{"echo-2026", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"message":"hello"},` +
			`"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			line := []byte(c.line)
			for b.Loop() {
				m, _, derr := jsonrpc.Decode(line)
				if derr != nil {
					b.Fatal(derr)
				}
				resp := ss.HandleRequest(ctx, m.(*jsonrpc.Request), discard{})
				if resp == nil || resp.Error != nil {
					b.Fatal("call failed")
				}
				if _, err := jsonrpc.Encode(resp); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
