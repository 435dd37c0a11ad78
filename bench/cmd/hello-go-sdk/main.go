// Command hello-go-sdk is examples/hello written with go-sdk: one typed tool
// on stdin and stdout. It exists to compare binary sizes (BENCHMARKS.md).
package main

import (
	"context"
	"log"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

type greetIn struct {
	Name string `json:"name" jsonschema:"who to greet"`
}

type greetOut struct {
	Greeting string `json:"greeting"`
}

func main() {
	s := mcp.NewServer(&mcp.Implementation{Name: "hello", Version: "1.0.0"}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: "greet", Description: "Say hello to someone"},
		func(ctx context.Context, req *mcp.CallToolRequest, in greetIn) (*mcp.CallToolResult, greetOut, error) {
			return nil, greetOut{Greeting: "Hello, " + in.Name + "!"}, nil
		})
	if err := s.Run(context.Background(), &mcp.StdioTransport{}); err != nil {
		log.Fatal(err)
	}
}
