// Package mcp holds the Model Context Protocol wire types for revisions
// 2025-11-25 and 2026-07-28: tools, content blocks, lifecycle and discovery
// messages, progress and cancellation. It knows nothing of transports.
package mcp

import "github.com/toolwire/toolwire/internal/wirejson"

// Meta is the `_meta` member: extension data keyed by optionally prefixed names.
// Numbers decode as json.Number so they re-encode exactly as they arrived.
type Meta map[string]any

// UnmarshalJSON decodes strictly (a name twice in one object, at any depth,
// or invalid UTF-8 is an error), with json.Number for numbers.
func (m *Meta) UnmarshalJSON(data []byte) error {
	var v map[string]any
	if err := wirejson.UnmarshalUseNumber(data, &v); err != nil {
		return err
	}
	*m = v
	return nil
}

// Reserved `_meta` keys used by MCP itself.
const (
	MetaProtocolVersion    = "io.modelcontextprotocol/protocolVersion"
	MetaClientCapabilities = "io.modelcontextprotocol/clientCapabilities"
	MetaClientInfo         = "io.modelcontextprotocol/clientInfo"
	MetaServerInfo         = "io.modelcontextprotocol/serverInfo"
	MetaSubscriptionID     = "io.modelcontextprotocol/subscriptionId"
	MetaRelatedTask        = "io.modelcontextprotocol/related-task"
	MetaProgressToken      = "progressToken"
	// MetaLogLevel is the 2026-07-28 per-request log level: without it a
	// server sends no notifications/message for the request.
	MetaLogLevel = "io.modelcontextprotocol/logLevel"
)
