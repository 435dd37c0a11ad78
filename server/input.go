package server

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/toolwire/toolwire/internal/jsonscan"
	"github.com/toolwire/toolwire/internal/wirejson"
	"github.com/toolwire/toolwire/jsonrpc"
	"github.com/toolwire/toolwire/mcp"
)

// A handler asks the client for input (a form the user fills in, a model
// completion, the client's roots) through its request, with the same code
// in both eras:
//   - in a 2025-era session each input request is sent to the client as a
//     server-to-client request and its answer returned;
//   - in 2026-07-28 (SEP-2322) the answers come with the client's retry of
//     the request. When one is missing, Input returns an error wrapping
//     ErrInputRequired and the server answers with an input_required
//     result asking for it, whatever the handler then returned. The retry
//     runs the handler again from the start, so a handler asks before it
//     acts; answers given in earlier rounds travel in the sealed
//     requestState and are found again.

// ErrInputRequired is wrapped by the error Input returns in a 2026-07-28
// request whose answers are not all there yet; a handler returns it (or
// anything) and the server asks the client.
var ErrInputRequired = errors.New("server: input required from the client")

// InputOption adjusts one input request (Elicit, CreateMessage, ListRoots).
type InputOption interface{ applyInput(*inputOptions) }

type inputOptions struct{ key string }

type inputKeyOption string

func (k inputKeyOption) applyInput(o *inputOptions) { o.key = string(k) }

// InputKey names an input request: the key of its entry in the
// input_required result's inputRequests and of its answer in the client's
// inputResponses. The defaults are "elicitation", "sampling" and "roots";
// a handler asking twice for the same kind gives each its own key.
func InputKey(key string) InputOption { return inputKeyOption(key) }

func inputKey(def string, opts []InputOption) string {
	o := inputOptions{key: def}
	for _, opt := range opts {
		if opt != nil {
			opt.applyInput(&o)
		}
	}
	return o.key
}

// InputAnswerError reports an answer from the client that is not what was
// asked for (malformed, or of the wrong shape). In 2026-07-28 the request
// is answered with -32602 naming the key.
type InputAnswerError struct {
	Key    string
	Method string
	Err    error
}

func (e *InputAnswerError) Error() string {
	return fmt.Sprintf("inputResponses[%q]: not a valid %s result: %v", e.Key, e.Method, e.Err)
}

func (e *InputAnswerError) Unwrap() error { return e.Err }

// Input asks the client for the answers to reqs, keyed by names the handler
// chooses, and returns the answers keyed alike (each the raw result of its
// request). In a 2025-era session the requests are sent one by one, in key
// order. In 2026-07-28 all missing answers are asked for in one round: the
// returned error wraps ErrInputRequired. A request for a capability the
// client did not declare is a *MissingCapabilityError and nothing is asked
// (2026-07-28: the request is answered with -32021).
func (r *Request) Input(ctx context.Context, reqs map[string]mcp.InputRequest) (mcp.InputResponses, error) {
	if len(reqs) == 0 {
		return mcp.InputResponses{}, nil
	}
	keys := make([]string, 0, len(reqs))
	for k, q := range reqs {
		if k == "" {
			return nil, errors.New("server: an input request needs a non-empty key")
		}
		if _, known := clientMethods[q.Method]; !known || q.Method == mcp.MethodPing {
			return nil, fmt.Errorf("server: %q is not a request a server may ask a client for input with", q.Method)
		}
		keys = append(keys, k)
	}
	sort.Strings(keys)
	rt := r.inTask()
	for _, k := range keys {
		if need := clientMethods[reqs[k].Method]; !r.Peer.ClientCapabilities.Has(need) {
			err := &MissingCapabilityError{Method: reqs[k].Method, Capability: need}
			if r.input != nil && rt == nil {
				r.input.missing(need)
			}
			return nil, err
		}
	}
	if rt != nil && r.Peer.Era == mcp.EraModern {
		return rt.ask(ctx, keys, reqs)
	}
	if r.Peer.Era == mcp.EraLegacy {
		out := make(mcp.InputResponses, len(keys))
		for _, k := range keys {
			raw, err := r.Call(ctx, reqs[k].Method, reqs[k].Params)
			if err != nil {
				return nil, err
			}
			out[k] = raw
		}
		return out, nil
	}
	if r.input == nil {
		return nil, fmt.Errorf("server: %s cannot ask the client for input (only tools/call, prompts/get and resources/read can)", r.Method)
	}
	return r.input.ask(keys, reqs)
}

