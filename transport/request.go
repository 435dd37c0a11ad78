package transport

import (
	"context"
	"net/http"
)

type httpRequestKey struct{}

// WithHTTPRequest returns ctx carrying the HTTP request that delivered an MCP
// message. HTTP transports call it so that method handlers can read the
// request's headers, remote address and TLS state in both protocol eras.
func WithHTTPRequest(ctx context.Context, r *http.Request) context.Context {
	return context.WithValue(ctx, httpRequestKey{}, r)
}

// HTTPRequest returns the HTTP request ctx carries, or nil when the message
// did not arrive over HTTP (stdio, in-process). Its body has been read.
func HTTPRequest(ctx context.Context) *http.Request {
	r, _ := ctx.Value(httpRequestKey{}).(*http.Request)
	return r
}
