package auth

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/toolwire/toolwire/internal/wirejson"
)

// Defaults for IntrospectionVerifier's cache.
const (
	// DefaultIntrospectionTTL is how long an active token's introspection
	// answer is reused (never past the token's exp).
	DefaultIntrospectionTTL = 30 * time.Second
	// DefaultInactiveTTL is how long an inactive token's answer is reused.
	DefaultInactiveTTL = 5 * time.Second
	// DefaultIntrospectionCacheSize is how many answers are kept (least
	// recently used dropped first).
	DefaultIntrospectionCacheSize = 10000
)

// IntrospectionVerifier verifies opaque (or any) access tokens by asking
// the authorization server's RFC 7662 introspection endpoint, authenticating
// as a client with HTTP Basic (WithClientCredentials).
//
// A token is accepted when the answer says "active": true and has a "sub";
// when the answer carries "iss" it must be the issuer of WithIssuer (if
// set), when it carries "aud" that must contain the audience, and "exp" and
// "nbf" are checked like a JWT's, with the clock skew. Answers are cached by
// a hash of the token (never the token itself): an active one for
// Limits.IntrospectionTTL (default 30 s) but never past its exp, an inactive
// one for Limits.InactiveTTL (default 5 s), at most Limits.MaxIntrospections
// of them. A failed request is not cached and reads as ErrUnavailable.
type IntrospectionVerifier struct {
	endpoint string
	audience string
	cfg      introspectionConfig

	cache *tokenCache

	mu    sync.Mutex
	calls int // requests made, for tests
}

type introspectionConfig struct {
	fetchConfig
	clientID, clientSecret string
	issuer                 string
	ttl, inactiveTTL       time.Duration
	size                   int
}

// IntrospectionOption configures NewIntrospectionVerifier. The
// VerifierOption values are IntrospectionOptions too.
type IntrospectionOption interface{ applyIntrospection(*introspectionConfig) }

type introspectionOption func(*introspectionConfig)

func (f introspectionOption) applyIntrospection(c *introspectionConfig) { f(c) }

// WithClientCredentials sets the client id and secret the verifier
// authenticates with (HTTP Basic, RFC 6749 section 2.3.1).
func WithClientCredentials(id, secret string) IntrospectionOption {
	return introspectionOption(func(c *introspectionConfig) { c.clientID, c.clientSecret = id, secret })
}

// WithIssuer sets the issuer an answer's "iss", when present, must equal.
func WithIssuer(iss string) IntrospectionOption {
	return introspectionOption(func(c *introspectionConfig) { c.issuer = iss })
}

// NewIntrospectionVerifier returns a verifier asking endpoint (https, or
// http on a loopback host) about tokens meant for audience.
func NewIntrospectionVerifier(endpoint, audience string, opts ...IntrospectionOption) (*IntrospectionVerifier, error) {
	cfg := introspectionConfig{fetchConfig: fetchConfig{skew: DefaultClockSkew}, ttl: DefaultIntrospectionTTL, inactiveTTL: DefaultInactiveTTL}
	for _, o := range opts {
		if o != nil {
			o.applyIntrospection(&cfg)
		}
	}
	cfg.defaults()
	if cfg.ttl < 0 {
		cfg.ttl = DefaultIntrospectionTTL
	}
	if cfg.inactiveTTL < 0 {
		cfg.inactiveTTL = DefaultInactiveTTL
	}
	if cfg.size < 1 {
		cfg.size = DefaultIntrospectionCacheSize
	}
	if err := checkFetchURL(endpoint); err != nil {
		return nil, fmt.Errorf("auth: introspection endpoint %v", err)
	}
	if audience == "" {
		return nil, errors.New("auth: the audience is required")
	}
	return &IntrospectionVerifier{endpoint: endpoint, audience: audience, cfg: cfg,
		cache: newTokenCache(cfg.size)}, nil
}

// Verify introspects token, or reuses a cached answer about it.
func (v *IntrospectionVerifier) Verify(ctx context.Context, token string) (*Principal, error) {
	key := tokenKey(token)
	now := v.cfg.now()
	if p, err, ok := v.cache.get(key, now); ok {
		return p, err
	}
	v.mu.Lock()
	v.calls++
	v.mu.Unlock()
	ans, err := v.introspect(ctx, token)
	if err != nil {
		return nil, unavailable("the introspection endpoint could not be asked", err)
	}
	now = v.cfg.now()
	p, exp, err := v.judge(ans, now)
	var ttl time.Duration
	switch {
	case err == nil:
		ttl = min(v.cfg.ttl, exp.Sub(now))
	case errors.Is(err, ErrInvalidToken):
		ttl = v.cfg.inactiveTTL
	}
	if ttl > 0 {
		v.cache.put(key, p, err, now.Add(ttl))
	}
	return p, err
}

