package auth

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
)

// DefaultAlgorithms are the JWS algorithms a JWTVerifier accepts unless
// WithAlgorithms says otherwise. All are asymmetric: "none" and the HMAC
// algorithms are never accepted, so a token "signed" with the issuer's
// public key as an HMAC secret cannot pass.
func DefaultAlgorithms() []string { return slices.Clone(defaultAlgorithms) }

var defaultAlgorithms = []string{"RS256", "RS384", "RS512", "ES256", "ES384", "PS256", "EdDSA"}

// allowedAlgorithms are the algorithms WithAlgorithms may name.
var allowedAlgorithms = []string{"RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512", "EdDSA"}

// JWTVerifier verifies JWT access tokens (RFC 9068, RFC 7519) signed by one
// issuer with a key from its JSON Web Key Set.
//
// The JWKS is found through the issuer's metadata (RFC 8414
// /.well-known/oauth-authorization-server, then OpenID Connect
// /.well-known/openid-configuration), or given with WithJWKSURL; every URL
// must be https unless its host is loopback. Keys are cached: a token naming
// an unknown kid makes the verifier fetch the set again, at most once per
// Limits.MinJWKSRefreshInterval (default 30 s), so key rotation works and random
// kids cost the issuer little.
//
// A token is accepted when it is a JWS in compact form with one of the
// allowed algorithms (DefaultAlgorithms), a typ header of "at+jwt" or "JWT"
// (or none), a signature that verifies with a key of the issuer, an "iss"
// equal to the issuer, an "aud" containing the audience (this resource
// server's canonical URL, RFC 8707), an "exp" in the future, "nbf" and "iat"
// not in the future (each within the clock skew, default 60 s), and a "sub".
// The principal's scopes come from "scope" (space separated) or "scp" (an
// array, or a space-separated string).
type JWTVerifier struct {
	issuer   string
	audience string
	algs     []jose.SignatureAlgorithm
	cfg      jwtConfig
	keys     *keySet
	verified *tokenCache
}

type jwtConfig struct {
	fetchConfig
	jwksURL         string
	algs            []string
	refreshInterval time.Duration
	maxAge          time.Duration
	verifiedTTL     time.Duration
	verifiedSize    int
}

// Defaults for the JWTVerifier's cache of tokens it has verified.
const (
	// DefaultVerifiedTokenTTL is how long a verified token is taken again
	// without checking its signature and claims (never past its exp).
	DefaultVerifiedTokenTTL = time.Minute
	// DefaultVerifiedTokenCacheSize is how many verified tokens are kept
	// (least recently used dropped first).
	DefaultVerifiedTokenCacheSize = 10000
)

// JWTOption configures NewJWTVerifier. The VerifierOption values
// (WithHTTPClient, WithClock, WithLimits) are JWTOptions too.
type JWTOption interface{ applyJWT(*jwtConfig) }

type jwtOption func(*jwtConfig)

func (f jwtOption) applyJWT(c *jwtConfig) { f(c) }

// WithJWKSURL fetches the keys from u instead of discovering the JWKS from
// the issuer's metadata.
func WithJWKSURL(u string) JWTOption {
	return jwtOption(func(c *jwtConfig) { c.jwksURL = u })
}

// WithAlgorithms sets the accepted JWS algorithms (default
// DefaultAlgorithms). Only asymmetric algorithms may be named (RS256,
// RS384, RS512, PS256, PS384, PS512, ES256, ES384, ES512, EdDSA);
// NewJWTVerifier refuses any other. No algorithms means the default.
func WithAlgorithms(algs ...string) JWTOption {
	return jwtOption(func(c *jwtConfig) { c.algs = algs })
}

// NewJWTVerifier returns a verifier of tokens issued by issuer (the exact
// "iss" value, and the authorization server whose metadata names the JWKS)
// for audience (this resource server's canonical URL, e.g.
// "https://mcp.example.com/mcp"). Nothing is fetched until the first token
// is verified.
func NewJWTVerifier(issuer, audience string, opts ...JWTOption) (*JWTVerifier, error) {
	cfg := jwtConfig{fetchConfig: fetchConfig{skew: DefaultClockSkew}}
	for _, o := range opts {
		if o != nil {
			o.applyJWT(&cfg)
		}
	}
	cfg.defaults()
	if cfg.refreshInterval <= 0 {
		cfg.refreshInterval = DefaultJWKSRefreshInterval
	}
	if cfg.maxAge <= 0 {
		cfg.maxAge = DefaultJWKSMaxAge
	}
	if len(cfg.algs) == 0 {
		cfg.algs = defaultAlgorithms
	}
	if cfg.verifiedTTL == 0 {
		cfg.verifiedTTL = DefaultVerifiedTokenTTL
	}
	if cfg.verifiedSize == 0 {
		cfg.verifiedSize = DefaultVerifiedTokenCacheSize
	}
	if cfg.verifiedTTL < 0 {
		cfg.verifiedSize = -1
	}
	if issuer == "" {
		return nil, errors.New("auth: the issuer is required")
	}
	if audience == "" {
		return nil, errors.New("auth: the audience is required")
	}
	if cfg.jwksURL != "" {
		if err := checkFetchURL(cfg.jwksURL); err != nil {
			return nil, fmt.Errorf("auth: JWKS %v", err)
		}
	} else if err := checkFetchURL(issuer); err != nil {
		return nil, fmt.Errorf("auth: issuer %v", err)
	}
	v := &JWTVerifier{issuer: issuer, audience: audience, cfg: cfg, verified: newTokenCache(cfg.verifiedSize)}
	for _, a := range cfg.algs {
		if !slices.Contains(allowedAlgorithms, a) {
			return nil, fmt.Errorf("auth: algorithm %q is not allowed: want an asymmetric JWS algorithm (%s)", a, strings.Join(allowedAlgorithms, ", "))
		}
		v.algs = append(v.algs, jose.SignatureAlgorithm(a))
	}
	v.keys = &keySet{fc: &v.cfg.fetchConfig, issuer: issuer, jwksURL: cfg.jwksURL,
		minInterval: cfg.refreshInterval, maxAge: cfg.maxAge}
	return v, nil
}

