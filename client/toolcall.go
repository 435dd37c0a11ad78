package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/toolwire/toolwire/internal/jsonscan"
	"github.com/toolwire/toolwire/internal/wirejson"
	"github.com/toolwire/toolwire/mcp"
	"github.com/toolwire/toolwire/schema"
)

// CallTool calls a tool and returns its decoded result. args is anything
// that encodes to a JSON object (or nil). The result's content has been
// checked block by block, and its structuredContent against the tool's
// outputSchema (see WithOutputValidation); a mismatch is a
// *ProtocolError. A structuredContent of null is kept as the JSON null
// (StructuredContent is "null") and validated like any other value. When
// the tool reports failure (isError), the result is returned together with
// a *ToolError carrying it. A server that answers with a task (it should
// not, as the client did not ask for one: see CallToolTask) is waited for
// as WaitTask waits, and its result checked alike.
func (c *Client) CallTool(ctx context.Context, name string, args any, opts ...CallOption) (*mcp.CallToolResult, error) {
	tc, err := c.newToolCall(ctx, name, args, opts)
	if err != nil {
		return nil, err
	}
	raw, err := c.call(ctx, tc.out, tc.cc, true)
	if err != nil {
		return nil, err
	}
	res, err := c.toolResult(ctx, name, tc.entry, tc.validate, raw)
	if err != nil && res == nil {
		// Without the tasks extension declared a server should not answer
		// with a task; one that does anyway is waited for.
		if task, isTask, terr := decodeTaskAnswer(toolOp(name), raw); isTask {
			if terr != nil {
				return nil, terr
			}
			return c.waitTask(ctx, task.TaskID, name, tc.cc)
		}
	}
	return res, err
}

// toolResult reads a tools/call result exactly and checks it: an isError
// result is returned with a *ToolError, structuredContent is validated
// against entry's outputSchema when validate is set.
func (c *Client) toolResult(ctx context.Context, name string, entry *toolEntry, validate bool, raw json.RawMessage) (*mcp.CallToolResult, error) {
	res, err := decodeCallResult(name, raw)
	if err != nil {
		return nil, err
	}
	if res.IsError {
		return res, c.toolError(name, res)
	}
	if validate && entry != nil {
		if err := c.checkOutput(ctx, name, entry, res); err != nil {
			return nil, err
		}
	}
	return res, nil
}

// toolError is the *ToolError of an isError result.
func (c *Client) toolError(name string, res *mcp.CallToolResult) *ToolError {
	te := &ToolError{Tool: name, Result: res}
	if g, gerr := res.RetryGuidance(); gerr == nil {
		te.RetryGuidance = g
	} else {
		c.cfg.logger.Debug("ignoring malformed retry guidance", "tool", name, "error", gerr)
	}
	return te
}

// CallToolRaw calls a tool and returns its result exactly as the server
// sent it, for proxies and gateways that pass results on: the bytes of the
// response's "result" member, member order and whitespace included. Nothing
// in it is checked beyond being a JSON object read exactly (no content
// block checks, no outputSchema validation) and nothing is re-encoded. A
// tool that reports failure (isError: true) is a result like any other
// here, not an error. Timeouts, progress, cancellation, input_required
// rounds, the session and version retries and the WithMiddleware chain
// apply as for CallTool, and over 2026-07-28 HTTP the Mcp-Param-* headers
// are sent when the tool's listing is at hand (a failed listing is not an
// error).
func (c *Client) CallToolRaw(ctx context.Context, name string, args any, opts ...CallOption) (json.RawMessage, error) {
	cc := newCallConfig(opts)
	out, err := toolCallParams(name, args)
	if err != nil {
		return nil, err
	}
	if _, err := c.toolForCall(ctx, name, false); err != nil {
		return nil, err
	}
	return c.call(ctx, out, cc, false)
}

// toolCall is a tools/call request about to be sent: its params, the
// call's options, whether its result is validated, and the tool's listing
// when the call needs it (toolForCall).
type toolCall struct {
	cc       callConfig
	out      outgoing
	validate bool
	entry    *toolEntry
}

// newToolCall encodes name and args as tools/call params and looks the
// tool up as the call needs, which CallTool and CallToolTask both do before
// sending.
func (c *Client) newToolCall(ctx context.Context, name string, args any, opts []CallOption) (*toolCall, error) {
	tc := &toolCall{cc: newCallConfig(opts)}
	var err error
	if tc.out, err = toolCallParams(name, args); err != nil {
		return nil, err
	}
	tc.validate = tc.cc.validates(c)
	if tc.entry, err = c.toolForCall(ctx, name, tc.validate); err != nil {
		return nil, err
	}
	return tc, nil
}

