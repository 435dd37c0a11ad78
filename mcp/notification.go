package mcp

import (
	"encoding/json"

	"github.com/toolwire/toolwire/jsonrpc"
)

// ProgressToken is the caller's `_meta.progressToken`, a string or a number,
// kept as raw JSON so progress notifications echo it exactly.
type ProgressToken = json.RawMessage

// ProgressParams are the params of notifications/progress.
type ProgressParams struct {
	ProgressToken ProgressToken `json:"progressToken"`
	Progress      float64       `json:"progress"`
	Total         *float64      `json:"total,omitempty"`
	Message       string        `json:"message,omitempty"`
	Meta          Meta          `json:"_meta,omitempty"`
}

// CancelledParams are the params of notifications/cancelled.
type CancelledParams struct {
	// RequestID is required except for task cancellation in 2025-11-25.
	RequestID *jsonrpc.ID `json:"requestId,omitempty"`
	Reason    string      `json:"reason,omitempty"`
	Meta      Meta        `json:"_meta,omitempty"`
}
