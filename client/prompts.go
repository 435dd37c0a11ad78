package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"

	"github.com/toolwire/toolwire/internal/wirejson"
	"github.com/toolwire/toolwire/mcp"
)

// PromptPages lists prompts page by page (prompts/list with nextCursor),
// following at most Limits.MaxPages pages. Each step yields one page or an
// error, after which iteration stops. A prompt that is not a valid Prompt
// (no name, an argument without a name, a case variant or duplicate member)
// makes the page a *ProtocolError.
func (c *Client) PromptPages(ctx context.Context) iter.Seq2[*mcp.ListPromptsResult, error] {
	return func(yield func(*mcp.ListPromptsResult, error) bool) {
		cursor, hasCursor := "", false
		seen := map[string]bool{}
		for page := 0; ; page++ {
			if page >= c.cfg.maxPages {
				yield(nil, &ProtocolError{Op: mcp.MethodListPrompts, Reason: fmt.Sprintf("more than %d pages, the client's limit", c.cfg.maxPages)})
				return
			}
			var params any
			if hasCursor {
				params = map[string]string{"cursor": cursor}
			}
			raw, err := c.Call(ctx, mcp.MethodListPrompts, params)
			if err != nil {
				yield(nil, err)
				return
			}
			res, next, err := decodePromptsPage(raw)
			if err != nil {
				yield(nil, err)
				return
			}
			if !yield(res, nil) {
				return
			}
			if next == nil {
				return
			}
			if seen[*next] {
				yield(nil, &ProtocolError{Op: mcp.MethodListPrompts, Reason: fmt.Sprintf("nextCursor %q repeats; the listing would never end", *next)})
				return
			}
			seen[*next] = true
			cursor, hasCursor = *next, true
		}
	}
}

// promptsPage is a prompts/list result with the cursor kept as a pointer,
// since an empty-string cursor is a valid cursor and not the end.
type promptsPage struct {
	Prompts    []json.RawMessage `json:"prompts"`
	NextCursor *string           `json:"nextCursor"`
	TTLMs      *int64            `json:"ttlMs"`
	CacheScope mcp.CacheScope    `json:"cacheScope"`
	ResultType mcp.ResultType    `json:"resultType"`
	Meta       mcp.Meta          `json:"_meta"`
}

// decodePromptsPage decodes one page exactly; next is nil at the end.
func decodePromptsPage(raw json.RawMessage) (res *mcp.ListPromptsResult, next *string, err error) {
	var p promptsPage
	if err := wirejson.Unmarshal(raw, &p); err != nil {
		return nil, nil, &ProtocolError{Op: mcp.MethodListPrompts, Reason: "result is not a prompt list", Err: err}
	}
	if p.Prompts == nil {
		return nil, nil, &ProtocolError{Op: mcp.MethodListPrompts, Reason: `result has no "prompts" array`}
	}
	res = &mcp.ListPromptsResult{Prompts: make([]*mcp.Prompt, 0, len(p.Prompts)),
		TTLMs: p.TTLMs, CacheScope: p.CacheScope, ResultType: p.ResultType, Meta: p.Meta}
	if p.NextCursor != nil {
		res.NextCursor = *p.NextCursor
	}
	for i, praw := range p.Prompts {
		pr := new(mcp.Prompt)
		if err := pr.UnmarshalJSON(praw); err != nil {
			return nil, nil, &ProtocolError{Op: mcp.MethodListPrompts, Reason: fmt.Sprintf("prompts[%d] is not a prompt", i), Path: fmt.Sprintf("/prompts/%d", i), Err: err}
		}
		res.Prompts = append(res.Prompts, pr)
	}
	return res, p.NextCursor, nil
}

// ListPrompts returns every prompt the server offers, following all pages
// (at most Limits.MaxPages).
func (c *Client) ListPrompts(ctx context.Context) ([]*mcp.Prompt, error) {
	var all []*mcp.Prompt
	for page, err := range c.PromptPages(ctx) {
		if err != nil {
			return nil, err
		}
		all = append(all, page.Prompts...)
	}
	return all, nil
}

// GetPrompt asks for a prompt (prompts/get) with its arguments filled in;
// args may be nil. The result is decoded exactly: every message must have
// the role "user" or "assistant" and a known, complete content block, or
// the result is a *ProtocolError naming the message. An unknown prompt or
// a missing required argument is the server's -32602, a *JSONRPCError.
func (c *Client) GetPrompt(ctx context.Context, name string, args map[string]string, opts ...CallOption) (*mcp.GetPromptResult, error) {
	params := mcp.GetPromptParams{Name: name, Arguments: args}
	raw, err := c.Call(ctx, mcp.MethodGetPrompt, params, opts...)
	if err != nil {
		return nil, err
	}
	res := new(mcp.GetPromptResult)
	if err := res.UnmarshalJSON(raw); err != nil {
		pe := &ProtocolError{Op: mcp.MethodGetPrompt + " " + name, Reason: "malformed result", Err: err}
		var me *mcp.PromptMessageError
		if errors.As(err, &me) {
			pe.Reason = "invalid message"
			pe.Path = fmt.Sprintf("messages[%d]", me.Index)
		}
		return nil, pe
	}
	return res, nil
}
