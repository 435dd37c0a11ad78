package client

import (
	"fmt"
	"net/http"
)

// redirectError is the failure of an exchange the server redirected where
// the client does not follow. Every request carries the session id and the
// caller's headers (credentials among them), and a POST its message, so a
// POST is never redirected (resending a tool call elsewhere is not the
// client's decision), and a GET or DELETE is redirected only within the
// endpoint's origin (scheme, host and port); the transport fails the
// exchange with this error for any other redirect.
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
