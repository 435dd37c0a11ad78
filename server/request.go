package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"

	"github.com/toolwire/toolwire/auth"
	"github.com/toolwire/toolwire/internal/wirejson"
	"github.com/toolwire/toolwire/jsonrpc"
	"github.com/toolwire/toolwire/mcp"
)

// Request is one incoming request as every method handler and middleware
// sees it, the same in both eras: what was asked, by whom, over what.
type Request struct {
	// Method and ID are the JSON-RPC request's.
	Method string
	ID     jsonrpc.ID
	// Params are the request's params as received (nil when absent).
	Params json.RawMessage
	// Peer describes the client and the protocol revision of this request.
	Peer PeerInfo

	session   *Session       // the connection's session
	sender    jsonrpc.Sender // messages tied to this request
	http      *http.Request
	principal *auth.Principal
	input     *inputRound  // a 2026-07-28 request that may ask for input
	logs      *requestLog  // made when it first logs (logging.go); guarded by session.mu
	task      *runningTask // the task a tools/call runs as (task_run.go)
}

// PeerInfo describes the caller of a request.
type PeerInfo struct {
	Era                mcp.Era
	ProtocolVersion    string
	ClientInfo         mcp.Implementation
	ClientCapabilities mcp.ClientCapabilities
}

type requestKey struct{}

// RequestFrom returns the request being served on ctx, as the server built
// it before running middleware and the handler; nil outside a request.
func RequestFrom(ctx context.Context) *Request {
	if c := callFrom(ctx); c != nil {
		return &c.Request
	}
	return nil
}

// HTTPRequest returns the HTTP request that carried this MCP request (its
// body already read), or nil over stdio and in process.
func (r *Request) HTTPRequest() *http.Request { return r.http }

// Header returns the HTTP headers of the request that carried this MCP
// request, or nil when it did not come over HTTP.
func (r *Request) Header() http.Header {
	if r.http == nil {
		return nil
	}
	return r.http.Header
}

// Principal returns the authenticated caller an HTTP middleware put on the
// request's context (auth.WithPrincipal), or nil.
func (r *Request) Principal() *auth.Principal { return r.principal }

// Session returns the 2025-era session the request belongs to, or nil for a
// stateless 2026-07-28 request.
func (r *Request) Session() *Session {
	if r.Peer.Era != mcp.EraLegacy {
		return nil
	}
	return r.session
}

// ErrNoBackChannel is returned when a server-to-client request is attempted
// where the protocol has none: 2026-07-28 requests (they use input_required
// results instead), or a session whose transport cannot reach the client.
var ErrNoBackChannel = errors.New("server: no way to send requests to this client: server-to-client requests exist only in 2025-era sessions (in 2026-07-28 return an input_required result)")

// MissingCapabilityError is returned when a server-to-client request needs
// a client capability the client did not declare; nothing is sent.
type MissingCapabilityError struct {
	Method     string
	Capability string
}

func (e *MissingCapabilityError) Error() string {
	return fmt.Sprintf("server: the client did not declare the %q capability that %s needs", e.Capability, e.Method)
}

// Declared returns a *MissingCapabilityError when the client did not
// declare the capability that method, a request a server may send a client
// (roots/list, sampling/createMessage, elicitation/create), needs, and nil
// when it did (or the method needs none). A server that relays another
// server's requests checks this before asking, in either era.
func (r *Request) Declared(method string) error {
	if need := clientMethods[method]; need != "" && !r.Peer.ClientCapabilities.Has(need) {
		return &MissingCapabilityError{Method: method, Capability: need}
	}
	return nil
}

// ClientError is a JSON-RPC error the client answered a server-to-client
// request with. It is deliberately not a *jsonrpc.Error: returned from a
// tool handler it becomes an isError result, not the call's own error.
type ClientError struct {
	Method  string
	Code    int64
	Message string
	Data    json.RawMessage
}

func (e *ClientError) Error() string {
	return fmt.Sprintf("the client answered %s with error %d: %s", e.Method, e.Code, e.Message)
}

// clientMethods are the server-to-client requests the protocol defines,
// with the client capability each needs.
var clientMethods = map[string]string{
	mcp.MethodPing:              "",
	mcp.MethodListRoots:         "roots",
	mcp.MethodCreateMessage:     "sampling",
	mcp.MethodElicitationCreate: "elicitation",
}

// Call sends a request to the client and waits for its result, on the
// stream of the request being served (over HTTP, its SSE stream), within
// ctx. It exists in 2025-era sessions only (ErrNoBackChannel otherwise). A
// JSON-RPC error from the client is returned as a *ClientError.
func (r *Request) Call(ctx context.Context, method string, params any) (json.RawMessage, error) {
	if r.Peer.Era != mcp.EraLegacy || r.session == nil {
		return nil, ErrNoBackChannel
	}
	if rt := r.inTask(); rt != nil {
		// 2025-11-25: a task's requests carry the related-task _meta, and
		// the task waits in input_required while one is open.
		raw, err := encodeParams(params)
		if err != nil {
			return nil, err
		}
		if len(raw) == 0 || string(raw) == "null" {
			raw = json.RawMessage(`{}`)
		}
		if raw, err = setMeta(raw, mcp.MetaRelatedTask, mcp.RelatedTask{TaskID: rt.id}); err != nil {
			return nil, err
		}
		params = raw
		if clientMethods[method] != "" {
			rt.inputStatus(true)
			defer rt.inputStatus(false)
		}
	}
	return r.session.call(ctx, r.sender, r.Peer, method, params)
}

// Ping asks the client whether it is there.
func (r *Request) Ping(ctx context.Context) error {
	_, err := r.Call(ctx, mcp.MethodPing, nil)
	return err
}

// Notify sends a notification tied to this request (over HTTP, on its
// stream), ahead of its response.
func (r *Request) Notify(ctx context.Context, method string, params any) error {
	n, err := jsonrpc.NewNotification(method, params)
	if err != nil {
		return err
	}
	if r.sender == nil {
		return ErrNoBackChannel
	}
	return r.sender.Send(ctx, n)
}

// Meta decodes and returns the request's params._meta (nil when absent or
// malformed). Each call decodes afresh; keep the result if it is needed
// often.
func (r *Request) Meta() mcp.Meta {
	var head struct {
		Meta mcp.Meta `json:"_meta"`
	}
	if len(r.Params) > 0 && wirejson.Unmarshal(r.Params, &head) == nil {
		return head.Meta
	}
	return nil
}