// toolOp names a tools/call in errors.
func toolOp(name string) string { return "tools/call " + name }

// toolForCall returns the cached listing of a tool, listing tools when the
// cache is stale, if the call needs it: for the outputSchema check
// (validate; a failed listing is then the call's error) and, in the modern
// era, for the Mcp-Param headers (a failed listing only loses them).
func (c *Client) toolForCall(ctx context.Context, name string, validate bool) (*toolEntry, error) {
	if !validate && c.state().era != mcp.EraModern {
		return nil, nil
	}
	if e, fresh := c.tools.lookup(name); fresh {
		return e, nil
	}
	e, err := c.toolEntry(ctx, name, false)
	if err != nil {
		if validate {
			return nil, err
		}
		c.cfg.logger.Debug("tools/list failed; calling without Mcp-Param headers", "tool", name, "error", err)
		return nil, nil
	}
	return e, nil
}

// callResultWire is a tools/call result as the client reads it; content
// blocks stay raw until checked one by one.
type callResultWire struct {
	Content           []json.RawMessage `json:"content"`
	StructuredContent json.RawMessage   `json:"structuredContent"`
	IsError           bool              `json:"isError"`
	ResultType        mcp.ResultType    `json:"resultType"`
	Meta              mcp.Meta          `json:"_meta"`
}

// blockNames lists the members a content block may have, so that exact
// decoding refuses a case variant of any of them ("Text" for "text") at
// every level, as a case-insensitive reader would take it for the member.
type blockNames struct {
	Type        json.RawMessage `json:"type"`
	Text        json.RawMessage `json:"text"`
	Data        json.RawMessage `json:"data"`
	MIMEType    json.RawMessage `json:"mimeType"`
	URI         json.RawMessage `json:"uri"`
	Name        json.RawMessage `json:"name"`
	Title       json.RawMessage `json:"title"`
	Description json.RawMessage `json:"description"`
	Size        json.RawMessage `json:"size"`
	Icons       []struct {
		Src      json.RawMessage `json:"src"`
		MIMEType json.RawMessage `json:"mimeType"`
		Sizes    json.RawMessage `json:"sizes"`
		Theme    json.RawMessage `json:"theme"`
	} `json:"icons"`
	Resource *struct {
		URI      json.RawMessage `json:"uri"`
		MIMEType json.RawMessage `json:"mimeType"`
		Text     json.RawMessage `json:"text"`
		Blob     json.RawMessage `json:"blob"`
		Meta     json.RawMessage `json:"_meta"`
	} `json:"resource"`
	Annotations *struct {
		Audience     json.RawMessage `json:"audience"`
		Priority     json.RawMessage `json:"priority"`
		LastModified json.RawMessage `json:"lastModified"`
	} `json:"annotations"`
	Meta json.RawMessage `json:"_meta"`
}

// decodeCallResult reads a tools/call result exactly (member names match
// case-sensitively, none appears twice) and checks every content block
// against its type; a bad block is named by its index. A structuredContent
// member that is present is kept as it is, "null" included; an absent one
// leaves StructuredContent nil.
func decodeCallResult(name string, raw json.RawMessage) (*mcp.CallToolResult, error) {
	var w callResultWire
	if err := wirejson.Unmarshal(raw, &w); err != nil {
		return nil, &ProtocolError{Op: toolOp(name), Reason: "malformed result", Err: err}
	}
	if w.Content == nil {
		return nil, &ProtocolError{Op: toolOp(name), Reason: `malformed result: missing required member "content"`, Path: "/content"}
	}
	// A present structuredContent is kept as sent, null included: it is a
	// value the outputSchema decides on; only an absent member is none.
	res := &mcp.CallToolResult{Content: make([]mcp.Content, len(w.Content)), IsError: w.IsError, ResultType: w.ResultType, Meta: w.Meta,
		StructuredContent: w.StructuredContent}
	for i, b := range w.Content {
		block, err := mcp.DecodeContentBlock(i, b)
		if err == nil {
			if nerr := checkBlockNames(b); nerr != nil {
				err = &mcp.ContentError{Index: i, Reason: nerr.Error()}
			}
		}
		if err != nil {
			pe := &ProtocolError{Op: toolOp(name), Reason: "bad content block", Path: fmt.Sprintf("content[%d]", i), Err: err}
			var ce *mcp.ContentError
			if !errors.As(err, &ce) {
				pe.Reason = "malformed result"
			}
			return nil, pe
		}
		res.Content[i] = block
	}
	return res, nil
}

