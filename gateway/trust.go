package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/toolwire/toolwire/auth"
	"github.com/toolwire/toolwire/gateway/audit"
	"github.com/toolwire/toolwire/gateway/policy"
	"github.com/toolwire/toolwire/internal/jsonscan"
	"github.com/toolwire/toolwire/internal/wirejson"
	"github.com/toolwire/toolwire/jsonrpc"
	"github.com/toolwire/toolwire/mcp"
	"github.com/toolwire/toolwire/server"
)

// trust is what decides, per request, who may do what: swapped whole by
// New and Reload so that a request sees one consistent set.
type trust struct {
	policy *policy.Policy // nil: every caller may use everything
	limits Limiter        // nil: no rate limits
	enrich Enricher       // nil: results as the upstream sent them
}

func (t *trust) on() bool { return t.policy != nil || t.limits != nil || t.enrich != nil }

// Limiter is the rate limiting the gateway applies to tools/call, by
// caller identity, persona and downstream tool name (package
// gateway/ratelimit implements it). A refused call consumes nothing.
type Limiter interface {
	Allow(identity, persona, tool string) (ok bool, retryAfter time.Duration, which string)
}

// Identity returns the caller of a request as the gateway's personas see
// it: an API key's name, an OAuth subject, or policy.Anonymous() (also for
// requests from inside the process).
func Identity(req *server.Request) policy.Identity {
	if req == nil {
		return policy.Anonymous()
	}
	return policy.FromPrincipal(req.Principal())
}

// listFilter shows each caller the tools, prompts and resources its
// persona allows (server.WithListFilter).
func (g *Gateway) listFilter(r *server.Request, kind server.ListKind, name string) bool {
	p := g.trust.Load().policy
	if p == nil {
		return true
	}
	var f policy.Feature
	switch kind {
	case server.ListTools:
		f = policy.Tools
	case server.ListPrompts:
		f = policy.Prompts
	default:
		f = policy.Resources
	}
	return p.Decide(Identity(r), f, name).Allowed
}

// trustMiddleware puts every tools/call, prompts/get, resources/read and
// completion/complete through the personas, the rate limits, enrichment
// and the audit trail, before forwarding, all deciding on the one target
// parsed from the request (target.go). A request whose target cannot be
// read exactly is refused with -32602 (and audited, naming nothing); a
// denied or limited one never reaches the upstream.
func (g *Gateway) trustMiddleware(next jsonrpc.MethodHandler) jsonrpc.MethodHandler {
	return func(ctx context.Context, req *jsonrpc.Request) (any, error) {
		ctx, tg, perr, ok := targetFor(ctx, req)
		if !ok {
			return next(ctx, req)
		}
		t := g.trust.Load()
		if perr != nil {
			if g.opts.audit != nil {
				rec := g.record(ctx, req, nil)
				g.metrics.refused("invalid")
				return g.finish(ctx, rec, audit.OutcomeProtocolError, perr.Message, nil, perr)
			}
			return nil, perr
		}
		if !t.on() && g.opts.audit == nil {
			return next(ctx, req)
		}
		return g.guard(ctx, req, tg, t, next)
	}
}

// record starts the audit record of a request naming tg (nil: a request
// whose target could not be read).
func (g *Gateway) record(ctx context.Context, req *jsonrpc.Request, tg *target) *audit.Record {
	sreq := server.RequestFrom(ctx)
	rec := &audit.Record{Time: time.Now(), Method: req.Method, Identity: Identity(sreq).String(), RequestBytes: int64(len(req.Params))}
	g.describe(rec, req, sreq)
	if tg != nil {
		rec.Tool = tg.name
		rec.Upstream = g.upstreamOf(tg.feature, tg.name)
		if tg.method == mcp.MethodComplete && tg.feature == policy.Resources && rec.Upstream == "" {
			if u := g.cat.Load().templates[tg.name]; u != nil {
				rec.Upstream = u.spec.Name
			}
		}
		if g.opts.audit != nil && len(tg.arguments) > 0 {
			rec.Arguments = audit.Redact(tg.arguments, g.opts.auditRedact, g.opts.auditMaxValue)
		}
	}
	return rec
}

