package daemon_test

import (
	"context"
	"fmt"
	"log/slog"
	"net/http/httptest"

	"github.com/toolwire/toolwire/client"
	"github.com/toolwire/toolwire/gateway"
	"github.com/toolwire/toolwire/gateway/config"
	"github.com/toolwire/toolwire/gateway/daemon"
	"github.com/toolwire/toolwire/mcp"
	"github.com/toolwire/toolwire/server"
	"github.com/toolwire/toolwire/transport/streamable"
)

type greetIn struct {
	Name string `json:"name" jsonschema:"who to greet"`
}

type greetOut struct {
	Greeting string `json:"greeting"`
}

// Example embeds the gateway in a program: it fronts an MCP server (here
// one in this process, over Streamable HTTP) on a port of its own, waits
// until the gateway serves, calls the server's tool through it under the
// gateway's name for it, and shuts the gateway down.
func Example() {
	up := server.New(mcp.Implementation{Name: "greeter", Version: "1.0.0"})
	err := server.AddTool(up, &mcp.Tool{Name: "greet", Description: "Say hello to someone"},
		func(ctx context.Context, req *server.CallRequest, in greetIn) (greetOut, error) {
			return greetOut{Greeting: "Hello, " + in.Name + "!"}, nil
		})
	if err != nil {
		fmt.Println(err)
		return
	}
	hs := httptest.NewServer(streamable.NewHandler(up))
	defer hs.Close()

	// What a config file would say: the gateway on any free loopback
	// port, no admin listener, no data_dir (no state, no audit trail).
	file := &config.File{
		Listen: "127.0.0.1:0",
		Gateway: gateway.Config{
			Upstreams: []gateway.Upstream{{Name: "greeter", URL: hs.URL + "/mcp"}},
			Naming:    gateway.Naming{Separator: config.DefaultSeparator},
		},
	}
	ctx, stop := context.WithCancel(context.Background())
	ready := make(chan daemon.Addrs, 1)
	done := make(chan error, 1)
	go func() {
		done <- daemon.Run(ctx, file, daemon.WithLogger(slog.New(slog.DiscardHandler)),
			daemon.WithOnReady(func(a daemon.Addrs) { ready <- a }))
	}()
	var addrs daemon.Addrs
	select {
	case addrs = <-ready:
	case err := <-done:
		fmt.Println("the gateway did not start:", err)
		stop()
		return
	}

	c, err := client.Connect(ctx, &client.HTTP{URL: addrs.MCP})
	if err != nil {
		fmt.Println(err)
	} else {
		res, err := c.CallTool(ctx, "greeter__greet", map[string]any{"name": "Ada"})
		if err != nil {
			fmt.Println(err)
		} else {
			fmt.Println(string(res.StructuredContent))
		}
		c.Close()
	}

	stop()
	fmt.Println("gateway stopped:", <-done)
	// Output:
	// {"greeting":"Hello, Ada!"}
	// gateway stopped: <nil>
}
