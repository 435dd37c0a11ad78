package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"strings"

	"github.com/toolwire/toolwire/internal/wirejson"
	"github.com/toolwire/toolwire/jsonrpc"
	"github.com/toolwire/toolwire/mcp"
)

// ResourcePages lists resources page by page (resources/list with
// nextCursor), following at most Limits.MaxPages pages. Each step yields one
// page or an error, after which iteration stops. A resource without uri or
// name, or with a member named twice, makes the page a *ProtocolError.
func (c *Client) ResourcePages(ctx context.Context) iter.Seq2[*mcp.ListResourcesResult, error] {
	return func(yield func(*mcp.ListResourcesResult, error) bool) {
		listPages(c, ctx, mcp.MethodListResources, decodeResourcesPage, yield)
	}
}

func decodeResourcesPage(raw json.RawMessage) (*mcp.ListResourcesResult, *string, error) {
	const op, member = mcp.MethodListResources, "resources"
	var p struct {
		pageHead
		Resources []json.RawMessage `json:"resources"`
	}
	if err := decodePage(op, "resource list", member, raw, &p, &p.Resources); err != nil {
		return nil, nil, err
	}
	items, err := decodeItems(op, member, "resource", p.Resources, func(r *mcp.Resource) bool { return r.URI != "" && r.Name != "" }, `lacks "uri" or "name"`)
	if err != nil {
		return nil, nil, err
	}
	return &mcp.ListResourcesResult{Resources: items, NextCursor: p.nextCursor(),
		TTLMs: p.TTLMs, CacheScope: p.CacheScope, ResultType: p.ResultType, Meta: p.Meta}, p.NextCursor, nil
}

// ListResources returns every resource the server lists (resources/list),
// following all pages (at most Limits.MaxPages).
func (c *Client) ListResources(ctx context.Context) ([]*mcp.Resource, error) {
	return allPages(c.ResourcePages(ctx), func(p *mcp.ListResourcesResult) []*mcp.Resource { return p.Resources })
}

// ResourceTemplatePages lists resource templates page by page
// (resources/templates/list with nextCursor), following at most
// Limits.MaxPages pages. Each step yields one page or an error, after which
// iteration stops.
func (c *Client) ResourceTemplatePages(ctx context.Context) iter.Seq2[*mcp.ListResourceTemplatesResult, error] {
	return func(yield func(*mcp.ListResourceTemplatesResult, error) bool) {
		listPages(c, ctx, mcp.MethodListResourceTemplates, decodeTemplatesPage, yield)
	}
}

func decodeTemplatesPage(raw json.RawMessage) (*mcp.ListResourceTemplatesResult, *string, error) {
	const op, member = mcp.MethodListResourceTemplates, "resourceTemplates"
	var p struct {
		pageHead
		Templates []json.RawMessage `json:"resourceTemplates"`
	}
	if err := decodePage(op, "resource template list", member, raw, &p, &p.Templates); err != nil {
		return nil, nil, err
	}
	items, err := decodeItems(op, member, "resource template", p.Templates, func(t *mcp.ResourceTemplate) bool { return t.URITemplate != "" && t.Name != "" }, `lacks "uriTemplate" or "name"`)
	if err != nil {
		return nil, nil, err
	}
	return &mcp.ListResourceTemplatesResult{ResourceTemplates: items, NextCursor: p.nextCursor(),
		TTLMs: p.TTLMs, CacheScope: p.CacheScope, ResultType: p.ResultType, Meta: p.Meta}, p.NextCursor, nil
}

// ListResourceTemplates returns every resource template the server lists
// (resources/templates/list), following all pages (at most Limits.MaxPages).
func (c *Client) ListResourceTemplates(ctx context.Context) ([]*mcp.ResourceTemplate, error) {
	return allPages(c.ResourceTemplatePages(ctx), func(p *mcp.ListResourceTemplatesResult) []*mcp.ResourceTemplate { return p.ResourceTemplates })
}

// ReadResource reads a resource (resources/read); over 2026-07-28 HTTP the
// Mcp-Name header carries uri. The result is decoded exactly: each content
// has a uri and exactly one of text and blob (valid base64), or the result
// is a *ProtocolError. A URI the server does not serve is a
// *ResourceNotFoundError (see IsResourceNotFound); other refusals are
// *JSONRPCError.
func (c *Client) ReadResource(ctx context.Context, uri string, opts ...CallOption) (*mcp.ReadResourceResult, error) {
	raw, err := c.Call(ctx, mcp.MethodReadResource, mcp.ReadResourceParams{URI: uri}, opts...)
	if err != nil {
		return nil, c.notFound(uri, err)
	}
	res := new(mcp.ReadResourceResult)
	if err := res.UnmarshalJSON(raw); err != nil {
		return nil, &ProtocolError{Op: mcp.MethodReadResource + " " + uri, Reason: "malformed result", Err: err}
	}
	return res, nil
}