// Elicit asks the user, through the client, for the values of a form
// (mcp.ElicitParams with RequestedSchema) or to visit a URL (Mode "url").
// The params are checked first (ElicitParams.Validate); URL mode needs a
// client that declared elicitation.url. See Input for the two eras.
func (r *Request) Elicit(ctx context.Context, p *mcp.ElicitParams, opts ...InputOption) (*mcp.ElicitResult, error) {
	if p == nil {
		return nil, errors.New("server: Elicit needs params")
	}
	if err := p.Validate(); err != nil {
		return nil, fmt.Errorf("server: %w", err)
	}
	form, url := elicitModes(r.Peer.ClientCapabilities.Elicitation)
	if r.Peer.ClientCapabilities.Has("elicitation") {
		if p.Mode == mcp.ElicitURL && !url {
			return nil, &MissingCapabilityError{Method: mcp.MethodElicitationCreate, Capability: "elicitation.url"}
		}
		if p.Mode != mcp.ElicitURL && !form {
			return nil, &MissingCapabilityError{Method: mcp.MethodElicitationCreate, Capability: "elicitation.form"}
		}
	}
	var res mcp.ElicitResult
	if err := r.ask(ctx, inputKey("elicitation", opts), mcp.MethodElicitationCreate, p, &res); err != nil {
		return nil, err
	}
	return &res, nil
}

// CreateMessage asks the client to sample its language model. Tools and
// ToolChoice need a client that declared sampling.tools, and IncludeContext
// other than "none" one that declared sampling.context. See Input for the
// two eras.
func (r *Request) CreateMessage(ctx context.Context, p *mcp.CreateMessageParams, opts ...InputOption) (*mcp.CreateMessageResult, error) {
	if p == nil || len(p.Messages) == 0 {
		return nil, errors.New("server: CreateMessage needs at least one message")
	}
	if p.MaxTokens <= 0 {
		return nil, errors.New("server: CreateMessage needs maxTokens > 0")
	}
	if r.Peer.ClientCapabilities.Has("sampling") {
		sub := subCapabilities(r.Peer.ClientCapabilities.Sampling)
		if (len(p.Tools) > 0 || p.ToolChoice != nil) && !sub["tools"] {
			return nil, &MissingCapabilityError{Method: mcp.MethodCreateMessage, Capability: "sampling.tools"}
		}
		if p.IncludeContext != "" && p.IncludeContext != "none" && !sub["context"] {
			return nil, &MissingCapabilityError{Method: mcp.MethodCreateMessage, Capability: "sampling.context"}
		}
	}
	var res mcp.CreateMessageResult
	if err := r.ask(ctx, inputKey("sampling", opts), mcp.MethodCreateMessage, p, &res); err != nil {
		return nil, err
	}
	return &res, nil
}

// ListRoots asks the client for its roots (it must declare "roots"). See
// Input for the two eras.
func (r *Request) ListRoots(ctx context.Context, opts ...InputOption) (*mcp.ListRootsResult, error) {
	var res mcp.ListRootsResult
	if err := r.ask(ctx, inputKey("roots", opts), mcp.MethodListRoots, struct{}{}, &res); err != nil {
		return nil, err
	}
	return &res, nil
}

// ask runs one input request and decodes its answer into v.
func (r *Request) ask(ctx context.Context, key, method string, params, v any) error {
	raw, err := encodeParams(params)
	if err != nil {
		return err
	}
	answers, err := r.Input(ctx, map[string]mcp.InputRequest{key: {Method: method, Params: raw}})
	if err != nil {
		return err
	}
	if err := wirejson.Unmarshal(answers[key], v); err != nil {
		aerr := &InputAnswerError{Key: key, Method: method, Err: err}
		if r.input != nil {
			r.input.fail(aerr)
		}
		return aerr
	}
	return nil
}

