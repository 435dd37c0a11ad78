package policy

import (
	"net/http"
	"strings"

	"github.com/toolwire/toolwire/auth"
	"github.com/toolwire/toolwire/jsonrpc"
)

// APIKeyIssuer is the auth.Principal.Issuer of a caller that presented a
// configured API key; its Subject is the key's configured name. No OAuth
// issuer can have it (theirs are URLs), so the two never mix.
const APIKeyIssuer = "toolwire:api-key"

// Authenticate returns the gateway's HTTP authentication: it resolves the
// credential a request presents (FromRequest) and puts the caller's
// auth.Principal on the request's context for the MCP handler behind it.
//
//   - No credential, with neither keys nor tokens configured: the request
//     goes on without a principal; it is anonymous, and the personas
//     decide what that may do.
//   - No credential otherwise: the request goes on as anonymous only if
//     anonymous reports true (a persona admits callers without
//     credentials, see AdmitsAnonymous; asked on every request, so that a
//     reload counts). Else it is refused with 401 and a challenge: the
//     one auth.Require sends when tokens is set (with opts' resource
//     metadata and scopes), else "Bearer" (the scheme API keys come in).
//     A nil anonymous admits no one.
//   - An API key (IsKeyFormat), as a bearer token or in X-API-Key: its
//     configured name, or 401 if keys does not know it.
//   - Any other bearer token: verified by tokens (an OAuth access token,
//     audience-checked by the verifier) through auth.Require with opts, or
//     401 when tokens is nil.
//   - Two different credentials, a repeated header or another scheme: 401.
//
// A credential that is presented and wrong is refused, never downgraded
// to anonymous. keys and tokens may each be nil.
func Authenticate(keys *KeySet, tokens auth.TokenVerifier, anonymous func() bool, opts ...auth.RequireOption) func(http.Handler) http.Handler {
	configured := keys.Len() > 0 || tokens != nil
	return func(next http.Handler) http.Handler {
		var oauth http.Handler
		if tokens != nil {
			oauth = auth.Require(tokens, opts...)(next)
		}
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			cred, err := FromRequest(r.Header)
			switch {
			case err != nil:
				refuse(w, "invalid_request", err.Error())
			case cred == "" && (!configured || anonymous != nil && anonymous()):
				next.ServeHTTP(w, r)
			case cred == "" && oauth != nil:
				oauth.ServeHTTP(w, r) // its challenge names the resource metadata
			case cred == "":
				challenge(w)
			case IsKeyFormat(cred):
				name, ok := keys.lookup(cred)
				if !ok {
					refuse(w, "invalid_token", "the API key is not one this gateway knows")
					return
				}
				p := &auth.Principal{Issuer: APIKeyIssuer, Subject: name}
				next.ServeHTTP(w, r.WithContext(auth.WithPrincipal(r.Context(), p)))
			case oauth == nil:
				refuse(w, "invalid_token", "the credential is not an API key of this gateway, and it accepts no OAuth tokens")
			case r.Header.Get("Authorization") == "":
				refuse(w, "invalid_token", "X-API-Key holds something that is not an API key; send OAuth tokens as Authorization: Bearer")
			default:
				oauth.ServeHTTP(w, r)
			}
		})
	}
}

// AdmitsAnonymous reports whether a persona applies to callers without
// credentials. A nil Policy (no personas) admits none: with callers
// authenticated, personas absent means every authenticated caller may use
// everything, and anonymous ones nothing.
func (p *Policy) AdmitsAnonymous() bool {
	return p.persona(Anonymous()) != nil
}

// lookup is Lookup on a KeySet that may be nil (no keys configured).
func (ks *KeySet) lookup(presented string) (string, bool) {
	if ks == nil {
		return "", false
	}
	return ks.Lookup(presented)
}

// refuse answers 401 with an RFC 6750 challenge and a JSON-RPC error body
// (id null), as auth.Require does. The credential never appears in it.
func refuse(w http.ResponseWriter, code, desc string) {
	desc = strings.Map(func(r rune) rune {
		if r < 0x20 || r > 0x7e || r == '"' || r == '\\' {
			return ' '
		}
		return r
	}, desc)
	unauthorized(w, `Bearer error="`+code+`", error_description="`+desc+`"`, desc)
}

// challenge answers a request without a credential, where one is
// required and no OAuth is configured: 401 with a bare Bearer challenge
// (RFC 6750 section 3: no error code for a request that tried nothing).
func challenge(w http.ResponseWriter) {
	unauthorized(w, "Bearer", "this gateway requires an API key (Authorization: Bearer KEY, or X-API-Key: KEY)")
}

func unauthorized(w http.ResponseWriter, challenge, msg string) {
	w.Header().Set("WWW-Authenticate", challenge)
	body, _ := jsonrpc.Encode(&jsonrpc.Response{Error: &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: "unauthorized: " + msg}})
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusUnauthorized)
	_, _ = w.Write(body)
}
