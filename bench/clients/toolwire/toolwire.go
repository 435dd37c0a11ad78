// Package toolwire adapts toolwire's client (github.com/toolwire/toolwire/
// client) to the client workload: client.Connect over client.HTTP, pinned
// to the legacy era (a 2025-11-25 session), with default options otherwise
// (so results are checked against the tool's outputSchema from tools/list,
// as by default).
package toolwire

import (
	"context"
	"net/http"

	"github.com/toolwire/toolwire/client"
	"github.com/toolwire/toolwire/mcp"

	"github.com/toolwire/toolwire/bench/clients"
	"github.com/toolwire/toolwire/bench/tools"
)

type caller struct{ c *client.Client }

// Connect opens a 2025-11-25 session on url.
func Connect(ctx context.Context, url string, hc *http.Client) (clients.Caller, error) {
	c, err := client.Connect(ctx, &client.HTTP{URL: url, Client: hc},
		client.WithEra(mcp.EraLegacy),
		client.WithClientInfo(mcp.Implementation{Name: "bench-toolwire-client", Version: "1.0.0"}),
	)
	if err != nil {
		return nil, err
	}
	return &caller{c}, nil
}

func (t *caller) Echo(ctx context.Context, msg string) error {
	res, err := t.c.CallTool(ctx, tools.Echo, clients.EchoArgs{Message: msg})
	if err != nil {
		return err
	}
	return clients.CheckEchoBlocks(msg, res.IsError, res.Content, textOf)
}

// textOf reads a text block's text.
var textOf = clients.TextOf[mcp.Content](func(tc *mcp.TextContent) string { return tc.Text })

func (t *caller) Close() error { return t.c.Close() }