// elicitModes reads the client's elicitation capability: {} is form only
// (as before modes existed); otherwise the modes named.
func elicitModes(raw json.RawMessage) (form, url bool) {
	sub := subCapabilities(raw)
	if len(sub) == 0 {
		return true, false
	}
	return sub["form"], sub["url"]
}

// subCapabilities names the members of a capability object.
func subCapabilities(raw json.RawMessage) map[string]bool {
	var m map[string]json.RawMessage
	if len(raw) == 0 || wirejson.Unmarshal(raw, &m) != nil {
		return nil
	}
	out := make(map[string]bool, len(m))
	for k, v := range m {
		out[k] = string(v) != "null"
	}
	return out
}

// inputRound is the input state of one 2026-07-28 request: the answers it
// brought (inputResponses, and those of earlier rounds sealed in
// requestState), and what the handler asked for that is still missing.
type inputRound struct {
	mu       sync.Mutex
	answers  map[string]json.RawMessage // every answer known
	used     map[string]bool            // answers the handler consumed
	pending  map[string]mcp.InputRequest
	needCaps []string
	bad      *InputAnswerError
	state    *inputState // the state the request came with, or nil
}

func (in *inputRound) missing(capability string) {
	in.mu.Lock()
	if !slices.Contains(in.needCaps, capability) {
		in.needCaps = append(in.needCaps, capability)
	}
	in.mu.Unlock()
}

func (in *inputRound) fail(err *InputAnswerError) {
	in.mu.Lock()
	if in.bad == nil {
		in.bad = err
	}
	in.mu.Unlock()
}

func (in *inputRound) ask(keys []string, reqs map[string]mcp.InputRequest) (mcp.InputResponses, error) {
	in.mu.Lock()
	defer in.mu.Unlock()
	out := make(mcp.InputResponses, len(keys))
	var lacking []string
	for _, k := range keys {
		if a, ok := in.answers[k]; ok {
			out[k] = a
			continue
		}
		lacking = append(lacking, k)
	}
	if len(lacking) == 0 {
		if in.used == nil {
			in.used = make(map[string]bool, len(keys))
		}
		for _, k := range keys {
			in.used[k] = true
		}
		return out, nil
	}
	if in.pending == nil {
		in.pending = map[string]mcp.InputRequest{}
	}
	for _, k := range lacking {
		in.pending[k] = reqs[k]
	}
	return nil, fmt.Errorf("%w: %s", ErrInputRequired, strings.Join(lacking, ", "))
}

var inputMembers = []string{"inputResponses", "requestState"}

// inputParams are the members of a retried request that carry input.
type inputParams struct {
	InputResponses json.RawMessage `json:"inputResponses"`
	RequestState   *string         `json:"requestState"`
}

// handleWithInput runs a method that may ask for input in a 2026-07-28
// request: it opens the round from the request's inputResponses and
// requestState, runs the handler, and answers input_required when the
// handler asked for something the client has not given.
func (s *Server) handleWithInput(ctx context.Context, c *call, m *method) (any, error) {
	in, jerr := s.openRound(c)
	if jerr != nil {
		return nil, jerr
	}
	c.Request.input = in
	res, err := m.handle(ctx, &c.Request)
	if ctx.Err() != nil {
		return res, err
	}
	in.mu.Lock()
	defer in.mu.Unlock()
	switch {
	case len(in.needCaps) > 0 && (err != nil || isErrorResult(res)):
		// The handler could not do without what the client lacks (one that
		// carried on without it answers as it chose).
		sort.Strings(in.needCaps)
		required := make(map[string]any, len(in.needCaps))
		for _, n := range in.needCaps {
			required[n] = map[string]any{}
		}
		return nil, jsonrpc.NewError(mcp.CodeMissingRequiredClientCapability,
			"%s needs client capabilities this request did not declare: %s", c.Method, strings.Join(in.needCaps, ", ")).
			WithData(map[string]any{"requiredCapabilities": required})
	case in.bad != nil:
		return nil, jsonrpc.NewError(jsonrpc.CodeInvalidParams, "invalid %s params: %v", c.Method, in.bad)
	case len(in.pending) > 0:
		keep := make(map[string]json.RawMessage, len(in.used))
		for k := range in.used {
			keep[k] = in.answers[k]
		}
		round := 1
		if in.state != nil {
			round = in.state.Round + 1
		}
		if round > s.cfg.input.maxRounds {
			return nil, jsonrpc.NewError(jsonrpc.CodeInvalidParams, "%s asked for input %d times; the limit is %d rounds", c.Method, round, s.cfg.input.maxRounds)
		}
		state, err := s.sealState(c, keep, in.pending, round)
		if err != nil {
			return nil, err
		}
		return &mcp.InputRequiredResult{InputRequests: in.pending, RequestState: state}, nil
	}
	return res, err
}

