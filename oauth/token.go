package oauth

import (
	"fmt"
	"log/slog"
	"strings"
	"time"
)

// Token is what the Authorizer keeps for one resource: the access token,
// the refresh token, and what they are bound to. Its String, GoString and
// LogValue redact the secrets, so a Token printed or logged by mistake
// leaks nothing; the JSON form (for a TokenStore) has them all.
type Token struct {
	AccessToken  string    `json:"access_token"`
	TokenType    string    `json:"token_type"` // "Bearer" or "DPoP"
	RefreshToken string    `json:"refresh_token,omitempty"`
	Expiry       time.Time `json:"expiry,omitzero"` // zero: unknown
	// Scopes are those granted (the token response's scope), else those
	// requested.
	Scopes []string `json:"scopes,omitempty"`
	// Resource is the canonical resource URI the token was issued for (the
	// RFC 8707 resource parameter sent); the token is presented only to
	// URLs it covers.
	Resource string `json:"resource"`
	// Issuer is the authorization server that issued it.
	Issuer string `json:"issuer"`
	// Client is the client registration it was issued to (needed to
	// refresh it).
	Client ClientInfo `json:"client"`
}

// ClientInfo is a client's registration with one authorization server.
type ClientInfo struct {
	ID     string `json:"client_id"`
	Secret string `json:"client_secret,omitempty"`
	// AuthMethod is the token endpoint authentication method:
	// none, client_secret_basic, client_secret_post, private_key_jwt.
	AuthMethod string `json:"token_endpoint_auth_method,omitempty"`
	Issuer     string `json:"issuer"` // the authorization server it is registered with
	// Kind is how the registration came about: "preregistered", "cimd"
	// (a Client ID Metadata Document URL) or "dynamic" (RFC 7591).
	Kind string `json:"kind,omitempty"`
}

// String redacts the secrets.
func (t *Token) String() string {
	if t == nil {
		return "<nil token>"
	}
	return fmt.Sprintf("oauth.Token{type %s, access [redacted], refresh %s, expiry %s, scopes %q, resource %q, issuer %q}",
		t.TokenType, present(t.RefreshToken), t.Expiry.Format(time.RFC3339), t.Scopes, t.Resource, t.Issuer)
}

// GoString redacts the secrets (%#v).
func (t *Token) GoString() string { return t.String() }

// LogValue redacts the secrets in slog output.
func (t *Token) LogValue() slog.Value {
	if t == nil {
		return slog.StringValue("<nil token>")
	}
	return slog.GroupValue(
		slog.String("type", t.TokenType),
		slog.String("access_token", "[redacted]"),
		slog.String("refresh_token", present(t.RefreshToken)),
		slog.Time("expiry", t.Expiry),
		slog.String("resource", t.Resource),
		slog.String("issuer", t.Issuer),
	)
}

// String redacts the secret.
func (c ClientInfo) String() string {
	return fmt.Sprintf("oauth.ClientInfo{id %q, secret %s, method %s, issuer %q, kind %s}", c.ID, present(c.Secret), c.AuthMethod, c.Issuer, c.Kind)
}

// GoString redacts the secret.
func (c ClientInfo) GoString() string { return c.String() }

// LogValue redacts the secret in slog output (a JSON handler would
// otherwise marshal it).
func (c ClientInfo) LogValue() slog.Value {
	return slog.GroupValue(
		slog.String("client_id", c.ID),
		slog.String("client_secret", present(c.Secret)),
		slog.String("token_endpoint_auth_method", c.AuthMethod),
		slog.String("issuer", c.Issuer),
		slog.String("kind", c.Kind),
	)
}

func present(s string) string {
	if s == "" {
		return "none"
	}
	return "[redacted]"
}

// isDPoP says whether the token is DPoP-bound.
func (t *Token) isDPoP() bool { return strings.EqualFold(t.TokenType, "DPoP") }

// expired says whether the token has expired at now, with a minute's
// margin; a token without expiry never expires here (the server's 401
// says so).
func (t *Token) expired(now time.Time) bool {
	return !t.Expiry.IsZero() && !now.Before(t.Expiry.Add(-time.Minute))
}

// redact replaces every non-empty secret in s with [redacted].
func redact(s string, secrets ...string) string {
	for _, sec := range secrets {
		if len(sec) >= 4 {
			s = strings.ReplaceAll(s, sec, "[redacted]")
		}
	}
	return s
}
