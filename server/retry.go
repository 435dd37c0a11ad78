package server

import (
	"github.com/toolwire/toolwire/mcp"
)

// RetryableError is a tool failure with guidance for the caller: a message
// for the user and the model, and mcp.RetryGuidance (developer message, may
// it be retried, when, and what to add to the retry prompt). A tool returns
// it as its error; the result is isError with Message as its text and the
// guidance under _meta[mcp.MetaRetryGuidance]. CanRetry false is allowed: the
// guidance then only explains the failure.
type RetryableError struct {
	// Message is user-facing; it becomes the result's text block.
	Message string
	mcp.RetryGuidance
	// Err is the underlying cause, for errors.Is/As; it is not sent.
	Err error
}

func (e *RetryableError) Error() string {
	if e.Message == "" && e.Err != nil {
		return e.Err.Error()
	}
	return e.Message
}

// Unwrap returns the underlying cause.
func (e *RetryableError) Unwrap() error { return e.Err }

// ToolResult implements ToolResulter: the isError result MCP clients see.
func (e *RetryableError) ToolResult() *mcp.CallToolResult {
	res := mcp.ErrorResult("%s", e.Error())
	g := e.RetryGuidance
	if g.RetryAfterMs < 0 {
		g.RetryAfterMs = 0 // nothing to wait for; never sent as a negative
	}
	res.Meta = res.Meta.SetRetryGuidance(g)
	return res
}
