// Package mcpgo adapts mcp-go's client (github.com/mark3labs/mcp-go) to the
// client workload: client.NewStreamableHttpClient, Start, then Initialize
// pinned to 2025-11-25 (by default v1.2.1 probes 2026-07-28 with
// server/discover first), default options otherwise.
package mcpgo

import (
	"context"
	"net/http"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/toolwire/toolwire/bench/clients"
	"github.com/toolwire/toolwire/bench/tools"
)

type caller struct{ c *client.Client }

// Connect opens a 2025-11-25 session on url.
func Connect(ctx context.Context, url string, hc *http.Client) (clients.Caller, error) {
	var opts []transport.StreamableHTTPCOption
	if hc != nil {
		opts = append(opts, transport.WithHTTPBasicClient(hc))
	}
	c, err := client.NewStreamableHttpClient(url, opts...)
	if err != nil {
		return nil, err
	}
	if err := c.Start(ctx); err != nil {
		return nil, err
	}
	var init mcp.InitializeRequest
	init.Params.ProtocolVersion = clients.LegacyVersion
	init.Params.ClientInfo = mcp.Implementation{Name: "bench-mcp-go-client", Version: "1.0.0"}
	if _, err := c.Initialize(ctx, init); err != nil {
		c.Close()
		return nil, err
	}
	return &caller{c}, nil
}

func (m *caller) Echo(ctx context.Context, msg string) error {
	var req mcp.CallToolRequest
	req.Params.Name = tools.Echo
	req.Params.Arguments = clients.EchoArgs{Message: msg}
	res, err := m.c.CallTool(ctx, req)
	if err != nil {
		return err
	}
	return clients.CheckEchoBlocks(msg, res.IsError, res.Content, func(c mcp.Content) (string, bool) {
		if tc, ok := mcp.AsTextContent(c); ok {
			return tc.Text, true
		}
		return "", false
	})
}

func (m *caller) Close() error { return m.c.Close() }