func (g *Gateway) guard(ctx context.Context, req *jsonrpc.Request, tg *target, t *trust, next jsonrpc.MethodHandler) (any, error) {
	rec := g.record(ctx, req, tg)
	start := rec.Time
	id := Identity(server.RequestFrom(ctx))
	f, name := tg.feature, tg.name

	if t.policy != nil {
		d := t.policy.Decide(id, f, name)
		rec.Persona = d.Persona
		if !d.Allowed {
			g.metrics.refused("denied")
			res, err := refusal(tg, d.Reason, nil)
			return g.finish(ctx, rec, audit.OutcomeDenied, d.Reason, res, err)
		}
	}
	if t.limits != nil && f == policy.Tools && tg.method == mcp.MethodCallTool {
		if ok, after, which := t.limits.Allow(id.String(), rec.Persona, name); !ok {
			ms := max(after.Milliseconds(), 1)
			why := fmt.Sprintf("rate limited (%s limit): retry after %d ms", which, ms)
			g.metrics.refused("rate_limited")
			res, err := refusal(tg, why, &mcp.RetryGuidance{CanRetry: true, RetryAfterMs: ms})
			return g.finish(ctx, rec, audit.OutcomeRateLimited, why, res, err)
		}
	}

	note := &outcomeNote{}
	res, err := next(context.WithValue(ctx, outcomeKey{}, note), req)
	if err == nil && tg.method == mcp.MethodCallTool && t.enrich != nil {
		res = g.enrichResult(ctx, t.enrich, rec, id, tg.arguments, res)
	}
	outcome, why := audit.OutcomeOK, ""
	switch {
	case err != nil:
		outcome, why = audit.OutcomeProtocolError, err.Error()
	case res == nil:
		outcome, why = audit.OutcomeCancelled, "the request was cancelled"
		if cerr := context.Cause(ctx); cerr != nil {
			why = "the request ended: " + cerr.Error()
		}
	default:
		rec.ResponseBytes, rec.ContentBlocks, why = measure(res, tg.method)
		if why != "" {
			outcome = audit.OutcomeToolError
		}
	}
	if note.outcome != "" && note.outcome != string(audit.OutcomeOK) {
		// The forwarding knew better why the call failed (the upstream
		// unreachable, its timeout, the caller gone), as the metrics say.
		outcome = audit.Outcome(note.outcome)
	}
	rec.Duration = time.Since(start)
	if aerr := g.audit(ctx, rec, outcome, why); aerr != nil {
		return nil, aerr
	}
	return res, err
}

// finish audits a request the gateway answered itself.
func (g *Gateway) finish(ctx context.Context, rec *audit.Record, outcome audit.Outcome, why string, res any, err error) (any, error) {
	rec.Duration = time.Since(rec.Time)
	if res != nil {
		rec.ResponseBytes, rec.ContentBlocks, _ = measure(res, mcp.MethodCallTool)
	}
	if aerr := g.audit(ctx, rec, outcome, why); aerr != nil {
		return nil, aerr
	}
	return res, err
}

// refusal is the answer to a denied or rate-limited request: an isError
// result for a tool (with retry guidance when given), a JSON-RPC error
// (invalid params, with the reason) for a prompt or resource.
func refusal(tg *target, why string, retry *mcp.RetryGuidance) (any, error) {
	if tg.method != mcp.MethodCallTool {
		e := jsonrpc.NewError(jsonrpc.CodeInvalidParams, "%s", why)
		e.Data, _ = json.Marshal(map[string]string{"reason": why})
		return nil, e
	}
	res := &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: why}}}
	if retry != nil {
		res.Meta = res.Meta.SetRetryGuidance(*retry)
	}
	return res, nil
}

// audit appends rec with its outcome. In sync delivery (a store that is
// not audit.Async) a failed append withholds the answer: a caller never
// sees a call acknowledged that the audit trail does not hold.
func (g *Gateway) audit(ctx context.Context, rec *audit.Record, outcome audit.Outcome, why string) error {
	s := g.opts.audit
	if s == nil {
		return nil
	}
	rec.Outcome, rec.Error = outcome, why
	// The record is written even when the request's context has ended:
	// its outcome is part of the trail.
	err := s.Append(context.WithoutCancel(ctx), rec)
	if err == nil {
		return nil
	}
	if errors.Is(err, audit.ErrDropped) {
		return nil // async delivery counts and logs its drops
	}
	g.metrics.auditFailed()
	g.opts.logger.Error("audit record not written; the answer is withheld", "method", rec.Method, "tool", rec.Tool, "identity", rec.Identity, "error", err)
	return jsonrpc.NewError(jsonrpc.CodeInternalError, "the gateway could not record this request in its audit trail, so its result is withheld")
}

// describe fills in where a request came from.
func (g *Gateway) describe(rec *audit.Record, req *jsonrpc.Request, sreq *server.Request) {
	if req.ID.IsValid() {
		rec.RequestID = req.ID.String()
	}
	rec.Transport = "stdio"
	if sreq == nil {
		rec.Transport = "in-process"
		return
	}
	rec.Era = sreq.Peer.ProtocolVersion
	if hr := sreq.HTTPRequest(); hr != nil {
		rec.Transport = "http"
		rec.SessionID = hr.Header.Get(mcp.HeaderSessionID)
	}
}

