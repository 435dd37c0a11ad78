package client

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/toolwire/toolwire/internal/wirejson"
	"github.com/toolwire/toolwire/jsonrpc"
	"github.com/toolwire/toolwire/mcp"
)

// ElicitationHandler answers elicitation/create: it shows the request to the
// user and returns their answer (accept with content, decline or cancel).
// The params have been validated: a form's requestedSchema is one
// mcp.ValidateElicitationSchema accepts, and url mode comes only when it was
// declared (ElicitURLMode).
type ElicitationHandler func(ctx context.Context, params *mcp.ElicitParams) (*mcp.ElicitResult, error)

// SamplingHandler answers sampling/createMessage with a message from the
// client's model. Tools come only when declared (SamplingTools).
type SamplingHandler func(ctx context.Context, params *mcp.CreateMessageParams) (*mcp.CreateMessageResult, error)

// ElicitationOption adjusts WithElicitationHandler.
type ElicitationOption interface{ applyElicit(*config) }

// SamplingOption adjusts WithSamplingHandler.
type SamplingOption interface{ applySampling(*config) }

type elicitOption func(*config)

func (f elicitOption) applyElicit(c *config) { f(c) }

type samplingOption func(*config)

func (f samplingOption) applySampling(c *config) { f(c) }

// ElicitURLMode says the elicitation handler also takes url mode (it can
// send the user to a URL): the client then declares elicitation.url as well
// as elicitation.form.
func ElicitURLMode() ElicitationOption {
	return elicitOption(func(c *config) { c.elicitURL = true })
}

// SamplingTools says the sampling handler's model can use tools: the client
// then declares sampling.tools, and the server may send tools and
// toolChoice (otherwise such a request is refused with -32602).
func SamplingTools() SamplingOption {
	return samplingOption(func(c *config) { c.sampleTools = true })
}

// SamplingContext says the sampling handler honours includeContext
// "thisServer" and "allServers": the client then declares sampling.context.
func SamplingContext() SamplingOption {
	return samplingOption(func(c *config) { c.sampleCtx = true })
}

// WithElicitationHandler answers the server's elicitation/create requests
// (legacy) and inputRequests (2026-07-28) with h, and declares the
// elicitation capability: {"form":{}}, with "url":{} under ElicitURLMode.
// Params are decoded exactly; a request that is malformed, whose form
// schema fails mcp.ValidateElicitationSchema, or in a mode not declared is
// refused with -32602 without reaching h. A nil h removes the handler.
func WithElicitationHandler(h ElicitationHandler, opts ...ElicitationOption) Option {
	return clientOption(func(c *config) {
		c.elicit, c.elicitURL = h, false
		for _, o := range opts {
			if o != nil {
				o.applyElicit(c)
			}
		}
	})
}

// WithSamplingHandler answers the server's sampling/createMessage requests
// (legacy) and inputRequests (2026-07-28) with h, and declares the sampling
// capability ({}, with "tools":{} under SamplingTools and "context":{}
// under SamplingContext). Params are decoded exactly; a malformed request is
// refused with -32602 without reaching h. A nil h removes the handler.
func WithSamplingHandler(h SamplingHandler, opts ...SamplingOption) Option {
	return clientOption(func(c *config) {
		c.sample, c.sampleTools, c.sampleCtx = h, false, false
		for _, o := range opts {
			if o != nil {
				o.applySampling(c)
			}
		}
	})
}

// WithRoots makes the client answer roots/list with roots (which may be
// none) and declares the roots capability with listChanged; SetRoots
// changes them later.
func WithRoots(roots ...mcp.Root) Option {
	return clientOption(func(c *config) { c.rootsSet, c.roots = true, slices.Clone(roots) })
}

// declared is the capabilities the client declares: those given by
// WithCapabilities, with those of the typed handlers merged in where
// WithCapabilities left the member unset.
func (c *config) declared() mcp.ClientCapabilities {
	caps := c.capabilities
	if c.elicit != nil && !caps.Has("elicitation") {
		if c.elicitURL {
			caps.Elicitation = json.RawMessage(`{"form":{},"url":{}}`)
		} else {
			caps.Elicitation = json.RawMessage(`{"form":{}}`)
		}
	}
	if c.sample != nil && !caps.Has("sampling") {
		switch {
		case c.sampleTools && c.sampleCtx:
			caps.Sampling = json.RawMessage(`{"context":{},"tools":{}}`)
		case c.sampleTools:
			caps.Sampling = json.RawMessage(`{"tools":{}}`)
		case c.sampleCtx:
			caps.Sampling = json.RawMessage(`{"context":{}}`)
		default:
			caps.Sampling = json.RawMessage(`{}`)
		}
	}
	if c.rootsSet && caps.Roots == nil {
		caps.Roots = &mcp.ListChangedCapability{ListChanged: true}
	}
	return caps
}

// capabilityOf names the client capability a server request needs, "" for
// none.
func capabilityOf(method string) string {
	switch method {
	case mcp.MethodElicitationCreate:
		return "elicitation"
	case mcp.MethodCreateMessage:
		return "sampling"
	case mcp.MethodListRoots:
		return "roots"
	}
	return ""
}

// subCapability says whether a declared capability object (raw JSON) has
// the member name.
func subCapability(raw json.RawMessage, name string) bool {
	var obj map[string]json.RawMessage
	if wirejson.Unmarshal(raw, &obj) != nil {
		return false
	}
	_, ok := obj[name]
	return ok
}

// elicitModes reads a declared elicitation capability: an empty object
// means form mode only, as 2025-11-25 says.
func elicitModes(raw json.RawMessage) (form, url bool) {
	var obj map[string]json.RawMessage
	if wirejson.Unmarshal(raw, &obj) != nil {
		return false, false
	}
	if len(obj) == 0 {
		return true, false
	}
	_, form = obj[mcp.ElicitForm]
	_, url = obj[mcp.ElicitURL]
	return form, url
}

