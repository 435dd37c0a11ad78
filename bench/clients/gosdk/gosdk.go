// Package gosdk adapts the official Go SDK's client
// (github.com/modelcontextprotocol/go-sdk) to the client workload:
// mcp.NewClient and Connect over a StreamableClientTransport, pinned to a
// 2025-11-25 session (ClientSessionOptions.ProtocolVersion; by default v1.8.0
// probes 2026-07-28 with server/discover first), default options otherwise.
package gosdk

import (
	"context"
	"net/http"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolwire/toolwire/bench/clients"
	"github.com/toolwire/toolwire/bench/tools"
)

type caller struct{ cs *mcp.ClientSession }

// Connect opens a 2025-11-25 session on url.
func Connect(ctx context.Context, url string, hc *http.Client) (clients.Caller, error) {
	c := mcp.NewClient(&mcp.Implementation{Name: "bench-go-sdk-client", Version: "1.0.0"}, nil)
	cs, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: hc},
		&mcp.ClientSessionOptions{ProtocolVersion: clients.LegacyVersion})
	if err != nil {
		return nil, err
	}
	return &caller{cs}, nil
}

func (g *caller) Echo(ctx context.Context, msg string) error {
	res, err := g.cs.CallTool(ctx, &mcp.CallToolParams{Name: tools.Echo, Arguments: clients.EchoArgs{Message: msg}})
	if err != nil {
		return err
	}
	return clients.CheckEchoBlocks(msg, res.IsError, res.Content, textOf)
}

// textOf reads a text block's text.
var textOf = clients.TextOf[mcp.Content](func(tc *mcp.TextContent) string { return tc.Text })

func (g *caller) Close() error { return g.cs.Close() }
