package server

import (
	"github.com/toolwire/toolwire/internal/wirejson"
	"github.com/toolwire/toolwire/jsonrpc"
	"github.com/toolwire/toolwire/mcp"
)

// The params of the built-in methods and notifications as the server reads
// them: the mcp types, but with a _meta that is checked as strictly as any
// member (an object or null, no name twice at any depth, valid UTF-8) and
// not kept. The mcp types decode _meta into a tree of Go values, which
// costs some fifty times its size in memory; the server reads none of it
// here (the _meta keys it uses, the protocol version and client
// capabilities, are read from the raw params when the request arrives).

// listToolsParams are mcp.ListToolsParams.
type listToolsParams struct {
	Cursor string                 `json:"cursor,omitempty"`
	Meta   wirejson.DiscardObject `json:"_meta"`
}

// initializeParams are mcp.InitializeParams.
type initializeParams struct {
	ProtocolVersion string                 `json:"protocolVersion"`
	Capabilities    mcp.ClientCapabilities `json:"capabilities"`
	ClientInfo      mcp.Implementation     `json:"clientInfo"`
	Meta            wirejson.DiscardObject `json:"_meta"`
}

// listenParams are mcp.ListenParams.
type listenParams struct {
	Notifications *mcp.SubscriptionFilter `json:"notifications"`
	Meta          wirejson.DiscardObject  `json:"_meta"`
}

// cancelledParams are mcp.CancelledParams.
type cancelledParams struct {
	RequestID *jsonrpc.ID            `json:"requestId,omitempty"`
	Reason    string                 `json:"reason,omitempty"`
	Meta      wirejson.DiscardObject `json:"_meta"`
}
