package testmcp

import (
	"strings"

	"github.com/toolwire/toolwire/mcp"
)

// Text is the text of a tool result: its text content blocks joined, ""
// for a nil result. Tests compare it with what a tool said, whatever
// other content (images, resources) came with it.
func Text(res *mcp.CallToolResult) string {
	if res == nil {
		return ""
	}
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}
