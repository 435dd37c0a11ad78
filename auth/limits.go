package auth

import (
	"time"

	"github.com/toolwire/toolwire/internal/limits"
)

// Limits are the numbers that bound a token verifier's work (its fetches
// from the authorization server, the clock skew it allows, its caches) and
// what Require reads of a request. A zero field means the default named
// beside it (or, after an earlier WithLimits, leaves what that one set);
// what a negative value means is said per field. Names follow one rule:
// MaxX is an upper bound on X and MinX a lower one, XTimeout a bound on how
// long X may take, XTTL a lifetime, and a size in bytes ends in Bytes.
type Limits struct {
	// FetchTimeout bounds each request to the authorization server
	// (DefaultFetchTimeout, 10 s). Negative means the default.
	FetchTimeout time.Duration
	// MaxResponseBytes bounds every response read from the authorization
	// server: metadata, JWKS, introspection (DefaultMaxResponseBytes,
	// 1 MiB). A larger one is an error (ErrUnavailable). Negative means
	// the default.
	MaxResponseBytes int64
	// ClockSkew is how far exp, nbf and iat may be off
	// (DefaultClockSkew, 60 s). Negative allows no skew.
	ClockSkew time.Duration

	// MinJWKSRefreshInterval is the least time between two fetches of the
	// JWKS (DefaultJWKSRefreshInterval, 30 s): a token with an unknown kid
	// fetches the set again only when the last fetch is at least this
	// old, and is refused otherwise. Negative means the default.
	MinJWKSRefreshInterval time.Duration
	// MaxJWKSAge is how long fetched keys are used before the set is
	// fetched again (DefaultJWKSMaxAge, one hour). Negative means the
	// default.
	MaxJWKSAge time.Duration
	// VerifiedTokenTTL is how long a token that verified is taken again
	// on its next requests without repeating the signature and claim
	// checks (DefaultVerifiedTokenTTL, never past the token's exp), and
	// MaxVerifiedTokens how many such tokens are kept
	// (DefaultVerifiedTokenCacheSize), keyed by a hash of the token. A key
	// withdrawn from the JWKS stops a cached token within the TTL; refused
	// tokens are never cached. Negative in either turns the cache off.
	VerifiedTokenTTL  time.Duration
	MaxVerifiedTokens int

	// IntrospectionTTL is how long an active token's introspection answer
	// is reused (DefaultIntrospectionTTL, 30 s; never past the token's
	// exp), InactiveTTL how long an inactive token's is
	// (DefaultInactiveTTL, 5 s). Negative turns that caching off.
	IntrospectionTTL, InactiveTTL time.Duration
	// MaxIntrospections bounds the cached introspection answers
	// (DefaultIntrospectionCacheSize).
	// Negative means the default.
	MaxIntrospections int

	// MaxPeekBytes bounds the body Require reads for WithScopesFor
	// (DefaultMaxPeekBytes, 4 MiB). Negative means the default.
	MaxPeekBytes int64
}

// LimitsOption sets Limits. It is a VerifierOption (for NewJWTVerifier and
// NewIntrospectionVerifier, each taking its own fields) and a RequireOption
// (MaxPeekBytes); one value may be passed to all.
type LimitsOption struct{ l Limits }

// WithLimits sets a verifier's or Require's limits. Its zero fields leave
// the value an earlier WithLimits set, or the default, so limits may be
// given in several options.
func WithLimits(l Limits) LimitsOption { return LimitsOption{l} }

// offOr maps a limit whose negative value means "none" onto a setting where
// zero means none.
func offOr(d time.Duration) time.Duration {
	if d < 0 {
		return -1
	}
	return d
}

func (o LimitsOption) applyFetch(c *fetchConfig) {
	limits.SetPositive(&c.timeout, o.l.FetchTimeout)
	limits.SetPositive(&c.maxBytes, o.l.MaxResponseBytes)
	if o.l.ClockSkew != 0 {
		c.skew = max(o.l.ClockSkew, 0)
	}
}

func (o LimitsOption) applyJWT(c *jwtConfig) {
	o.applyFetch(&c.fetchConfig)
	limits.SetPositive(&c.refreshInterval, o.l.MinJWKSRefreshInterval)
	limits.SetPositive(&c.maxAge, o.l.MaxJWKSAge)
	limits.Set(&c.verifiedTTL, offOr(o.l.VerifiedTokenTTL))
	limits.Set(&c.verifiedSize, o.l.MaxVerifiedTokens)
}

func (o LimitsOption) applyIntrospection(c *introspectionConfig) {
	o.applyFetch(&c.fetchConfig)
	if o.l.IntrospectionTTL != 0 {
		c.ttl = max(o.l.IntrospectionTTL, 0)
	}
	if o.l.InactiveTTL != 0 {
		c.inactiveTTL = max(o.l.InactiveTTL, 0)
	}
	limits.SetPositive(&c.size, o.l.MaxIntrospections)
}

func (o LimitsOption) applyRequire(c *requireConfig) {
	limits.SetPositive(&c.maxPeek, o.l.MaxPeekBytes)
}
