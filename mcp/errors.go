package mcp

// MCP-specific JSON-RPC error codes (2026-07-28); the standard codes live in
// package jsonrpc.
const (
	CodeHeaderMismatch                  int64 = -32020
	CodeMissingRequiredClientCapability int64 = -32021
	CodeUnsupportedProtocolVersion      int64 = -32022
)

// UnsupportedVersionData is the data of a -32022 error: what the server
// speaks, and what the client asked for.
type UnsupportedVersionData struct {
	Supported []string `json:"supported"`
	Requested string   `json:"requested"`
}
