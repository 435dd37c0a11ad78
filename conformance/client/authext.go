package main

// The OAuth extension scenarios of the conformance suite, acted out with
// package oauth's Authorizer and its extension points (DPoPSigner, Grant).
// What the suite (0.2.0-alpha.12) sets up and checks, read from its source:
//
// auth/dpop and auth/dpop-nonce (SEP-1932, RFC 9449). No
// MCP_CONFORMANCE_CONTEXT. The MCP server answers a request without
// Authorization with 401 `WWW-Authenticate: DPoP resource_metadata="<PRM>"`;
// PRM at /.well-known/oauth-protected-resource/mcp names the resource
// <server>/mcp and the AS. The AS metadata
// (/.well-known/oauth-authorization-server) has registration, PKCE S256,
// token_endpoint_auth_methods_supported [none], grant types
// authorization_code and refresh_token, dpop_signing_alg_values_supported
// [ES256], authorization_response_iss_parameter_supported. The client
// registers (DCR), GETs /authorize (302 to the redirect URI with code,
// state, iss) and POSTs /token with one DPoP header: a proof with typ
// dpop+jwt, an asymmetric alg, the public jwk (no "d"), a signature that
// verifies, a string jti, htm POST, htu the token endpoint (no query or
// fragment), iat within 300 s. Only the authorization_code token request
// is judged (sep-1932-client-token-request-proof), and one invalid proof
// spoils it for good. The answer is token_type DPoP, an at+jwt whose
// cnf.jkt is the proof key's RFC 7638 thumbprint. Every POST /mcp must then
// carry `Authorization: DPoP <token>` (any other scheme fails
// sep-1932-client-dpop-auth-scheme) and a single DPoP header whose proof
// has htm = the method, htu = <server>/mcp, iat, ath = base64url(SHA-256
// (token)), the same key as cnf.jkt, and a jti never seen before, retries
// included (sep-1932-client-fresh-proof). In auth/dpop-nonce the token
// endpoint first answers 400 {"error":"use_dpop_nonce"} with DPoP-Nonce
// "conformance-as-dpop-nonce" and needs it in the retried proof
// (sep-1932-client-as-nonce), and the MCP server answers each request
// whose proof lacks nonce "conformance-rs-dpop-nonce" with 401
// `WWW-Authenticate: DPoP error="use_dpop_nonce", resource_metadata=...`
// and DPoP-Nonce, needing the request again with it
// (sep-1932-client-rs-nonce).
//
// auth/wif-jwt-bearer (SEP-1933, RFC 7523). Context: client_id
// "conformance-wif-workload", valid_jwt (ES256, aud = the AS's URL, iss
// https://idp.conformance-test.local, sub conformance-workload),
// wrong_audience_jwt and expired_jwt (for clients that want to try the
// failures; the run judges only one flow). Standard Bearer MCP server and
// PRM; the AS advertises grant_types_supported [jwt-bearer],
// token_endpoint_auth_methods_supported [none] and no registration
// endpoint. The client POSTs /token with
// grant_type=urn:ietf:params:oauth:grant-type:jwt-bearer and
// assertion=<valid_jwt> (its aud, signature and exp are verified:
// wif-assertion-verified). Any second token request after a failure is a
// WARNING (wif-no-retry, wif-grant-fallback): no retry, no other grant.
// scope wif.trigger-unauthorized / wif.rejected make the AS refuse
// (unauthorized_client / invalid_scope).
//
// auth/enterprise-managed-authorization (SEP-990). Context: client_id
// "conformance-test-xaa-client", client_secret
// "conformance-test-xaa-secret", idp_client_id
// "conformance-test-idp-client", idp_id_token (ES256, aud idp_client_id,
// iss idp_issuer), idp_issuer, idp_token_endpoint (<idp>/token). Standard
// Bearer MCP server and PRM; the AS advertises grant_types_supported
// [jwt-bearer] and token_endpoint_auth_methods_supported
// [client_secret_basic]. First the IdP's /token: grant_type
// ...:token-exchange, subject_token = idp_id_token (verified),
// subject_token_type ...:token-type:id_token, requested_token_type
// ...:token-type:id-jag, audience and resource present (no client
// authentication is checked) — the answer is {access_token: <ID-JAG>,
// issued_token_type: ...:id-jag, token_type: N_A}, the ID-JAG (typ
// oauth-id-jag+jwt) having aud = the audience sent, resource = the
// resource sent, client_id = conformance-test-xaa-client
// (complete-flow-token-exchange). Then the AS's /token: Authorization:
// Basic of the client id and secret (each URL-decoded), grant_type
// ...:jwt-bearer, assertion = the ID-JAG, whose aud must be the AS's URL
// (with or without a trailing slash), client_id the authenticated client
// and resource exactly <server>/mcp (complete-flow-jwt-bearer). The
// Bearer token it issues then lists and calls the tool.

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/toolwire/toolwire/client"
	"github.com/toolwire/toolwire/internal/wirejson"
	"github.com/toolwire/toolwire/oauth"
)

