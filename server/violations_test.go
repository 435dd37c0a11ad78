package server_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/toolwire/toolwire/jsonrpc"
	"github.com/toolwire/toolwire/mcp"
	"github.com/toolwire/toolwire/server"
)

// The isError result of invalid arguments lists at most WithMaxViolations
// violations (default 100) and says there were more.
func TestMaxViolations(t *testing.T) {
	type in struct {
		Values []int `json:"values"`
	}
	bad := `{"name":"ints","arguments":{"values":[` + strings.Repeat(`"x",`, 149) + `"x"]}}`
	for _, c := range []struct {
		opts   []server.Option
		listed int
	}{{nil, 100}, {[]server.Option{server.WithLimits(server.Limits{MaxViolations: 2})}, 2}, {[]server.Option{server.WithLimits(server.Limits{MaxViolations: 0})}, 100}} {
		s := server.New(mcp.Implementation{Name: "v", Version: "1"}, c.opts...)
		if err := server.AddTool(s, &mcp.Tool{Name: "ints"}, func(ctx context.Context, req *server.CallRequest, in in) (string, error) {
			return "ran", nil
		}); err != nil {
			t.Fatal(err)
		}
		resp := initializedSession(t, s).HandleRequest(context.Background(), &jsonrpc.Request{ID: jsonrpc.Int64ID(1), Method: "tools/call", Params: []byte(bad)}, discard{})
		var res mcp.CallToolResult
		if resp.Error != nil || json.Unmarshal(resp.Result, &res) != nil || !res.IsError {
			t.Fatalf("got %+v", resp)
		}
		text := res.Content[0].(*mcp.TextContent).Text
		if n := strings.Count(text, "expected integer, got string"); n != c.listed ||
			!strings.HasSuffix(text, "; and more (only the first "+itoa(c.listed)+" violations are listed)") {
			t.Errorf("limit %d: %d violations listed in %.300q", c.listed, n, text)
		}
	}
}