// blockMemberNames are blockNames' members.
var blockMemberNames = []string{"type", "text", "data", "mimeType", "uri", "name", "title", "description", "size", "icons", "resource", "annotations", "_meta"}

// checkBlockNames refuses a content block with a case variant of a member
// name (see blockNames). A block without nested objects to check (icons,
// resource, annotations) is scanned; one the scan declines, or with nested
// members, is decoded into blockNames, which then says what is wrong.
func checkBlockNames(b []byte) error {
	if jsonscan.Members(b, blockMemberNames, func(name, _ []byte) bool {
		switch string(name) {
		case "icons", "resource", "annotations":
			return false
		}
		return true
	}) {
		return nil
	}
	var names blockNames
	return wirejson.Unmarshal(b, &names)
}

// checkOutput validates structuredContent against the cached outputSchema;
// on a mismatch with a cache that may be stale it re-lists once and retries
// the check, so a changed tool is not blamed on its old schema.
func (c *Client) checkOutput(ctx context.Context, name string, e *toolEntry, res *mcp.CallToolResult) error {
	err := validateOutput(name, e, res)
	if err == nil {
		return nil
	}
	if _, fresh := c.tools.lookup(name); !fresh {
		if ne, lerr := c.toolEntry(ctx, name, true); lerr == nil && ne != nil {
			return validateOutput(name, ne, res)
		}
	}
	return err
}

// validateOutput checks structuredContent against the tool's outputSchema.
// A present structuredContent, null included, is a value like any other: a
// schema that allows null accepts it, one that does not gets a
// *ProtocolError naming the path ("/" for the root). A tool that declares an
// outputSchema and sends no structuredContent member breaks the spec (the
// server MUST provide it): a *ProtocolError too.
func validateOutput(name string, e *toolEntry, res *mcp.CallToolResult) error {
	s, err := e.outputSchema()
	if err != nil {
		return &ProtocolError{Op: toolOp(name), Reason: "the tool's outputSchema cannot be used for validation (turn validation off to skip it)", Err: err}
	}
	if s == nil {
		return nil
	}
	if len(res.StructuredContent) == 0 {
		return &ProtocolError{Op: toolOp(name), Reason: "the tool declares an outputSchema but the result has no structuredContent", Path: "/structuredContent"}
	}
	v, err := schema.DecodeValue(res.StructuredContent)
	if err != nil {
		return &ProtocolError{Op: toolOp(name), Reason: "structuredContent is not valid JSON", Err: err}
	}
	if err := s.Validate(v); err != nil {
		pe := &ProtocolError{Op: toolOp(name), Reason: "structuredContent does not match the tool's outputSchema", Err: err}
		var ve *schema.ValidationError
		if errors.As(err, &ve) && len(ve.Violations) > 0 {
			pe.Path = ve.Violations[0].Path
			if pe.Path == "" {
				pe.Path = "/"
			}
		}
		return pe
	}
	return nil
}

// CallToolAs calls a tool and decodes its structuredContent into Out,
// exactly (member names match case-sensitively, duplicates are refused). A
// structuredContent of null (which the outputSchema allowed) leaves Out its
// zero value: nil for a pointer. A result without structuredContent falls
// back to its first text block, read as JSON. A tool error is returned as
// *ToolError.
func CallToolAs[Out any](ctx context.Context, c *Client, name string, args any, opts ...CallOption) (Out, error) {
	res, err := c.CallTool(ctx, name, args, opts...)
	if err != nil {
		var out Out
		return out, err
	}
	return decodeStructured[Out](name, res)
}

// decodeStructured decodes a result's structuredContent, or its first text
// block, into Out (see CallToolAs).
func decodeStructured[Out any](name string, res *mcp.CallToolResult) (Out, error) {
	var out Out
	raw := res.StructuredContent
	if len(raw) == 0 {
		for _, b := range res.Content {
			if t, ok := b.(*mcp.TextContent); ok {
				raw = json.RawMessage(t.Text)
				break
			}
		}
	}
	if len(raw) == 0 {
		return out, &ProtocolError{Op: toolOp(name), Reason: fmt.Sprintf("result has no structuredContent to decode into %T", out)}
	}
	if err := wirejson.Unmarshal(raw, &out); err != nil {
		return out, &ProtocolError{Op: toolOp(name), Reason: fmt.Sprintf("structuredContent does not decode into %T", out), Err: err}
	}
	return out, nil
}
