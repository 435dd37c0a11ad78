package client

import (
	"context"
	"net/http"
)

// HTTPAuth authorizes the requests of the Streamable HTTP transport (see
// HTTP.Auth). Package oauth implements it with OAuth 2.1; this package
// knows nothing of how a credential is obtained.
//
// Authorize is called on every request (POST, GET stream, the DELETE that
// ends a session) just
// before it is sent, and on each retry; it sets the request's credentials
// (Authorization, and DPoP when the token is sender-constrained), replacing
// any it set before. An error fails the exchange without sending.
//
// Challenge is called when the server answers a POST or a GET stream with
// 401 or 403 (a refused DELETE on Close is not challenged). The response's
// body has already been read (at most 64 KiB) and replaced by an in-memory
// copy; Challenge may read the headers (WWW-Authenticate, DPoP-Nonce) and
// must not keep the response. It returns true when it has obtained what
// the server asked for and the request is worth sending again: the
// transport then resends it (the body is kept and replayed), at most
// MaxAuthRetries times per request, so an implementation that keeps saying
// yes cannot loop. false, or an error, fails the exchange with a
// *TransportError carrying the status and the WWW-Authenticate value.
type HTTPAuth interface {
	Authorize(req *http.Request) error
	Challenge(ctx context.Context, req *http.Request, resp *http.Response) (retry bool, err error)
}

// MaxAuthRetries is how many times one request is resent after a
// Challenge asked for it: enough for a first authorization, a DPoP nonce
// and a scope step-up in a row.
const MaxAuthRetries = 3

// authStatus says whether an HTTP status is one HTTPAuth.Challenge handles.
func authStatus(code int) bool {
	return code == http.StatusUnauthorized || code == http.StatusForbidden
}
