// Command hello is the smallest useful MCP server: one typed tool, served
// on stdin and stdout. Its binary size is measured against the same server
// written with go-sdk (see BENCHMARKS.md, "A hello-world server's size").
package main

import (
	"context"
	"log"

	"github.com/toolwire/toolwire/mcp"
	"github.com/toolwire/toolwire/server"
	"github.com/toolwire/toolwire/transport/stdio"
)

type greetIn struct {
	Name string `json:"name" jsonschema:"who to greet"`
}

type greetOut struct {
	Greeting string `json:"greeting"`
}

func main() {
	s := server.New(mcp.Implementation{Name: "hello", Version: "1.0.0"})
	err := server.AddTool(s, &mcp.Tool{Name: "greet", Description: "Say hello to someone"},
		func(ctx context.Context, req *server.CallRequest, in greetIn) (greetOut, error) {
			return greetOut{Greeting: "Hello, " + in.Name + "!"}, nil
		})
	if err != nil {
		log.Fatal(err)
	}
	if err := stdio.ServeStdio(context.Background(), s); err != nil {
		log.Fatal(err)
	}
}
