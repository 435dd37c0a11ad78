package jsonrpc

import "context"

// MethodHandler serves one request. It returns the result (any value that
// encodes to a JSON object, including json.RawMessage) or an error; a *Error
// is answered as exactly that JSON-RPC error.
type MethodHandler func(ctx context.Context, req *Request) (result any, err error)

// Middleware wraps a MethodHandler to observe, rewrite or refuse requests and
// their results. Servers and clients use the same shape for the requests they
// receive and the requests they send, so one middleware (logging, timing,
// policy) serves every direction.
type Middleware func(next MethodHandler) MethodHandler

// Chain wraps h in mws; the first middleware is the outermost, so it sees a
// request first and its result last.
func Chain(h MethodHandler, mws ...Middleware) MethodHandler {
	for i := len(mws) - 1; i >= 0; i-- {
		if mws[i] != nil {
			h = mws[i](h)
		}
	}
	return h
}
