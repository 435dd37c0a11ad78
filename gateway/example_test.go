package gateway_test

import (
	"context"
	"fmt"
	"net/http/httptest"
	"time"

	"github.com/toolwire/toolwire/client"
	"github.com/toolwire/toolwire/gateway"
	"github.com/toolwire/toolwire/mcp"
	"github.com/toolwire/toolwire/server"
)

type addIn struct {
	A int `json:"a"`
	B int `json:"b"`
}

type addOut struct {
	Sum int `json:"sum"`
}

// ExampleNew puts two MCP servers of this process behind one gateway,
// each upstream's tools under its name and the separator, and serves the
// gateway's handler: a client sees one server with both tools.
func ExampleNew() {
	math := server.New(mcp.Implementation{Name: "math", Version: "1.0.0"})
	_ = server.AddTool(math, &mcp.Tool{Name: "add", Description: "Add two integers"},
		func(ctx context.Context, req *server.CallRequest, in addIn) (addOut, error) {
			return addOut{Sum: in.A + in.B}, nil
		})
	text := server.New(mcp.Implementation{Name: "text", Version: "1.0.0"})
	type none struct{}
	_ = server.AddTool(text, &mcp.Tool{Name: "hello", Description: "Say hello"},
		func(ctx context.Context, req *server.CallRequest, _ none) (string, error) {
			return "hello", nil
		})

	g, err := gateway.New(gateway.Config{
		Upstreams: []gateway.Upstream{{Name: "math", Server: math}, {Name: "text", Server: text}},
		Naming:    gateway.Naming{Separator: "__"},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	hs := httptest.NewServer(g.Handler())
	defer func() {
		hs.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = g.Close(ctx)
	}()

	ctx := context.Background()
	c, err := client.Connect(ctx, &client.HTTP{URL: hs.URL})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer c.Close()
	tools, _ := c.ListTools(ctx)
	for _, t := range tools {
		fmt.Println(t.Name)
	}
	res, err := c.CallTool(ctx, "math__add", map[string]any{"a": 2, "b": 40})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(string(res.StructuredContent))
	// Output:
	// math__add
	// text__hello
	// {"sum":42}
}
