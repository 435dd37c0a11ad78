package auth

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"time"

	"github.com/toolwire/toolwire/internal/httpguard"
)

// TokenVerifier checks an OAuth 2.1 bearer access token presented to this
// resource server and returns the caller it stands for.
//
// Verify returns a *TokenError when it cannot accept the token: errors.Is
// with ErrInvalidToken means the token itself is bad (malformed, badly
// signed, expired, for another audience or issuer, revoked) and the request
// gets 401 with error="invalid_token"; errors.Is with ErrUnavailable means the
// verifier could not decide (the issuer's JWKS or introspection endpoint is
// unreachable or answers nonsense) and the request gets 503, since the
// client's token may well be good. Any other error is treated as
// ErrUnavailable. The returned principal has a non-empty Subject.
//
// JWTVerifier and IntrospectionVerifier implement it; a TokenVerifierFunc
// adapts a function.
type TokenVerifier interface {
	Verify(ctx context.Context, token string) (*Principal, error)
}

// TokenVerifierFunc adapts a function to TokenVerifier.
type TokenVerifierFunc func(ctx context.Context, token string) (*Principal, error)

// Verify calls f.
func (f TokenVerifierFunc) Verify(ctx context.Context, token string) (*Principal, error) {
	return f(ctx, token)
}

// The classes of TokenError, for errors.Is.
var (
	// ErrInvalidToken: the token is not acceptable (RFC 6750 invalid_token).
	ErrInvalidToken = errors.New("invalid token")
	// ErrUnavailable: the token could not be checked for now.
	ErrUnavailable = errors.New("token verification unavailable")
)

// TokenError is why a verifier refused a token. Its message never contains
// the token.
type TokenError struct {
	// Kind is ErrInvalidToken or ErrUnavailable.
	Kind error
	// Description is a short human-readable reason, safe to show the client
	// (it becomes error_description for an invalid token).
	Description string
	// Err is the underlying error, if any (for logs; not shown to clients).
	Err error
}

func (e *TokenError) Error() string {
	s := e.Kind.Error() + ": " + e.Description
	if e.Err != nil {
		s += ": " + e.Err.Error()
	}
	return s
}

// Is reports whether target is the error's Kind.
func (e *TokenError) Is(target error) bool { return target == e.Kind }

// Unwrap returns the underlying error.
func (e *TokenError) Unwrap() error { return e.Err }

func invalidToken(desc string) error {
	return &TokenError{Kind: ErrInvalidToken, Description: desc}
}

func unavailable(desc string, err error) error {
	return &TokenError{Kind: ErrUnavailable, Description: desc, Err: err}
}

// Defaults shared by JWTVerifier and IntrospectionVerifier.
const (
	// DefaultClockSkew is how far the issuer's clock and ours may disagree
	// when checking exp, nbf and iat.
	DefaultClockSkew = 60 * time.Second
	// DefaultMaxResponseBytes bounds an authorization server's metadata,
	// JWKS or introspection response.
	DefaultMaxResponseBytes = 1 << 20
	// DefaultFetchTimeout bounds one request to the authorization server.
	DefaultFetchTimeout = 10 * time.Second
)

// fetchConfig is what both verifiers share.
type fetchConfig struct {
	client   *http.Client
	now      func() time.Time
	skew     time.Duration
	maxBytes int64
	timeout  time.Duration
}

// maxFetchRedirects is how many redirects a fetch from the authorization
// server follows.
const maxFetchRedirects = 4

func (c *fetchConfig) defaults() {
	if c.now == nil {
		c.now = time.Now
	}
	if c.skew < 0 {
		c.skew = DefaultClockSkew
	}
	if c.maxBytes <= 0 {
		c.maxBytes = DefaultMaxResponseBytes
	}
	if c.timeout <= 0 {
		c.timeout = DefaultFetchTimeout
	}
	// A redirect must keep to the https (or loopback) rule too.
	c.client = httpguard.Outbound{
		Base: c.client, Timeout: c.timeout, Redirects: httpguard.CheckedRedirects, MaxRedirects: maxFetchRedirects,
		Check: func(u *url.URL) error { return checkFetchURL(u.String()) },
	}.Client()
}

// VerifierOption configures both NewJWTVerifier and
// NewIntrospectionVerifier.
type VerifierOption interface {
	JWTOption
	IntrospectionOption
}

type commonOption func(*fetchConfig)

func (f commonOption) applyJWT(c *jwtConfig)                     { f(&c.fetchConfig) }
func (f commonOption) applyIntrospection(c *introspectionConfig) { f(&c.fetchConfig) }

// WithHTTPClient sets the client used to reach the authorization server
// (default: a plain http.Client). Its redirect policy is replaced by one that
// keeps to the https rule.
func WithHTTPClient(c *http.Client) VerifierOption {
	return commonOption(func(fc *fetchConfig) { fc.client = c })
}

// WithClock sets the verifier's clock (default time.Now); for tests.
func WithClock(now func() time.Time) VerifierOption {
	return commonOption(func(fc *fetchConfig) { fc.now = now })
}
