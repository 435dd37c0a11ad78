package mcp

// MCP-specific JSON-RPC error codes; the standard codes, and toolwire's
// own server errors, live in package jsonrpc.
const (
	// CodeResourceNotFound answers a resources/read for a URI the server
	// does not serve in 2025-era sessions (2025-11-25, server/resources,
	// "Error Handling"); 2026-07-28 uses -32602 with data.uri (SEP-2164).
	CodeResourceNotFound                int64 = -32002
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
