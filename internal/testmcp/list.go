package testmcp

import (
	"context"
	"testing"

	"github.com/toolwire/toolwire/client"
	"github.com/toolwire/toolwire/internal/testwait"
)

// ToolNames lists the tools c sees (tools/list, every page, bounded by
// testwait's Limit), by name in the server's order; nil when it lists
// none. A tools/list that fails fails the test.
func ToolNames(t testing.TB, c *client.Client) []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), testwait.Limit)
	defer cancel()
	tools, err := c.ListTools(ctx)
	if err != nil {
		t.Fatalf("tools/list: %v", err)
	}
	var names []string
	for _, tl := range tools {
		names = append(names, tl.Name)
	}
	return names
}