// typed answers a server request with a typed handler; ok is false when
// none is set for the method.
func (c *Client) typed(ctx context.Context, req *jsonrpc.Request) (res any, ok bool, err error) {
	switch req.Method {
	case mcp.MethodElicitationCreate:
		if c.cfg.elicit == nil {
			return nil, false, nil
		}
		res, err = c.elicit(ctx, req.Params)
	case mcp.MethodCreateMessage:
		if c.cfg.sample == nil {
			return nil, false, nil
		}
		res, err = c.sample(ctx, req.Params)
	case mcp.MethodListRoots:
		if !c.cfg.rootsSet {
			return nil, false, nil
		}
		res = &mcp.ListRootsResult{Roots: c.Roots()}
	default:
		return nil, false, nil
	}
	return res, true, err
}

// hasTyped says whether a typed handler answers method.
func (c *Client) hasTyped(method string) bool {
	switch method {
	case mcp.MethodElicitationCreate:
		return c.cfg.elicit != nil
	case mcp.MethodCreateMessage:
		return c.cfg.sample != nil
	case mcp.MethodListRoots:
		return c.cfg.rootsSet
	}
	return false
}

// invalidParams is the -32602 refusal of a server request.
func invalidParams(format string, args ...any) error {
	return jsonrpc.NewError(jsonrpc.CodeInvalidParams, format, args...)
}

func (c *Client) elicit(ctx context.Context, raw json.RawMessage) (any, error) {
	var p mcp.ElicitParams
	if err := decodeRequestParams(raw, &p); err != nil {
		return nil, invalidParams("invalid elicitation/create params: %v", err)
	}
	form, url := elicitModes(c.cfg.capabilities.Elicitation)
	switch p.Mode {
	case "", mcp.ElicitForm:
		if !form {
			return nil, invalidParams("elicitation: the client did not declare form mode")
		}
	case mcp.ElicitURL:
		if !url {
			return nil, invalidParams("elicitation: the client did not declare url mode")
		}
	}
	if err := p.Validate(); err != nil {
		return nil, invalidParams("%v", err)
	}
	res, err := c.cfg.elicit(ctx, &p)
	if err != nil {
		return nil, err
	}
	if res == nil {
		return nil, errors.New("the elicitation handler returned no result")
	}
	switch res.Action {
	case mcp.ActionAccept, mcp.ActionDecline, mcp.ActionCancel:
	default:
		return nil, fmt.Errorf("the elicitation handler returned action %q (want accept, decline or cancel)", res.Action)
	}
	return res, nil
}

func (c *Client) sample(ctx context.Context, raw json.RawMessage) (any, error) {
	var head struct {
		Messages  json.RawMessage `json:"messages"`
		MaxTokens json.RawMessage `json:"maxTokens"`
	}
	if err := wirejson.Unmarshal(raw, &head); err != nil || len(head.Messages) == 0 || len(head.MaxTokens) == 0 {
		return nil, invalidParams(`invalid sampling/createMessage params: "messages" and "maxTokens" are required`)
	}
	var p mcp.CreateMessageParams
	if err := decodeRequestParams(raw, &p); err != nil {
		return nil, invalidParams("invalid sampling/createMessage params: %v", err)
	}
	if (len(p.Tools) > 0 || p.ToolChoice != nil) && !subCapability(c.cfg.capabilities.Sampling, "tools") {
		return nil, invalidParams("sampling: tools were sent, but the client did not declare sampling.tools")
	}
	res, err := c.cfg.sample(ctx, &p)
	if err != nil {
		return nil, err
	}
	if res == nil {
		return nil, errors.New("the sampling handler returned no result")
	}
	return res, nil
}

// decodeRequestParams decodes a server request's params exactly (a member
// named twice, or in another case, is refused); absent params are {}.
func decodeRequestParams(raw json.RawMessage, v any) error {
	if t := bytes.TrimSpace(raw); len(t) == 0 || string(t) == "null" {
		raw = json.RawMessage(`{}`)
	} else if t[0] != '{' {
		return errors.New("params must be an object")
	}
	return wirejson.Unmarshal(raw, v)
}

// rootsState holds the roots the client answers roots/list with.
type rootsState struct {
	mu    sync.Mutex
	roots []mcp.Root
}

// Roots returns the roots the client answers roots/list with (WithRoots,
// SetRoots); nil when it does not answer it.
func (c *Client) Roots() []mcp.Root {
	if !c.cfg.rootsSet {
		return nil
	}
	c.roots.mu.Lock()
	defer c.roots.mu.Unlock()
	out := slices.Clone(c.roots.roots)
	if out == nil {
		out = []mcp.Root{}
	}
	return out
}

// SetRoots replaces the roots the client answers roots/list with and, in a
// legacy session, tells the server with notifications/roots/list_changed (a
// 2026-07-28 server asks for roots with each request that needs them). It
// needs WithRoots at Connect, which declares the roots capability.
func (c *Client) SetRoots(ctx context.Context, roots ...mcp.Root) error {
	if !c.cfg.rootsSet {
		return errors.New("client: SetRoots needs WithRoots at Connect (the roots capability is declared then)")
	}
	c.roots.mu.Lock()
	c.roots.roots = slices.Clone(roots)
	c.roots.mu.Unlock()
	if c.Era() != mcp.EraLegacy {
		return nil
	}
	if r := c.cfg.capabilities.Roots; r == nil || !r.ListChanged {
		return nil // not declared: the server does not expect it
	}
	return c.notify(ctx, mcp.NotificationRootsListChanged, nil)
}
