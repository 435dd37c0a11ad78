package oauth

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/url"
	"os"
	"strings"
)

// GrantTypeJWTBearer is RFC 7523's grant type: a JWT presented as the
// authorization grant.
const GrantTypeJWTBearer = "urn:ietf:params:oauth:grant-type:jwt-bearer"

// maxAssertion bounds a JWT read from a file.
const maxAssertion = 64 << 10

// AssertionSource returns the JWT a grant presents: a workload's identity
// token (the platform's, renewed as it expires), or an ID-JAG. It is
// called once per grant, so a source that reads a file picks up a rotated
// token.
type AssertionSource func(ctx context.Context) (string, error)

// StaticAssertion is a source that always returns jwt.
func StaticAssertion(jwt string) AssertionSource {
	return func(context.Context) (string, error) { return jwt, nil }
}

// AssertionFromFile reads the JWT from a file (as Kubernetes projected
// service account tokens and most workload identity platforms provide it)
// on every call, surrounding white space removed.
func AssertionFromFile(path string) AssertionSource {
	return func(context.Context) (string, error) {
		f, err := os.Open(path)
		if err != nil {
			return "", fmt.Errorf("oauth: reading the assertion: %w", err)
		}
		defer f.Close()
		b, err := io.ReadAll(io.LimitReader(f, maxAssertion+1))
		if err != nil {
			return "", fmt.Errorf("oauth: reading the assertion: %w", err)
		}
		if len(b) > maxAssertion {
			return "", fmt.Errorf("oauth: the assertion in %s is larger than %d bytes", path, maxAssertion)
		}
		return checkAssertion(string(bytes.TrimSpace(b)), path)
	}
}

// AssertionFromEnv reads the JWT from an environment variable on every
// call.
func AssertionFromEnv(name string) AssertionSource {
	return func(context.Context) (string, error) {
		v, ok := os.LookupEnv(name)
		if !ok {
			return "", fmt.Errorf("oauth: the assertion variable %s is not set", name)
		}
		return checkAssertion(string(bytes.TrimSpace([]byte(v))), "$"+name)
	}
}

// checkAssertion: a compact JWS (three base64url parts), without quoting
// it in the error.
func checkAssertion(jwt, where string) (string, error) {
	if jwt == "" {
		return "", fmt.Errorf("oauth: the assertion in %s is empty", where)
	}
	dots := 0
	for i := 0; i < len(jwt); i++ {
		switch c := jwt[i]; {
		case c == '.':
			dots++
		case c >= 'A' && c <= 'Z', c >= 'a' && c <= 'z', c >= '0' && c <= '9', c == '-', c == '_':
		default:
			return "", fmt.Errorf("oauth: the assertion in %s is not a compact JWT", where)
		}
	}
	if dots != 2 {
		return "", fmt.Errorf("oauth: the assertion in %s is not a compact JWT", where)
	}
	return jwt, nil
}

// JWTBearerGrant is the RFC 7523 section 2.1 grant, a Grant: the client
// trades a JWT (a workload identity token in workload identity
// federation, SEP-1933; an ID-JAG in enterprise-managed authorization) for
// an access token at the authorization server's token endpoint, in one
// request:
//
//	POST <token endpoint>
//	grant_type=urn:ietf:params:oauth:grant-type:jwt-bearer&assertion=<JWT>
//	[&resource=<p.Resource>][&scope=<p.Scopes>] + the client's authentication
//
// The client authenticates as the TokenEndpoint says (a workload is
// usually a public client, token_endpoint_auth_method none with its
// client_id; an enterprise client client_secret_basic). A refusal
// (invalid_grant, invalid_scope, unauthorized_client, ...) is returned as
// the TokenEndpoint's *Error: the grant is not retried and no other grant
// is tried, as SEP-1933 asks. (The TokenEndpoint's single retry on a DPoP
// use_dpop_nonce challenge is the only second request.)
type JWTBearerGrant struct {
	Assertion AssertionSource
}

// Token makes the grant.
func (g JWTBearerGrant) Token(ctx context.Context, te *TokenEndpoint, p GrantParams) (*Token, error) {
	if g.Assertion == nil {
		return nil, &Error{Op: "jwt-bearer grant", Description: "no assertion source"}
	}
	jwt, err := g.Assertion(ctx)
	if err != nil {
		return nil, err
	}
	if jwt == "" {
		return nil, &Error{Op: "jwt-bearer grant", Description: "the assertion source returned an empty assertion"}
	}
	form := url.Values{"grant_type": {GrantTypeJWTBearer}, "assertion": {jwt}}
	if p.Resource != "" {
		form.Set("resource", p.Resource)
	}
	if len(p.Scopes) > 0 {
		form.Set("scope", strings.Join(p.Scopes, " "))
	}
	return te.Request(ctx, form)
}
