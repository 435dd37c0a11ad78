package oauth

import (
	"context"
	"net/url"
	"strings"

	"github.com/toolwire/toolwire/auth"
)

// Grant obtains a token at the token endpoint without the user's browser:
// ClientCredentials here, and other grants (RFC 7523 jwt-bearer, an
// identity provider's token exchange) elsewhere. Set Config.Grant to use
// one in place of the authorization code flow.
//
// The Authorizer calls Token after discovery and registration, with te
// ready to authenticate the client, add DPoP and parse the response (see
// TokenEndpoint.Request), and with what the token is for in p. The grant
// builds its form (grant_type and its parameters, resource and scope from
// p) and returns te.Request's token; the Authorizer then binds it to
// p.Resource and stores it. A grant that must first reach another server
// (an identity provider) copies te, changing URL, Issuer and Client, to
// keep the same guarded client and DPoP key.
type Grant interface {
	Token(ctx context.Context, te *TokenEndpoint, p GrantParams) (*Token, error)
}

// GrantParams is what a token is requested for.
type GrantParams struct {
	// Resource is the RFC 8707 resource parameter: the MCP server's
	// resource identifier exactly as its Protected Resource Metadata
	// publishes it (the canonical endpoint URI when it publishes none).
	Resource string
	Scopes   []string                 // the scopes to request; none: omit scope
	Metadata *auth.AuthServerMetadata // the authorization server's
}

// ClientCredentials is the OAuth client credentials grant (machine to
// machine, MCP's client-credentials extension): the client authenticates
// with client_secret_basic, client_secret_post or private_key_jwt (set
// Config.ClientID and ClientSecret, or ClientKey).
type ClientCredentials struct{}

// Token requests a token with grant_type=client_credentials.
func (ClientCredentials) Token(ctx context.Context, te *TokenEndpoint, p GrantParams) (*Token, error) {
	form := url.Values{"grant_type": {"client_credentials"}}
	if p.Resource != "" {
		form.Set("resource", p.Resource)
	}
	if len(p.Scopes) > 0 {
		form.Set("scope", strings.Join(p.Scopes, " "))
	}
	return te.Request(ctx, form)
}
