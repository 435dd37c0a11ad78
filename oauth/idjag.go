package oauth

import (
	"context"
	"fmt"
	"strings"
)

// RFC 8693 token exchange, and the token types of enterprise-managed
// authorization.
const (
	GrantTypeTokenExchange = "urn:ietf:params:oauth:grant-type:token-exchange"
	// TokenTypeIDJAG is the Identity Assertion JWT Authorization Grant
	// (draft-ietf-oauth-identity-assertion-authz-grant): a JWT the
	// enterprise IdP signs (typ oauth-id-jag+jwt) naming the user (sub),
	// the client (client_id), the authorization server (aud) and the
	// resource.
	TokenTypeIDJAG = "urn:ietf:params:oauth:token-type:id-jag"
	// TokenTypeIDToken is an OpenID Connect ID token as subject token.
	TokenTypeIDToken = "urn:ietf:params:oauth:token-type:id_token"
	// TokenTypeSAML2 is a SAML 2.0 assertion as subject token.
	TokenTypeSAML2 = "urn:ietf:params:oauth:token-type:saml2"
)

// IDJAGGrant is enterprise-managed authorization (SEP-990, the
// io.modelcontextprotocol/enterprise-managed-authorization extension), a
// Grant in two requests:
//
//  1. At the enterprise IdP's token endpoint, an RFC 8693 token exchange
//     of the user's identity assertion (the ID token of the SSO login) for
//     an ID-JAG:
//
//     grant_type=urn:ietf:params:oauth:grant-type:token-exchange
//     &requested_token_type=urn:ietf:params:oauth:token-type:id-jag
//     &subject_token=<ID token>&subject_token_type=...:id_token
//     &audience=<the authorization server's issuer>
//     &resource=<the MCP server's resource>[&scope=...]
//     + the client's authentication at the IdP (IdPClient)
//
//     The answer must say issued_token_type ...:id-jag (token_type N_A).
//
//  2. At the MCP server's authorization server, the JWTBearerGrant with
//     the ID-JAG as assertion, the client authenticating as the
//     TokenEndpoint says (client_secret_basic in the conformance suite;
//     the ID-JAG's client_id claim must be this client's id there).
//
// The IdP is reached with te.HTTP, the same guarded client.
type IDJAGGrant struct {
	IdPTokenEndpoint string
	// IdPClient is the client's registration at the IdP (often public:
	// AuthMethod none with the IdP's client_id).
	IdPClient ClientInfo
	// SubjectToken returns the user's identity assertion.
	SubjectToken AssertionSource
	// SubjectTokenType defaults to TokenTypeIDToken.
	SubjectTokenType string
	// Audience overrides the ID-JAG's audience; "" means the authorization
	// server's issuer (p.Metadata.Issuer, else te.Issuer).
	Audience string
}

// Token runs the exchange, then the jwt-bearer grant.
func (g IDJAGGrant) Token(ctx context.Context, te *TokenEndpoint, p GrantParams) (*Token, error) {
	jag, err := g.Exchange(ctx, te, p)
	if err != nil {
		return nil, err
	}
	return JWTBearerGrant{Assertion: StaticAssertion(jag)}.Token(ctx, te, p)
}

// Exchange runs the first step alone and returns the ID-JAG.
func (g IDJAGGrant) Exchange(ctx context.Context, te *TokenEndpoint, p GrantParams) (string, error) {
	if g.SubjectToken == nil {
		return "", &Error{Op: "token exchange", Description: "no subject token source"}
	}
	aud := g.Audience
	if aud == "" && p.Metadata != nil {
		aud = p.Metadata.Issuer
	}
	if aud == "" {
		aud = te.Issuer
	}
	if aud == "" || p.Resource == "" {
		return "", &Error{Op: "token exchange", Description: "an ID-JAG needs the authorization server's issuer and the resource"}
	}
	subject, err := g.SubjectToken(ctx)
	if err != nil {
		return "", err
	}
	stt := g.SubjectTokenType
	if stt == "" {
		stt = TokenTypeIDToken
	}
	x := TokenExchange{
		Endpoint:           g.IdPTokenEndpoint,
		Client:             g.IdPClient,
		SubjectToken:       subject,
		SubjectTokenType:   stt,
		RequestedTokenType: TokenTypeIDJAG,
		Audience:           aud,
		Resource:           p.Resource,
		MaxResponseBytes:   te.MaxResponseBytes,
	}
	if len(p.Scopes) > 0 {
		x.Scope = strings.Join(p.Scopes, " ")
	}
	t, err := x.Exchange(ctx, te.HTTP)
	if err != nil {
		return "", err
	}
	if t.IssuedTokenType != TokenTypeIDJAG {
		return "", &Error{Op: "token exchange", Description: fmt.Sprintf("the IdP issued a %q, not an ID-JAG", exchangeText(t.IssuedTokenType, 80, nil))}
	}
	if _, err := checkAssertion(t.AccessToken, "the IdP's answer"); err != nil {
		return "", err
	}
	return t.AccessToken, nil
}
