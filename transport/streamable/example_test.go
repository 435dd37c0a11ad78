package streamable_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/toolwire/toolwire/mcp"
	"github.com/toolwire/toolwire/server"
	"github.com/toolwire/toolwire/transport/streamable"
)

// A server's tools served over Streamable HTTP; here a 2026-07-28 client
// calls one statelessly.
func ExampleNewHandler() {
	srv := server.New(mcp.Implementation{Name: "example", Version: "1.0.0"})
	type in struct {
		Name string `json:"name"`
	}
	_ = server.AddTool(srv, &mcp.Tool{Name: "greet", Description: "Greets someone"},
		func(ctx context.Context, req *server.CallRequest, in in) (string, error) {
			return "Hello, " + in.Name, nil
		})

	h := streamable.NewHandler(srv)
	defer h.Close()
	ts := httptest.NewServer(h)
	defer ts.Close()

	body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"greet","arguments":{"name":"Ada"},` +
		`"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`
	req, _ := http.NewRequest(http.MethodPost, ts.URL, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("MCP-Protocol-Version", "2026-07-28")
	req.Header.Set("Mcp-Method", "tools/call")
	req.Header.Set("Mcp-Name", "greet")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	fmt.Println(resp.StatusCode, strings.Contains(string(out), `"text":"Hello, Ada"`))
	// Output: 200 true
}
