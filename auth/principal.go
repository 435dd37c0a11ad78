// Package auth carries the identity of the caller of an MCP request: an
// http.Handler in front of the Streamable HTTP handler authenticates the
// HTTP request and puts a Principal on its context with WithPrincipal;
// tool and method handlers read it with PrincipalFrom, in both protocol
// eras, and a 2025-era session stays bound to the principal that opened it.
//
// It also makes an MCP server an OAuth 2.1 resource server, as MCP's
// authorization specification asks: Require is the bearer-token middleware
// (RFC 6750: 401 with a WWW-Authenticate challenge naming the Protected
// Resource Metadata, 403 insufficient_scope, tokens from the Authorization
// header only); a TokenVerifier checks the token, either a JWTVerifier
// (JWT access tokens, RFC 9068, keys from the issuer's JWKS found through
// RFC 8414 metadata) or an IntrospectionVerifier (RFC 7662); and
// MetadataHandler serves the RFC 9728 Protected Resource Metadata that tells
// clients which authorization server to use. Tokens must be issued for this
// server: their audience is its canonical URL (RFC 8707).
package auth

import "context"

// Principal is an authenticated caller.
type Principal struct {
	// Issuer names who vouches for the subject (a token issuer, or a
	// gateway's own key store); "" for a single source of identities.
	Issuer string
	// Subject identifies the caller within Issuer.
	Subject string
	// Scopes are the permissions granted to this request.
	Scopes []string
	// Claims are further attributes (token claims, roles), as given.
	Claims map[string]any
}

// Key identifies the principal for binding sessions: two principals with
// the same issuer and subject are the same caller, whatever their scopes.
// An absent principal (nil) has the key "".
func (p *Principal) Key() string {
	if p == nil {
		return ""
	}
	return p.Issuer + "\x00" + p.Subject
}

// HasScope reports whether the principal was granted scope.
func (p *Principal) HasScope(scope string) bool {
	if p == nil {
		return false
	}
	for _, s := range p.Scopes {
		if s == scope {
			return true
		}
	}
	return false
}

type principalKey struct{}

// WithPrincipal returns ctx carrying p.
func WithPrincipal(ctx context.Context, p *Principal) context.Context {
	return context.WithValue(ctx, principalKey{}, p)
}

// PrincipalFrom returns the principal ctx carries, or nil for an
// unauthenticated request.
func PrincipalFrom(ctx context.Context) *Principal {
	p, _ := ctx.Value(principalKey{}).(*Principal)
	return p
}