// extensionScenarios are the scenarios this file configures.
var extensionScenarios = []string{
	"auth/dpop",
	"auth/dpop-nonce",
	"auth/wif-jwt-bearer",
	"auth/enterprise-managed-authorization",
}

func init() {
	for _, s := range extensionScenarios {
		scenario := s
		authExtensions[scenario] = func(cx *authContext, cfg *oauth.Config) (client.HTTPAuth, error) {
			return nil, configureExtension(scenario, cx.Raw, cfg)
		}
	}
}

// extContext is what the extension scenarios put in
// MCP_CONFORMANCE_CONTEXT.
type extContext struct {
	ClientID         string `json:"client_id"`
	ClientSecret     string `json:"client_secret"`
	ValidJWT         string `json:"valid_jwt"`
	IdPClientID      string `json:"idp_client_id"`
	IdPIDToken       string `json:"idp_id_token"`
	IdPTokenEndpoint string `json:"idp_token_endpoint"`
}

// configureExtension sets cfg up for one extension scenario from its
// context (raw, nil when there is none).
func configureExtension(scenario string, raw map[string]json.RawMessage, cfg *oauth.Config) error {
	var cx extContext
	if raw != nil {
		b, _ := json.Marshal(raw)
		if err := wirejson.Unmarshal(b, &cx); err != nil {
			return fmt.Errorf("MCP_CONFORMANCE_CONTEXT: %w", err)
		}
	}
	need := func(fields ...string) error {
		var missing []string
		for i := 0; i < len(fields); i += 2 {
			if fields[i+1] == "" {
				missing = append(missing, fields[i])
			}
		}
		if len(missing) > 0 {
			return fmt.Errorf("MCP_CONFORMANCE_CONTEXT lacks %s", strings.Join(missing, ", "))
		}
		return nil
	}
	switch scenario {
	case "auth/dpop", "auth/dpop-nonce":
		key, err := oauth.NewDPoPKey()
		if err != nil {
			return err
		}
		cfg.DPoP = key
	case "auth/wif-jwt-bearer":
		if err := need("client_id", cx.ClientID, "valid_jwt", cx.ValidJWT); err != nil {
			return err
		}
		cfg.ClientID, cfg.ClientSecret, cfg.TokenEndpointAuthMethod = cx.ClientID, "", "none"
		cfg.ClientMetadataURL = ""
		cfg.Grant = oauth.JWTBearerGrant{Assertion: oauth.StaticAssertion(cx.ValidJWT)}
	case "auth/enterprise-managed-authorization":
		if err := need("client_id", cx.ClientID, "client_secret", cx.ClientSecret, "idp_client_id", cx.IdPClientID,
			"idp_id_token", cx.IdPIDToken, "idp_token_endpoint", cx.IdPTokenEndpoint); err != nil {
			return err
		}
		cfg.ClientID, cfg.ClientSecret, cfg.TokenEndpointAuthMethod = cx.ClientID, cx.ClientSecret, "client_secret_basic"
		cfg.ClientMetadataURL = ""
		cfg.Grant = oauth.IDJAGGrant{
			IdPTokenEndpoint: cx.IdPTokenEndpoint,
			IdPClient:        oauth.ClientInfo{ID: cx.IdPClientID, AuthMethod: "none"},
			SubjectToken:     oauth.StaticAssertion(cx.IdPIDToken),
		}
	default:
		return fmt.Errorf("no extension configuration for %s", scenario)
	}
	return nil
}
