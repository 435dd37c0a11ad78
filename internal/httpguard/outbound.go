package httpguard

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"time"
)

// Redirects says which redirects an outbound client follows. Whatever it
// says, a redirect to another origin never carries the first request's
// credentials (Authorization, Cookie, Proxy-Authorization).
type Redirects int

const (
	// NoRedirects returns a redirect response as it is, for the caller
	// to read (an authorization endpoint's Location, say).
	NoRedirects Redirects = iota
	// SameOriginRedirects follows a redirect only within the first
	// request's origin (scheme, host and port).
	SameOriginRedirects
	// SameOriginNoPOSTRedirects is SameOriginRedirects that also returns
	// the redirect of a POST as it is: resending a message elsewhere is
	// not the client's decision.
	SameOriginNoPOSTRedirects
	// CheckedRedirects follows a redirect to any URL that Outbound.Check
	// accepts.
	CheckedRedirects
)

// DefaultMaxRedirects is how many redirects an outbound client follows
// unless Outbound.MaxRedirects says otherwise.
const DefaultMaxRedirects = 10

// Outbound describes one of the module's HTTP clients: the one shape the
// OAuth client, the token verifiers, the MCP client and the OTC client
// build theirs with, so that timeouts and redirect rules are decided once.
type Outbound struct {
	// Base is the caller's client; it is copied, never changed, and its
	// own CheckRedirect is asked after the rules here. nil: a new client.
	Base *http.Client
	// Transport, when set, replaces Base's (an address-guarded dialer).
	Transport http.RoundTripper
	// Timeout bounds each exchange when Base has no timeout of its own;
	// 0 leaves it unbounded (long-lived streams bound themselves).
	Timeout time.Duration
	// Redirects is the redirect rule (default NoRedirects).
	Redirects Redirects
	// MaxRedirects is how many redirects one request follows: 0 means
	// DefaultMaxRedirects, a negative number none.
	MaxRedirects int
	// MaxRedirectsName names the caller's setting behind MaxRedirects in
	// a refusal ("MaxRedirects"); "" names none.
	MaxRedirectsName string
	// Check vets each redirect target under CheckedRedirects (https only, no
	// private address, ...); nil accepts every one.
	Check func(*url.URL) error
	// Refuse, when set, is the error of a redirect to another origin that
	// the same-origin rules do not follow; nil returns the redirect
	// response as it is, for the caller to report.
	Refuse func(target *url.URL) error
}

// Client returns the client o describes.
func (o Outbound) Client() *http.Client {
	var c http.Client
	if o.Base != nil {
		c = *o.Base
	}
	if o.Transport != nil {
		c.Transport = o.Transport
	}
	if c.Timeout == 0 {
		c.Timeout = o.Timeout
	}
	max := o.MaxRedirects
	switch {
	case max == 0:
		max = DefaultMaxRedirects
	case max < 0:
		max = 0
	}
	next := c.CheckRedirect
	c.CheckRedirect = func(req *http.Request, via []*http.Request) error {
		first := via[0]
		same := SameOrigin(first.URL, req.URL)
		switch o.Redirects {
		case NoRedirects:
			return http.ErrUseLastResponse
		case SameOriginNoPOSTRedirects:
			if first.Method == http.MethodPost {
				return http.ErrUseLastResponse
			}
			fallthrough
		case SameOriginRedirects:
			if !same {
				if o.Refuse != nil {
					return o.Refuse(req.URL)
				}
				return http.ErrUseLastResponse
			}
		case CheckedRedirects:
			if o.Check != nil {
				if err := o.Check(req.URL); err != nil {
					return err
				}
			}
		}
		// via holds the requests made so far: req is the len(via)-th
		// redirect.
		if len(via) > max {
			setting := ""
			if o.MaxRedirectsName != "" {
				setting = " (" + o.MaxRedirectsName + ")"
			}
			if max == 0 {
				return errors.New("redirects are not followed" + setting)
			}
			return fmt.Errorf("stopped after %d redirects%s", max, setting)
		}
		if !same {
			for _, h := range []string{"Authorization", "Cookie", "Proxy-Authorization"} {
				req.Header.Del(h)
			}
		}
		if next != nil {
			return next(req, via)
		}
		return nil
	}
	return &c
}

// TooLongError is a body longer than the bound it was read under.
type TooLongError struct{ Max int64 }

func (e *TooLongError) Error() string {
	return fmt.Sprintf("longer than the limit of %d bytes", e.Max)
}

// ReadLimited reads all of r if it holds at most max bytes; a longer body
// is a *TooLongError, after reading max+1 bytes and no more.
func ReadLimited(r io.Reader, max int64) ([]byte, error) {
	data, err := io.ReadAll(io.LimitReader(r, max+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > max {
		return nil, &TooLongError{max}
	}
	return data, nil
}
