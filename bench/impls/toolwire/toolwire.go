// Package toolwire builds the benchmark's tools on toolwire's typed API:
// server.AddTool with schemas inferred from the Go types, input (and output)
// validation on by default.
package toolwire

import (
	"context"
	"net/http"

	"github.com/toolwire/toolwire/bench/tools"
	"github.com/toolwire/toolwire/mcp"
	"github.com/toolwire/toolwire/server"
	"github.com/toolwire/toolwire/transport/stdio"
	"github.com/toolwire/toolwire/transport/streamable"
)

// New returns a server hosting echo, add and big.
func New() (*server.Server, error) {
	s := server.New(mcp.Implementation{Name: "bench-toolwire", Version: "1.0.0"})
	if err := server.AddTool(s, &mcp.Tool{Name: tools.Echo, Description: tools.EchoDesc},
		func(ctx context.Context, req *server.CallRequest, in tools.EchoIn) (string, error) {
			return in.Message, nil
		}); err != nil {
		return nil, err
	}
	if err := server.AddTool(s, &mcp.Tool{Name: tools.Add, Description: tools.AddDesc},
		func(ctx context.Context, req *server.CallRequest, in tools.AddIn) (tools.AddOut, error) {
			return tools.AddOut{Sum: in.A + in.B}, nil
		}); err != nil {
		return nil, err
	}
	if err := server.AddTool(s, &mcp.Tool{Name: tools.Big, Description: tools.BigDesc},
		func(ctx context.Context, req *server.CallRequest, in tools.BigIn) (string, error) {
			return tools.BigText, nil
		}); err != nil {
		return nil, err
	}
	return s, nil
}

// Handler returns toolwire's Streamable HTTP handler with default options.
func Handler() (http.Handler, error) {
	s, err := New()
	if err != nil {
		return nil, err
	}
	return streamable.NewHandler(s), nil
}

// ServeStdio serves on stdin and stdout with default options.
func ServeStdio(ctx context.Context) error {
	s, err := New()
	if err != nil {
		return err
	}
	return stdio.ServeStdio(ctx, s)
}
