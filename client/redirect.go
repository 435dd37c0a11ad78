package client

import (
	"fmt"
	"net/http"

	"github.com/toolwire/toolwire/internal/httpguard"
)

// maxRedirects is how many same-origin redirects a GET or DELETE follows,
// as net/http does by default.
const maxRedirects = 10

// guardRedirects is the client's redirect policy, applied before next (a
// caller's CheckRedirect, which may refuse more). Every request carries the
// session id and the caller's headers (credentials among them), and a POST
// its message, so a POST is never redirected (resending a tool call
// elsewhere is not the client's decision), and a GET or DELETE is
// redirected only within the endpoint's origin (scheme, host and port). A
// redirect not followed is returned to the transport, which fails the
// exchange naming the redirect (see redirectError).
func guardRedirects(next func(*http.Request, []*http.Request) error) func(*http.Request, []*http.Request) error {
	return func(req *http.Request, via []*http.Request) error {
		first := via[0]
		if first.Method == http.MethodPost || !httpguard.SameOrigin(first.URL, req.URL) {
			return http.ErrUseLastResponse
		}
		if len(via) >= maxRedirects {
			return fmt.Errorf("stopped after %d redirects", maxRedirects)
		}
		if next != nil {
			return next(req, via)
		}
		return nil
	}
}

// redirectError is the failure of an exchange the server redirected where
// the client does not follow (see guardRedirects).
func redirectError(op string, resp *http.Response) error {
	loc := resp.Header.Get("Location")
	if len(loc) > 200 {
		loc = loc[:200] + "…"
	}
	why := "the client follows no redirect of a POST"
	if resp.Request == nil || resp.Request.Method != http.MethodPost {
		why = "the client follows redirects only within the endpoint's origin"
	}
	return &TransportError{Op: op, StatusCode: resp.StatusCode,
		Err: fmt.Errorf("redirect to %q not followed: %s, so that the session id, the request's headers and its body go to no other server", loc, why)}
}
