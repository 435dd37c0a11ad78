package client_test

import (
	"context"
	"errors"
	"fmt"
	"net/http/httptest"

	"github.com/toolwire/toolwire/client"
	"github.com/toolwire/toolwire/mcp"
	"github.com/toolwire/toolwire/reference"
	"github.com/toolwire/toolwire/transport/streamable"
)

// Example connects to a Streamable HTTP server, lists its tools and calls
// two of them: one that succeeds and one that reports a tool error.
func Example() {
	srv, _ := reference.NewServer()
	hs := httptest.NewServer(streamable.NewHandler(srv, nil))
	defer hs.Close()

	ctx := context.Background()
	c, err := client.Connect(ctx, &client.HTTP{URL: hs.URL + "/mcp"}, nil)
	if err != nil {
		fmt.Println(client.CodeOf(err), err)
		return
	}
	defer c.Close()
	fmt.Println("era:", c.Era())

	res, err := c.CallTool(ctx, "get-sum", map[string]any{"a": 7, "b": 5})
	if err != nil {
		fmt.Println(client.CodeOf(err), err)
		return
	}
	fmt.Println(res.Content[0].(*mcp.TextContent).Text)

	_, err = c.CallTool(ctx, "safe_divide", map[string]any{"a": 1, "b": 0})
	var te *client.ToolError
	if errors.As(err, &te) {
		fmt.Println(client.CodeOf(err), te.Content()[0].(*mcp.TextContent).Text)
	}
	// Output:
	// era: modern
	// The sum of 7 and 5 is 12.
	// ERR_MCP_TOOL_ERROR cannot divide by zero; pass a non-zero b
}

// ExampleCallToolAs decodes a tool's structured content into a Go value,
// after checking it against the tool's outputSchema.
func ExampleCallToolAs() {
	srv, _ := reference.NewServer()
	hs := httptest.NewServer(streamable.NewHandler(srv, nil))
	defer hs.Close()

	ctx := context.Background()
	c, err := client.Connect(ctx, &client.HTTP{URL: hs.URL + "/mcp"}, &client.Options{Era: client.EraLegacy})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer c.Close()
	w, err := client.CallToolAs[reference.CityWeather](ctx, c, "get-structured-content", map[string]string{"location": "Chicago"})
	fmt.Println(w.Temperature, w.Conditions, err)
	// Output: 36 Light rain / drizzle <nil>
}

// ExampleCodeOf shows the five codes a caller can switch on.
func ExampleCodeOf() {
	_, err := client.Connect(context.Background(), &client.HTTP{URL: "ftp://example.com"}, nil)
	switch client.CodeOf(err) {
	case client.CodeTransport:
		fmt.Println("transport:", err)
	case client.CodeProtocol, client.CodeJSONRPC, client.CodeToolError, client.CodeSessionInvalid:
		fmt.Println("other:", err)
	}
	// Output: transport: transport: connect: "ftp://example.com" is not an http:// or https:// URL
}