// isErrorResult reports whether a result is a tool's isError result.
func isErrorResult(res any) bool {
	r, ok := res.(*mcp.CallToolResult)
	return ok && r.IsError
}

// openRound reads inputResponses and requestState: responses must be an
// object of objects; a state must be one this server sealed for this very
// request, unexpired and not used before.
func (s *Server) openRound(c *call) (*inputRound, *jsonrpc.Error) {
	in := &inputRound{}
	// Most requests carry no input: they cost neither a scan nor a map. A
	// member name spelled with escapes is found by the scan.
	if len(c.Params) == 0 || c.Params[0] != '{' ||
		!bytes.Contains(c.Params, []byte(`"inputResponses"`)) && !bytes.Contains(c.Params, []byte(`"requestState"`)) &&
			bytes.IndexByte(c.Params, '\\') < 0 {
		return in, nil
	}
	// Only the input members are read here; the rest of params (tool
	// arguments above all) is the method's to judge.
	var p inputParams
	scanned := jsonscan.Members(c.Params, inputMembers, func(name, v []byte) bool {
		switch string(name) {
		case "inputResponses":
			p.InputResponses = v
		case "requestState":
			var st string
			if wirejson.Unmarshal(v, &st) != nil {
				return false
			}
			p.RequestState = &st
		}
		return true
	})
	if !scanned {
		p = inputParams{}
		if err := wirejson.Unmarshal(c.Params, &p); err != nil {
			return nil, jsonrpc.NewError(jsonrpc.CodeInvalidParams, "invalid %s params: %v", c.Method, err)
		}
	}
	if p.RequestState != nil {
		st, err := s.openState(c, *p.RequestState)
		if err != nil {
			return nil, jsonrpc.NewError(jsonrpc.CodeInvalidParams, "invalid %s params: requestState %v", c.Method, err)
		}
		in.state = st
		in.answers = make(map[string]json.RawMessage, len(st.Answers))
		for k, v := range st.Answers {
			in.answers[k] = v
		}
	}
	if p.InputResponses != nil {
		if p.InputResponses[0] != '{' {
			return nil, jsonrpc.NewError(jsonrpc.CodeInvalidParams, `invalid %s params: "inputResponses" must be an object of results, not %s`, c.Method, wirejson.KindOf(p.InputResponses))
		}
		var resp map[string]json.RawMessage
		if err := wirejson.Unmarshal(p.InputResponses, &resp); err != nil {
			return nil, jsonrpc.NewError(jsonrpc.CodeInvalidParams, `invalid %s params: "inputResponses": %v`, c.Method, err)
		}
		keys := make([]string, 0, len(resp))
		for k := range resp {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			v := resp[k]
			if len(v) == 0 || v[0] != '{' {
				return nil, jsonrpc.NewError(jsonrpc.CodeInvalidParams, `invalid %s params: inputResponses[%q] must be an object (the result of the request asked), not %s`, c.Method, k, wirejson.KindOf(v))
			}
			if _, earlier := in.answers[k]; earlier {
				continue // an answer sealed in an earlier round stands
			}
			if in.state != nil && !slices.Contains(in.state.Pending, k) {
				continue // not asked for: ignored, as the spec advises
			}
			if in.answers == nil {
				in.answers = make(map[string]json.RawMessage, len(keys))
			}
			in.answers[k] = v
		}
	}
	return in, nil
}
