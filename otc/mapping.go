package otc

import (
	"bytes"
	"encoding/json"
	"github.com/toolwire/toolwire/internal/wirejson"
	"strings"

	"github.com/toolwire/toolwire/mcp"
)

// toolDefinition describes an MCP tool under its OTC identity. The
// description falls back to the title when the tool has none; the output
// schema is the tool's outputSchema, or {} (any value) when it declares none.
func toolDefinition(t *mcp.Tool, ref Ref) ToolDefinition {
	desc := t.Description
	if desc == "" {
		desc = t.Title
	}
	if desc == "" && t.Annotations != nil {
		desc = t.Annotations.Title
	}
	out := t.OutputSchema
	if len(out) == 0 {
		out = json.RawMessage("{}")
	}
	return ToolDefinition{ID: ref.ID(), Name: ref.Name(), Description: desc, Version: ref.Version,
		InputSchema: t.InputSchema, OutputSchema: out}
}

// ToolFromDefinition is the reverse mapping: an MCP tool named Toolkit.Tool
// whose _meta keeps the OTC id and version, so that the default Naming maps
// it back to the same definition.
func ToolFromDefinition(d ToolDefinition) *mcp.Tool {
	base, _, _ := strings.Cut(d.ID, "@")
	in := d.InputSchema
	if len(in) == 0 {
		in = json.RawMessage(`{"type":"object"}`)
	}
	t := &mcp.Tool{Name: base, Description: d.Description, InputSchema: in,
		Meta: mcp.Meta{MetaToolID: base, MetaToolVersion: d.Version}}
	if out := bytes.TrimSpace(d.OutputSchema); len(out) > 0 && !bytes.Equal(out, []byte("null")) && !bytes.Equal(out, []byte("{}")) {
		t.OutputSchema = d.OutputSchema
	}
	return t
}

// ResponseFromResult maps an MCP tools/call result to an OTC response.
//
// Success (isError false), value is:
//   - structuredContent, when the result has it;
//   - null, when there is no content at all (a tool with no output);
//   - a JSON string, for a lone text block;
//   - otherwise the content array as MCP writes it (several blocks, or
//     images, audio, resource links, embedded resources), so nothing is lost.
//
// Failure (isError true): error.message is the text of the text blocks,
// joined by newlines ("the tool call failed" when there are none), and
// developer_message, can_retry, retry_after_ms and additional_prompt_content
// come from the RetryGuidance under _meta[mcp.MetaRetryGuidance]. Guidance
// that does not decode is dropped; the message still goes through.
func ResponseFromResult(callID string, res *mcp.CallToolResult) CallToolResponse {
	r := CallToolResponse{CallID: callID}
	if res == nil {
		r.Success, r.Value = true, json.RawMessage("null")
		return r
	}
	if res.IsError {
		r.Error = toolError(res)
		return r
	}
	r.Success = true
	switch {
	case len(res.StructuredContent) > 0:
		r.Value = res.StructuredContent
	case len(res.Content) == 0:
		r.Value = json.RawMessage("null")
	default:
		if tc, ok := res.Content[0].(*mcp.TextContent); ok && len(res.Content) == 1 {
			r.Value, _ = json.Marshal(tc.Text)
			break
		}
		raw, err := json.Marshal(res.Content)
		if err != nil {
			r.Success, r.Error = false, &ToolError{Message: "the tool's result could not be encoded", DeveloperMessage: err.Error()}
			return r
		}
		r.Value = raw
	}
	return r
}

func toolError(res *mcp.CallToolResult) *ToolError {
	var texts []string
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			texts = append(texts, tc.Text)
		}
	}
	e := &ToolError{Message: strings.Join(texts, "\n")}
	if e.Message == "" {
		e.Message = "the tool call failed"
	}
	if g, err := res.RetryGuidance(); err == nil && g != nil {
		e.DeveloperMessage = g.DeveloperMessage
		e.CanRetry = g.CanRetry
		e.AdditionalPromptContent = g.AdditionalPromptContent
		if g.RetryAfterMs > 0 {
			ms := g.RetryAfterMs
			e.RetryAfterMs = &ms
		}
	}
	return e
}

// ResultFromResponse maps an OTC response back to an MCP result, the reverse
// of ResponseFromResult:
//   - value null: no content;
//   - a string: one text block;
//   - an array of valid MCP content blocks: those blocks;
//   - any other value: structuredContent, plus its JSON as a text block for
//     clients that read only content;
//   - an error: isError, error.message as text, the rest as RetryGuidance.
func ResultFromResponse(resp *CallToolResponse) *mcp.CallToolResult {
	if !resp.Success {
		e := resp.Error
		if e == nil {
			e = &ToolError{Message: "the tool call failed"}
		}
		res := mcp.ErrorResult("%s", e.Message)
		g := mcp.RetryGuidance{DeveloperMessage: e.DeveloperMessage, CanRetry: e.CanRetry, AdditionalPromptContent: e.AdditionalPromptContent}
		if e.RetryAfterMs != nil && *e.RetryAfterMs > 0 {
			g.RetryAfterMs = *e.RetryAfterMs
		}
		if !g.IsZero() {
			res.Meta = res.Meta.SetRetryGuidance(g)
		}
		return res
	}
	v := bytes.TrimSpace(resp.Value)
	switch {
	case len(v) == 0 || bytes.Equal(v, []byte("null")):
		return &mcp.CallToolResult{}
	case v[0] == '"':
		var s string
		if wirejson.Unmarshal(v, &s) == nil {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: s}}}
		}
	case v[0] == '[':
		if blocks, err := mcp.DecodeContent(v); err == nil && len(blocks) > 0 {
			return &mcp.CallToolResult{Content: blocks}
		}
	}
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(v)}}, StructuredContent: json.RawMessage(v)}
}