// upstreamOf names the upstream a request would be forwarded to ("" when
// the catalog does not route it).
func (g *Gateway) upstreamOf(f policy.Feature, name string) string {
	cat := g.cat.Load()
	switch f {
	case policy.Tools:
		if r, ok := cat.tools[name]; ok {
			return r.up.spec.Name
		}
	case policy.Prompts:
		if r, ok := cat.prompts[name]; ok {
			return r.up.spec.Name
		}
	default:
		if u, ok := cat.resources[name]; ok {
			return u.spec.Name
		}
	}
	return ""
}

// measure returns a result's size, its number of content blocks (tools)
// or contents (resources) or messages (prompts), and, for a tool result
// with isError, its first text (why it failed). Results are read by the
// strict reader, as forwarding checked them (exactResult).
func measure(res any, method string) (size, blocks int64, toolError string) {
	raw, ok := res.(json.RawMessage)
	if !ok {
		var err error
		if raw, err = json.Marshal(res); err != nil {
			return 0, 0, ""
		}
	}
	list := map[string]string{mcp.MethodCallTool: "content", mcp.MethodGetPrompt: "messages", mcp.MethodReadResource: "contents"}[method]
	if list == "" {
		return int64(len(raw)), 0, ""
	}
	isError := false
	var content []byte
	if !jsonscan.Members(raw, []string{list, "isError"}, func(name, value []byte) bool {
		switch string(name) {
		case "isError":
			isError = string(value) == "true"
		default:
			content = value
		}
		return true
	}) {
		var v map[string]json.RawMessage
		if wirejson.Unmarshal(raw, &v) != nil {
			return int64(len(raw)), 0, ""
		}
		content, isError = v[list], string(v["isError"]) == "true"
	}
	n := countElements(content)
	if !isError || method != mcp.MethodCallTool {
		return int64(len(raw)), n, ""
	}
	var blocks2 []json.RawMessage
	_ = wirejson.Unmarshal(content, &blocks2)
	return int64(len(raw)), n, errorText(true, blocks2)
}

// errorText is the text of a failed tool result's first text block, or a
// generic reason.
func errorText(isError bool, blocks []json.RawMessage) string {
	if !isError {
		return ""
	}
	for _, b := range blocks {
		var t struct {
			Type string `json:"type"`
			Text string `json:"text"`
		}
		if wirejson.Unmarshal(b, &t) == nil && t.Type == "text" && t.Text != "" {
			return t.Text
		}
	}
	return "the tool reported an error"
}

// countElements counts the elements of a JSON array already validated by
// the scanner; 0 for anything else.
func countElements(arr []byte) int64 {
	depth, n := 0, int64(0)
	inString, escaped, empty := false, false, true
	for _, c := range arr {
		if inString {
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
			continue
		}
		switch c {
		case '"':
			inString = true
		case '[', '{':
			depth++
		case ']', '}':
			depth--
		case ',':
			if depth == 1 {
				n++
			}
		}
		if depth >= 1 && c != ' ' && c != '\t' && c != '\n' && c != '\r' && !(depth == 1 && c == '[') {
			empty = false
		}
	}
	if len(arr) == 0 || arr[0] != '[' || empty {
		return 0
	}
	return n + 1
}

// setTrust installs cfg's policy, limits and enrichment for the requests
// that start from now on.
// When the personas change, clients are told that their lists changed.
func (g *Gateway) setTrust(cfg Config) {
	old := g.trust.Swap(&trust{policy: cfg.Policy, limits: cfg.Limits, enrich: cfg.Enrich})
	if old != nil && old.policy != cfg.Policy && g.srv != nil {
		g.srv.NotifyListsChanged()
	}
}

// AdmitSession is the gateway's session admission (for
// streamable.WithSessionAdmission): a caller that no persona matches may
// use nothing, so it is given no session; with no personas configured
// everyone is admitted (who reaches the gateway at all is the
// authentication's to decide).
func (g *Gateway) AdmitSession(_ *http.Request, p *auth.Principal) error {
	pol := g.trust.Load().policy
	if pol == nil {
		return nil
	}
	id := policy.FromPrincipal(p)
	if _, ok := pol.PersonaOf(id); !ok {
		return fmt.Errorf("no persona admits %s: nothing here is for this caller", id)
	}
	return nil
}

// Policy returns the personas in force now (nil: none configured, every
// caller may use everything).
func (g *Gateway) Policy() *policy.Policy { return g.trust.Load().policy }
