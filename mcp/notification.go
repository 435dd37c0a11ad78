package mcp

import (
	"bytes"
	"encoding/json"

	"github.com/toolwire/toolwire/jsonrpc"
)

// ProgressToken is the caller's `_meta.progressToken`, a string or a number,
// kept as raw JSON so progress notifications echo it exactly.
type ProgressToken = json.RawMessage

// ValidProgressToken reports whether tok, one JSON value already read by
// the strict reader, is a progress token toolwire accepts: a string or an
// integer (no fraction or exponent), so that echoing it back is exact.
func ValidProgressToken(tok ProgressToken) bool {
	if len(tok) == 0 {
		return false
	}
	switch c := tok[0]; {
	case c == '"':
		return true
	case c == '-' || c >= '0' && c <= '9':
		return !bytes.ContainsAny(tok, ".eE")
	}
	return false
}

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