// clonePrincipal copies p, so that a handler changing its request's
// principal changes no cached one.
func clonePrincipal(p *Principal) *Principal {
	if p == nil {
		return nil
	}
	c := *p
	c.Scopes, c.Claims = slices.Clone(p.Scopes), maps.Clone(p.Claims)
	return &c
}

// introspection is an RFC 7662 answer.
type introspection struct {
	Active   *bool           `json:"active"`
	Scope    *string         `json:"scope"`
	ClientID string          `json:"client_id"`
	Username string          `json:"username"`
	Exp      *float64        `json:"exp"`
	Nbf      *float64        `json:"nbf"`
	Iat      *float64        `json:"iat"`
	Sub      string          `json:"sub"`
	Aud      json.RawMessage `json:"aud"`
	Iss      *string         `json:"iss"`
	raw      map[string]any
}

func (v *IntrospectionVerifier) introspect(ctx context.Context, token string) (*introspection, error) {
	form := url.Values{"token": {token}, "token_type_hint": {"access_token"}}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, v.endpoint, strings.NewReader(form.Encode()))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Accept", "application/json")
	if v.cfg.clientID != "" {
		req.SetBasicAuth(url.QueryEscape(v.cfg.clientID), url.QueryEscape(v.cfg.clientSecret))
	}
	var raw map[string]any
	var body json.RawMessage
	if err := v.cfg.doJSON(req, &body); err != nil {
		return nil, err
	}
	var ans introspection
	if err := wirejson.Unmarshal(body, &ans); err != nil {
		return nil, fmt.Errorf("malformed introspection answer: %v", err)
	}
	if err := wirejson.Unmarshal(body, &raw); err != nil {
		return nil, fmt.Errorf("malformed introspection answer: %v", err)
	}
	if ans.Active == nil {
		return nil, errors.New(`the introspection answer has no "active" member`)
	}
	ans.raw = raw
	return &ans, nil
}

// judge applies the checks to an answer and returns the principal and the
// time its acceptance ends (its exp, or far away).
func (v *IntrospectionVerifier) judge(ans *introspection, now time.Time) (*Principal, time.Time, error) {
	never := now.Add(100 * 365 * 24 * time.Hour)
	if !*ans.Active {
		return nil, never, invalidToken("the token is not active")
	}
	if ans.Iss != nil && v.cfg.issuer != "" && *ans.Iss != v.cfg.issuer {
		return nil, never, invalidToken("the token was issued by another issuer")
	}
	if len(ans.Aud) > 0 && string(ans.Aud) != "null" {
		var auds []string
		var one string
		if wirejson.Unmarshal(ans.Aud, &one) == nil {
			auds = []string{one}
		} else if wirejson.Unmarshal(ans.Aud, &auds) != nil {
			return nil, never, invalidToken("the token's aud is malformed")
		}
		if !slices.Contains(auds, v.audience) {
			return nil, never, invalidToken("the token is not meant for this resource (aud)")
		}
	}
	if ans.Sub == "" {
		return nil, never, invalidToken("the token has no subject (sub)")
	}
	exp := never
	if ans.Exp != nil {
		exp = unixTime(*ans.Exp)
	}
	var nbf, iat *time.Time
	if ans.Nbf != nil {
		t := unixTime(*ans.Nbf)
		nbf = &t
	}
	if ans.Iat != nil {
		t := unixTime(*ans.Iat)
		iat = &t
	}
	if err := checkTimes(now, v.cfg.skew, exp, nbf, iat); err != nil {
		return nil, never, err
	}
	iss := v.cfg.issuer
	if ans.Iss != nil {
		iss = *ans.Iss
	}
	var scopes []string
	if ans.Scope != nil {
		scopes = strings.Fields(*ans.Scope)
	}
	return &Principal{Issuer: iss, Subject: ans.Sub, Scopes: scopes, Claims: ans.raw}, exp, nil
}

func unixTime(f float64) time.Time {
	sec := int64(f)
	return time.Unix(sec, int64((f-float64(sec))*1e9))
}
