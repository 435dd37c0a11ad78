package mcp

import (
	"encoding/json"
	"fmt"
	"github.com/toolwire/toolwire/internal/wirejson"
)

// MetaRetryGuidance is the `_meta` key under which a toolwire tool error
// carries its RetryGuidance. MCP has no field for it; OTC 1.0 does, so the
// same guidance reaches MCP clients and OTC clients.
const MetaRetryGuidance = "dev.toolwire/retry"

// RetryGuidance tells a caller what to do after a failed tool call. It is the
// MCP side of the OTC 1.0 ToolError fields of the same names.
type RetryGuidance struct {
	// DeveloperMessage is for logs and developers, never for the user or the
	// model (OTC developer_message).
	DeveloperMessage string `json:"developerMessage,omitempty"`
	// CanRetry says the same call may succeed if repeated (OTC can_retry);
	// false means do not retry.
	CanRetry bool `json:"canRetry,omitempty"`
	// RetryAfterMs is how long to wait before retrying, in milliseconds
	// (OTC retry_after_ms); 0 means no advice.
	RetryAfterMs int64 `json:"retryAfterMs,omitempty"`
	// AdditionalPromptContent is extra text for the retry prompt
	// (OTC additional_prompt_content).
	AdditionalPromptContent string `json:"additionalPromptContent,omitempty"`
}

// IsZero reports whether g carries no guidance at all.
func (g RetryGuidance) IsZero() bool { return g == RetryGuidance{} }

// Validate rejects guidance no caller could follow.
func (g RetryGuidance) Validate() error {
	if g.RetryAfterMs < 0 {
		return fmt.Errorf("retry guidance: retryAfterMs is %d; it must not be negative", g.RetryAfterMs)
	}
	return nil
}

// RetryGuidance returns the guidance under MetaRetryGuidance: nil when there
// is none, an error when the member is there but malformed.
func (m Meta) RetryGuidance() (*RetryGuidance, error) {
	v, ok := m[MetaRetryGuidance]
	if !ok || v == nil {
		return nil, nil
	}
	var g RetryGuidance
	switch x := v.(type) {
	case RetryGuidance:
		g = x
	case *RetryGuidance:
		g = *x
	default:
		raw, err := json.Marshal(v)
		if err != nil {
			return nil, fmt.Errorf("_meta[%q]: %w", MetaRetryGuidance, err)
		}
		if err := wirejson.Unmarshal(raw, &g); err != nil {
			return nil, fmt.Errorf("_meta[%q] is not retry guidance: %w", MetaRetryGuidance, err)
		}
	}
	if err := g.Validate(); err != nil {
		return nil, fmt.Errorf("_meta[%q]: %w", MetaRetryGuidance, err)
	}
	return &g, nil
}

// SetRetryGuidance stores g under MetaRetryGuidance, in the form it has on
// the wire, and returns the (possibly new) map.
func (m Meta) SetRetryGuidance(g RetryGuidance) Meta {
	if m == nil {
		m = Meta{}
	}
	out := map[string]any{}
	if g.DeveloperMessage != "" {
		out["developerMessage"] = g.DeveloperMessage
	}
	if g.CanRetry {
		out["canRetry"] = true
	}
	if g.RetryAfterMs != 0 {
		out["retryAfterMs"] = g.RetryAfterMs
	}
	if g.AdditionalPromptContent != "" {
		out["additionalPromptContent"] = g.AdditionalPromptContent
	}
	m[MetaRetryGuidance] = out
	return m
}

// RetryGuidance returns the guidance an isError result carries, nil when it
// carries none (see Meta.RetryGuidance).
func (r *CallToolResult) RetryGuidance() (*RetryGuidance, error) {
	if r == nil {
		return nil, nil
	}
	return r.Meta.RetryGuidance()
}
