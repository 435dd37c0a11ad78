package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"

	"github.com/toolwire/toolwire/mcp"
)

// PromptPages lists prompts page by page (prompts/list with nextCursor),
// following at most Limits.MaxPages pages. Each step yields one page or an
// error, after which iteration stops. A prompt that is not a valid Prompt
// (no name, an argument without a name, a case variant or duplicate member)
// makes the page a *ProtocolError.
func (c *Client) PromptPages(ctx context.Context) iter.Seq2[*mcp.ListPromptsResult, error] {
	return func(yield func(*mcp.ListPromptsResult, error) bool) {
		listPages(c, ctx, mcp.MethodListPrompts, decodePromptsPage, yield)
	}
}

// decodePromptsPage decodes one page exactly; next is nil at the end.
func decodePromptsPage(raw json.RawMessage) (res *mcp.ListPromptsResult, next *string, err error) {
	const op, member = mcp.MethodListPrompts, "prompts"
	var p struct {
		pageHead
		Prompts []json.RawMessage `json:"prompts"`
	}
	if err := decodePage(op, "prompt list", member, raw, &p, &p.Prompts); err != nil {
		return nil, nil, err
	}
	res = &mcp.ListPromptsResult{Prompts: make([]*mcp.Prompt, 0, len(p.Prompts)), NextCursor: p.nextCursor(),
		TTLMs: p.TTLMs, CacheScope: p.CacheScope, ResultType: p.ResultType, Meta: p.Meta}
	for i, praw := range p.Prompts {
		pr := new(mcp.Prompt)
		if err := pr.UnmarshalJSON(praw); err != nil {
			return nil, nil, itemError(op, member, i, "is not a prompt", err)
		}
		res.Prompts = append(res.Prompts, pr)
	}
	return res, p.NextCursor, nil
}

// ListPrompts returns every prompt the server offers, following all pages
// (at most Limits.MaxPages).
func (c *Client) ListPrompts(ctx context.Context) ([]*mcp.Prompt, error) {
	return allPages(c.PromptPages(ctx), func(p *mcp.ListPromptsResult) []*mcp.Prompt { return p.Prompts })
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
