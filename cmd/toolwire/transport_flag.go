package main

import (
	"fmt"
	"net/http"

	"github.com/toolwire/toolwire/client"
)

// httpTransport is the client transport --transport names for a URL:
// auto, Streamable HTTP with the specification's fallback to the
// 2024-11-05 HTTP+SSE transport (a server that refuses initialize with
// 400, 404 or 405 and offers an event stream at the URL); http, Streamable
// HTTP alone; sse, HTTP+SSE alone. auth, when not nil, authorizes every
// request either way.
func (f *targetFlags) httpTransport(url string, h http.Header, auth client.HTTPAuth) (client.Transport, error) {
	switch f.wire {
	case "auto", "":
		tr := &client.HTTP{URL: url, Header: h, SSEFallback: true}
		if auth != nil {
			tr.Auth = auth
		}
		return tr, nil
	case "http":
		tr := &client.HTTP{URL: url, Header: h}
		if auth != nil {
			tr.Auth = auth
		}
		return tr, nil
	case "sse":
		tr := &client.SSE{URL: url, Header: h}
		if auth != nil {
			tr.Auth = auth
		}
		return tr, nil
	}
	return nil, usageError{fmt.Sprintf("invalid --transport %q: want auto, http or sse", f.wire)}
}