// ResourceNotFoundError: the server does not serve the URI read. Its code
// is CodeJSONRPC; Err is the server's error as sent, so errors.As finds the
// *JSONRPCError too.
type ResourceNotFoundError struct {
	URI string
	Err *JSONRPCError
}

func (e *ResourceNotFoundError) Error() string {
	return fmt.Sprintf("resource %q not found: %v", e.URI, e.Err)
}
func (e *ResourceNotFoundError) Unwrap() error { return e.Err }
func (*ResourceNotFoundError) MCPCode() Code   { return CodeJSONRPC }

// IsResourceNotFound reports whether err says the resource read does not
// exist (a *ResourceNotFoundError anywhere in its chain).
func IsResourceNotFound(err error) bool {
	var nf *ResourceNotFoundError
	return errors.As(err, &nf)
}

// notFound makes a refusal of resources/read uri that means "no such
// resource" a *ResourceNotFoundError: -32002 (2025-11-25), -32602 whose
// data.uri is uri (2026-07-28, SEP-2164), or in a legacy session any code
// whose data.uri is uri, as servers of that era differ in the code.
func (c *Client) notFound(uri string, err error) error {
	var je *JSONRPCError
	if !errors.As(err, &je) {
		return err
	}
	var d mcp.ResourceNotFoundData
	hasURI := len(je.Data) > 0 && wirejson.Unmarshal(je.Data, &d) == nil && d.URI == uri
	// Servers that predate SEP-2164's data (the TypeScript SDK among them)
	// answer -32602 with a message that names the URI and says so.
	says := je.Code == jsonrpc.CodeInvalidParams && uri != "" && strings.Contains(je.Message, uri) &&
		strings.Contains(strings.ToLower(je.Message), "not found")
	switch {
	case je.Code == mcp.CodeResourceNotFound,
		je.Code == jsonrpc.CodeInvalidParams && hasURI,
		hasURI && c.Era() == mcp.EraLegacy,
		says:
		return &ResourceNotFoundError{URI: uri, Err: je}
	}
	return err
}

// Complete asks for completions of an argument (completion/complete): of a
// prompt (ref {Type: mcp.RefPrompt, Name}) or of a resource template's
// variable (ref {Type: mcp.RefResource, URI: the template}), with arg the
// argument and what was typed so far; resolved holds arguments already
// chosen (context.arguments), nil for none. The result is decoded exactly
// (at most mcp.MaxCompletionValues values).
func (c *Client) Complete(ctx context.Context, ref mcp.CompletionReference, arg mcp.CompletionArgument, resolved map[string]string) (*mcp.Completion, error) {
	p := mcp.CompleteParams{Ref: ref, Argument: arg}
	if len(resolved) > 0 {
		p.Context = &mcp.CompletionContext{Arguments: resolved}
	}
	raw, err := c.Call(ctx, mcp.MethodComplete, p)
	if err != nil {
		return nil, err
	}
	var res mcp.CompleteResult
	if err := res.UnmarshalJSON(raw); err != nil {
		return nil, &ProtocolError{Op: mcp.MethodComplete, Reason: "malformed result", Err: err}
	}
	return &res.Completion, nil
}

// SetLogLevel sets the least severity of the notifications/message the
// server sends (WithLogHandler receives them). In a legacy session it sends
// logging/setLevel. 2026-07-28 has no such request: the client keeps the
// level and every later request carries it as
// _meta["io.modelcontextprotocol/logLevel"] (none does before the first
// SetLogLevel).
func (c *Client) SetLogLevel(ctx context.Context, level mcp.LoggingLevel) error {
	if !level.Valid() {
		return fmt.Errorf("client: unknown logging level %q (want debug, info, notice, warning, error, critical, alert or emergency)", level)
	}
	if c.Era() == mcp.EraLegacy {
		if _, err := c.Call(ctx, mcp.MethodSetLevel, mcp.SetLevelParams{Level: level}); err != nil {
			return err
		}
	}
	member := appendJSONString([]byte(metaLevelMember), string(level))
	c.logLevel.Store(&member)
	return nil
}

// restoreLogLevel sets the level SetLogLevel chose on a legacy session that
// replaced a lost one, which knows nothing of it. It is sent once, without
// the session retry (it runs inside a re-initialization); a failure is
// logged.
func (c *Client) restoreLogLevel(ctx context.Context) {
	l := c.logLevel.Load()
	if l == nil || c.Era() != mcp.EraLegacy {
		return
	}
	out := objectOutgoing(mcp.MethodSetLevel, map[string]json.RawMessage{"level": (*l)[len(metaLevelMember):]})
	if _, err := c.exchange(ctx, &out, callConfig{}); err != nil {
		c.cfg.logger.Warn("cannot restore the log level on the new session", "error", err)
	}
}