// Verify checks token and returns its principal: Issuer and Subject from
// "iss" and "sub", Scopes, and every claim in Claims.
func (v *JWTVerifier) Verify(ctx context.Context, token string) (*Principal, error) {
	key := tokenKey(token)
	if p, _, ok := v.verified.get(key, v.cfg.now()); ok {
		return p, nil
	}
	p, exp, err := v.verify(ctx, token)
	if err != nil {
		return nil, err
	}
	if v.cfg.verifiedSize > 0 {
		until := v.cfg.now().Add(v.cfg.verifiedTTL)
		if exp.Before(until) {
			until = exp
		}
		v.verified.put(key, p, nil, until)
	}
	return p, nil
}

// verify checks token in full and returns its principal and expiry.
func (v *JWTVerifier) verify(ctx context.Context, token string) (*Principal, time.Time, error) {
	tok, err := jwt.ParseSigned(token, v.algs)
	if err != nil {
		return nil, time.Time{}, invalidToken("not a signed JWT with an accepted algorithm")
	}
	if len(tok.Headers) != 1 {
		return nil, time.Time{}, invalidToken("not a signed JWT")
	}
	h := tok.Headers[0]
	if typ, ok := h.ExtraHeaders[jose.HeaderType]; ok {
		s, _ := typ.(string)
		if !strings.EqualFold(s, "at+jwt") && !strings.EqualFold(s, "application/at+jwt") && !strings.EqualFold(s, "JWT") {
			return nil, time.Time{}, invalidToken("the token's typ is not at+jwt")
		}
	}
	keys, err := v.keys.lookup(ctx, h.KeyID, h.Algorithm)
	if err != nil {
		return nil, time.Time{}, err
	}
	var std jwt.Claims
	var raw map[string]any
	verified := false
	for _, k := range keys {
		std, raw = jwt.Claims{}, nil
		if err := tok.Claims(k.Key, &std, &raw); err == nil {
			verified = true
			break
		}
	}
	if !verified {
		return nil, time.Time{}, invalidToken("the token's signature does not verify, or its claims are malformed")
	}
	if err := v.checkClaims(&std); err != nil {
		return nil, time.Time{}, err
	}
	scopes, err := scopesOf(raw)
	if err != nil {
		return nil, time.Time{}, err
	}
	return &Principal{Issuer: std.Issuer, Subject: std.Subject, Scopes: scopes, Claims: raw}, std.Expiry.Time(), nil
}

func (v *JWTVerifier) checkClaims(c *jwt.Claims) error {
	if c.Issuer != v.issuer {
		return invalidToken("the token was issued by another issuer")
	}
	if !slices.Contains([]string(c.Audience), v.audience) {
		return invalidToken("the token is not meant for this resource (aud)")
	}
	if c.Subject == "" {
		return invalidToken("the token has no subject (sub)")
	}
	if c.Expiry == nil {
		return invalidToken("the token has no expiry (exp)")
	}
	var nbf, iat *time.Time
	if c.NotBefore != nil {
		t := c.NotBefore.Time()
		nbf = &t
	}
	if c.IssuedAt != nil {
		t := c.IssuedAt.Time()
		iat = &t
	}
	return checkTimes(v.cfg.now(), v.cfg.skew, c.Expiry.Time(), nbf, iat)
}

// checkTimes applies exp, nbf and iat with the clock skew.
func checkTimes(now time.Time, skew time.Duration, exp time.Time, nbf, iat *time.Time) error {
	if !now.Before(exp.Add(skew)) {
		return invalidToken("the token has expired")
	}
	if nbf != nil && now.Add(skew).Before(*nbf) {
		return invalidToken("the token is not valid yet (nbf)")
	}
	if iat != nil && now.Add(skew).Before(*iat) {
		return invalidToken("the token was issued in the future (iat)")
	}
	return nil
}

// scopesOf reads "scope" (RFC 9068, space separated) or else "scp" (an
// array of strings, or a space-separated string).
func scopesOf(claims map[string]any) ([]string, error) {
	if s, ok := claims["scope"]; ok {
		str, isStr := s.(string)
		if !isStr {
			return nil, invalidToken("the token's scope claim is not a string")
		}
		return strings.Fields(str), nil
	}
	switch s := claims["scp"].(type) {
	case nil:
		return nil, nil
	case string:
		return strings.Fields(s), nil
	case []any:
		out := make([]string, 0, len(s))
		for _, e := range s {
			str, ok := e.(string)
			if !ok {
				return nil, invalidToken("the token's scp claim is not an array of strings")
			}
			out = append(out, str)
		}
		return out, nil
	}
	return nil, invalidToken("the token's scp claim is not an array of strings")
}
