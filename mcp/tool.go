package mcp

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/toolwire/toolwire/internal/wirejson"
)

// Tool describes a tool as tools/list reports it.
type Tool struct {
	Name        string `json:"name"`
	Title       string `json:"title,omitempty"`
	Description string `json:"description,omitempty"`
	Icons       []Icon `json:"icons,omitempty"`
	// InputSchema is a JSON Schema whose root has type "object".
	InputSchema json.RawMessage `json:"inputSchema"`
	// OutputSchema, when present, is the schema structuredContent conforms to.
	// 2025-11-25 requires an object root; 2026-07-28 allows any root.
	OutputSchema json.RawMessage  `json:"outputSchema,omitempty"`
	Annotations  *ToolAnnotations `json:"annotations,omitempty"`
	Execution    *ToolExecution   `json:"execution,omitempty"`
	Meta         Meta             `json:"_meta,omitempty"`
}

// Icon is an image a client may show for a tool, server or resource.
type Icon struct {
	Src      string   `json:"src"`
	MIMEType string   `json:"mimeType,omitempty"`
	Sizes    []string `json:"sizes,omitempty"`
	Theme    string   `json:"theme,omitempty"` // "light" or "dark"
}

// ToolAnnotations are untrusted hints about a tool's behaviour. Each hint is a
// pointer: nil means unset, so the spec's default applies.
type ToolAnnotations struct {
	Title           string `json:"title,omitempty"`
	ReadOnlyHint    *bool  `json:"readOnlyHint,omitempty"`
	DestructiveHint *bool  `json:"destructiveHint,omitempty"`
	IdempotentHint  *bool  `json:"idempotentHint,omitempty"`
	OpenWorldHint   *bool  `json:"openWorldHint,omitempty"`
}

// Bool returns a pointer to b, for the annotation hints.
func Bool(b bool) *bool { return &b }

// TaskSupport says whether a tool may be run as a task.
type TaskSupport string

// Task support levels; an absent value means forbidden.
const (
	TaskForbidden TaskSupport = "forbidden"
	TaskOptional  TaskSupport = "optional"
	TaskRequired  TaskSupport = "required"
)

// ToolExecution holds execution properties of a tool.
type ToolExecution struct {
	TaskSupport TaskSupport `json:"taskSupport,omitempty"`
}

// ListToolsParams are the params of tools/list.
type ListToolsParams struct {
	Cursor string `json:"cursor,omitempty"`
	Meta   Meta   `json:"_meta,omitempty"`
}

// CacheScope says who may share a cached list result (2026-07-28).
type CacheScope string

// Cache scopes.
const (
	CachePublic  CacheScope = "public"
	CachePrivate CacheScope = "private"
)

// ListToolsResult is the result of tools/list.
type ListToolsResult struct {
	Tools      []*Tool `json:"tools"`
	NextCursor string  `json:"nextCursor,omitempty"`
	// TTLMs and CacheScope are required in 2026-07-28 and absent before.
	TTLMs      *int64     `json:"ttlMs,omitempty"`
	CacheScope CacheScope `json:"cacheScope,omitempty"`
	ResultType ResultType `json:"resultType,omitempty"`
	Meta       Meta       `json:"_meta,omitempty"`
}

// MarshalJSON writes "tools": [] rather than null for an empty page.
func (r *ListToolsResult) MarshalJSON() ([]byte, error) {
	type alias ListToolsResult
	a := *(*alias)(r)
	a.Tools = orEmpty(a.Tools)
	return json.Marshal(&a)
}

// TaskParams asks for a tools/call to run as a task (2025-11-25).
type TaskParams struct {
	TTL *int64 `json:"ttl,omitempty"`
}

// CallToolParams are the params of tools/call.
type CallToolParams struct {
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments,omitempty"`
	Task      *TaskParams     `json:"task,omitempty"`
	Meta      Meta            `json:"_meta,omitempty"`
}

// CallToolResult is the result of tools/call. Content is always present on
// the wire. StructuredContent is kept as raw JSON so that it reaches a typed
// decoder or a schema validator exactly as sent.
type CallToolResult struct {
	Content           []Content       `json:"content"`
	StructuredContent json.RawMessage `json:"structuredContent,omitempty"`
	IsError           bool            `json:"isError,omitempty"`
	ResultType        ResultType      `json:"resultType,omitempty"`
	Meta              Meta            `json:"_meta,omitempty"`
}

// MarshalJSON writes "content": [] rather than null.
func (r *CallToolResult) MarshalJSON() ([]byte, error) {
	type alias CallToolResult
	a := *(*alias)(r)
	a.Content = orEmpty(a.Content)
	return json.Marshal(&a)
}

// UnmarshalJSON decodes the closed content union, naming any bad block (a
// *ContentError). Decoding is strict: names match case-sensitively, a case
// variant of a member ("Content") or a name appearing twice is refused.
func (r *CallToolResult) UnmarshalJSON(data []byte) error {
	var w struct {
		Content           json.RawMessage `json:"content"`
		StructuredContent json.RawMessage `json:"structuredContent"`
		IsError           bool            `json:"isError"`
		ResultType        ResultType      `json:"resultType"`
		Meta              Meta            `json:"_meta"`
	}
	if err := wirejson.Unmarshal(data, &w); err != nil {
		return err
	}
	if w.Content == nil {
		return errors.New(`tools/call result: missing required field "content"`)
	}
	content, err := DecodeContent(w.Content)
	if err != nil {
		return err
	}
	if string(w.StructuredContent) == "null" {
		w.StructuredContent = nil
	}
	*r = CallToolResult{Content: content, StructuredContent: w.StructuredContent,
		IsError: w.IsError, ResultType: w.ResultType, Meta: w.Meta}
	return nil
}

// TextResult returns a result holding one text block.
func TextResult(format string, args ...any) *CallToolResult {
	text := format
	if len(args) > 0 {
		text = fmt.Sprintf(format, args...)
	}
	return &CallToolResult{Content: []Content{&TextContent{Text: text}}}
}

// ErrorResult returns an isError result holding one text block: a tool
// execution error the model can read and act on.
func ErrorResult(format string, args ...any) *CallToolResult {
	r := TextResult(format, args...)
	r.IsError = true
	return r
}
