package oauth

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"net/url"
	"strings"

	"github.com/toolwire/toolwire/auth"
	"github.com/toolwire/toolwire/internal/httpguard"
)

// ErrIssMismatch: the authorization response's iss (RFC 9207) is not the
// authorization server's issuer, or is missing when the server advertises
// it. The code is not used.
var ErrIssMismatch = errors.New("the authorization response's iss does not identify the authorization server")

// pkce is a code verifier (RFC 7636: 32 random bytes, 43 characters) and
// its S256 challenge.
type pkce struct{ verifier, challenge string }

func newPKCE() pkce {
	v := randomString(32)
	sum := sha256.Sum256([]byte(v))
	return pkce{verifier: v, challenge: base64.RawURLEncoding.EncodeToString(sum[:])}
}

// authorizationURL builds the authorization request: the endpoint's own
// query kept, response_type=code, the client, the redirect URI, the
// scopes (omitted when none), state, the PKCE S256 challenge, the resource
// and, with DPoP, dpop_jkt.
func authorizationURL(md *auth.AuthServerMetadata, c ClientInfo, redirectURI string, scopes []string, state string, pk pkce, resource string, dpop DPoPSigner) (string, error) {
	u, err := url.Parse(md.AuthorizationEndpoint)
	if err != nil {
		return "", err
	}
	q := u.Query()
	q.Set("response_type", "code")
	q.Set("client_id", c.ID)
	q.Set("redirect_uri", redirectURI)
	if len(scopes) > 0 {
		q.Set("scope", strings.Join(scopes, " "))
	}
	q.Set("state", state)
	q.Set("code_challenge", pk.challenge)
	q.Set("code_challenge_method", "S256")
	if resource != "" {
		q.Set("resource", resource)
	}
	if dpop != nil {
		q.Set("dpop_jkt", dpop.Thumbprint())
	}
	u.RawQuery = q.Encode()
	return u.String(), nil
}

// checkCallback reads the authorization response the user agent ended
// on: the redirect URI's, state as sent, iss per RFC 9207 (compared as
// strings, no normalization: required when the server advertises it,
// compared whenever present), and returns the code.
func checkCallback(cb *url.URL, redirectURI, state string, md *auth.AuthServerMetadata) (string, error) {
	if cb == nil {
		return "", &Error{Op: "authorization", Description: "no authorization response"}
	}
	ru, err := url.Parse(redirectURI)
	if err != nil || !httpguard.SameOrigin(ru, cb) || strings.TrimSuffix(ru.EscapedPath(), "/") != strings.TrimSuffix(cb.EscapedPath(), "/") {
		return "", &Error{Op: "authorization", Description: "the authorization response did not come to the redirect URI"}
	}
	q := cb.Query()
	if got := q.Get("state"); subtle.ConstantTimeCompare([]byte(got), []byte(state)) != 1 {
		return "", &Error{Op: "authorization", Description: "the authorization response's state does not match the request's"}
	}
	iss, hasIss := q["iss"]
	switch {
	case hasIss && (len(iss) != 1 || iss[0] != md.Issuer):
		return "", fmt.Errorf("%w: %q is not %q", ErrIssMismatch, truncate(strings.Join(iss, ","), 200), md.Issuer)
	case !hasIss && md.AuthorizationResponseIssParameterSupported:
		return "", fmt.Errorf("%w: the server advertises iss but the response has none", ErrIssMismatch)
	}
	if e := q.Get("error"); e != "" {
		return "", &Error{Op: "authorization", Code: truncate(e, 100), Description: truncate(q.Get("error_description"), 300)}
	}
	code := q.Get("code")
	if code == "" {
		return "", &Error{Op: "authorization", Description: "the authorization response has no code"}
	}
	return code, nil
}

// authorizationCode runs the authorization code flow with PKCE through the
// user agent and exchanges the code.
func (a *Authorizer) authorizationCode(ctx context.Context, te *TokenEndpoint, md *auth.AuthServerMetadata, resource string, scopes []string) (*Token, error) {
	if md.AuthorizationEndpoint == "" {
		return nil, fmt.Errorf("oauth: the authorization server %s has no authorization endpoint", md.Issuer)
	}
	if !md.Fallback && !supports(md.CodeChallengeMethodsSupported, "S256") {
		return nil, fmt.Errorf("oauth: %w (%s)", ErrNoPKCE, md.Issuer)
	}
	if a.cfg.UserAgent == nil {
		return nil, errors.New("oauth: authorization is needed but no UserAgent is configured")
	}
	if a.cfg.RedirectURI == "" {
		return nil, errors.New("oauth: authorization is needed but no RedirectURI is configured")
	}
	pk := newPKCE()
	state := randomString(32)
	authURL, err := authorizationURL(md, te.Client, a.cfg.RedirectURI, scopes, state, pk, resource, a.cfg.DPoP)
	if err != nil {
		return nil, err
	}
	ua := a.cfg.UserAgent
	if nr, ok := ua.(NoRedirectUserAgent); ok && nr.Client == nil {
		ua = NoRedirectUserAgent{Client: a.hc}
	}
	cb, err := ua.Authorize(ctx, authURL, a.cfg.RedirectURI)
	if err != nil {
		return nil, err
	}
	code, err := checkCallback(cb, a.cfg.RedirectURI, state, md)
	if err != nil {
		return nil, err
	}
	form := url.Values{
		"grant_type":    {"authorization_code"},
		"code":          {code},
		"redirect_uri":  {a.cfg.RedirectURI},
		"code_verifier": {pk.verifier},
	}
	if resource != "" {
		form.Set("resource", resource)
	}
	return te.Request(ctx, form)
}
