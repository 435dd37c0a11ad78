package client

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strings"
)

// The request plumbing both HTTP transports share (Streamable HTTP and
// the 2024-11-05 HTTP+SSE transport): a request with the transport's
// headers, authorization and its challenges, a POST whose reply is only a
// status, the media type of a reply, and how a failed exchange is
// described.

// request builds a request of method to target (the MCP endpoint, or the
// endpoint an HTTP+SSE stream named) carrying the headers every request
// of the transport carries: the configured ones (HTTP.Header,
// SSE.Header), then those of the caller's context (WithHeader), each a
// copy. body, when not nil, is the request's body; op names the exchange
// in the error of a request that cannot be built.
func (h *httpConn) request(ctx context.Context, method, target string, body []byte, op string) (*http.Request, error) {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, target, rd)
	if err != nil {
		return nil, &TransportError{Op: op, Err: err}
	}
	for k, vs := range h.header {
		req.Header[k] = append([]string(nil), vs...)
	}
	for k, vs := range headerFrom(ctx) {
		req.Header[k] = append([]string(nil), vs...)
	}
	return req, nil
}

// post sends a POST whose reply carries no message (a notification, the
// answer to a server request, any message of the HTTP+SSE transport) and
// returns the reply's status and the start of its body (64 KiB at most),
// for an error to quote. A redirect is an error (redirectError): a POST's
// is never followed.
func (h *httpConn) post(req *http.Request, op string) (int, []byte, error) {
	resp, err := h.do(req, op)
	if err != nil {
		return 0, nil, transportError(op, err)
	}
	defer resp.Body.Close()
	reply, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	if resp.StatusCode/100 == 3 {
		return 0, nil, redirectError(op, resp)
	}
	return resp.StatusCode, reply, nil
}

// do sends req, through the transport's HTTPAuth when there is one: the
// credentials Authorize sets, and on a 401 or 403 a Challenge and, when it
// asks, the same request again with its body replayed (at most
// MaxAuthRetries times). A 401 or 403 that is not retried, with or without
// Auth, fails with a *TransportError carrying the status and the
// WWW-Authenticate value; other errors are those of the http.Client.
func (h *httpConn) do(req *http.Request, op string) (*http.Response, error) {
	for attempt := 0; ; attempt++ {
		if h.auth != nil {
			if err := h.auth.Authorize(req); err != nil {
				return nil, &TransportError{Op: op, Err: fmt.Errorf("authorizing the request: %w", err)}
			}
		}
		resp, err := h.hc.Do(req)
		if err != nil {
			return nil, err
		}
		if !authStatus(resp.StatusCode) {
			return resp, nil
		}
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
		resp.Body.Close()
		challenge := strings.Join(resp.Header.Values("WWW-Authenticate"), ", ")
		fail := func(cause error) error {
			return &TransportError{Op: op, StatusCode: resp.StatusCode, WWWAuthenticate: challenge, Err: cause}
		}
		if h.auth == nil || attempt >= MaxAuthRetries {
			return nil, fail(statusError(resp.StatusCode, body))
		}
		resp.Body = io.NopCloser(bytes.NewReader(body))
		retry, cerr := h.auth.Challenge(req.Context(), req, resp)
		if cerr != nil {
			return nil, fail(fmt.Errorf("%s: authorization failed: %w", http.StatusText(resp.StatusCode), cerr))
		}
		if !retry {
			return nil, fail(statusError(resp.StatusCode, body))
		}
		next := req.Clone(req.Context())
		if req.GetBody != nil {
			b, err := req.GetBody()
			if err != nil {
				return nil, err
			}
			next.Body = b
		}
		req = next
	}
}

// transportError wraps err as a *TransportError of op unless it is one.
func transportError(op string, err error) error {
	var te *TransportError
	if errors.As(err, &te) {
		return err
	}
	return &TransportError{Op: op, Err: err}
}

// statusError describes an HTTP error status with the start of its body.
func statusError(status int, body []byte) error {
	snippet := string(bytes.TrimSpace(body))
	if len(snippet) > 200 {
		snippet = snippet[:200] + "…"
	}
	if snippet == "" {
		return errors.New(http.StatusText(status))
	}
	return fmt.Errorf("%s: %s", http.StatusText(status), snippet)
}

// mediaType is the media type of a reply's Content-Type, "" when it has
// none that parses.
func mediaType(resp *http.Response) string {
	ct := resp.Header.Get("Content-Type")
	switch ct {
	case "application/json", "text/event-stream":
		return ct // the usual value, as it is
	}
	mt, _, err := mime.ParseMediaType(ct)
	if err != nil {
		return ""
	}
	return mt
}
