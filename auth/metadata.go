package auth

import (
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"strings"
)

// MetadataPrefix is the well-known path of RFC 9728 Protected Resource
// Metadata. A resource with a path ("https://h/mcp") has its metadata at the
// prefix followed by that path ("/.well-known/oauth-protected-resource/mcp").
const MetadataPrefix = "/.well-known/oauth-protected-resource"

// ResourceMetadata is an RFC 9728 Protected Resource Metadata document: what
// an MCP client reads, from the URL in a 401's resource_metadata, to learn
// which authorization server issues tokens for this server.
type ResourceMetadata struct {
	// Resource is the resource's canonical URL (the token audience,
	// RFC 8707), e.g. "https://mcp.example.com/mcp". Required.
	Resource string `json:"resource"`
	// AuthorizationServers are the issuers clients may get tokens from.
	AuthorizationServers []string `json:"authorization_servers,omitempty"`
	// ScopesSupported are the scopes this resource understands.
	ScopesSupported []string `json:"scopes_supported,omitempty"`
	// BearerMethodsSupported defaults to ["header"], the only method
	// Require accepts.
	BearerMethodsSupported []string `json:"bearer_methods_supported,omitempty"`
	// ResourceName is a human-readable name.
	ResourceName string `json:"resource_name,omitempty"`
	// ResourceDocumentation is a URL of documentation for developers.
	ResourceDocumentation string `json:"resource_documentation,omitempty"`
	// DPoPSigningAlgValuesSupported and DPoPBoundAccessTokensRequired are
	// RFC 9449 section 5.2's resource-server fields.
	DPoPSigningAlgValuesSupported []string `json:"dpop_signing_alg_values_supported,omitempty"`
	DPoPBoundAccessTokensRequired bool     `json:"dpop_bound_access_tokens_required,omitempty"`
}

// AuthServerMetadata is an RFC 8414 (or OpenID Connect discovery) document:
// the fields a resource server (Issuer, JWKSURI, IntrospectionEndpoint)
// and package oauth's client use. The one type for both sides.
type AuthServerMetadata struct {
	Issuer                                     string   `json:"issuer"`
	AuthorizationEndpoint                      string   `json:"authorization_endpoint,omitempty"`
	TokenEndpoint                              string   `json:"token_endpoint,omitempty"`
	RegistrationEndpoint                       string   `json:"registration_endpoint,omitempty"`
	IntrospectionEndpoint                      string   `json:"introspection_endpoint,omitempty"`
	JWKSURI                                    string   `json:"jwks_uri,omitempty"`
	ScopesSupported                            []string `json:"scopes_supported,omitempty"`
	ResponseTypesSupported                     []string `json:"response_types_supported,omitempty"`
	GrantTypesSupported                        []string `json:"grant_types_supported,omitempty"`
	TokenEndpointAuthMethodsSupported          []string `json:"token_endpoint_auth_methods_supported,omitempty"`
	TokenEndpointAuthSigningAlgValuesSupported []string `json:"token_endpoint_auth_signing_alg_values_supported,omitempty"`
	CodeChallengeMethodsSupported              []string `json:"code_challenge_methods_supported,omitempty"`
	// AuthorizationResponseIssParameterSupported is RFC 9207's flag: the
	// authorization response carries iss, which must then be checked.
	AuthorizationResponseIssParameterSupported bool     `json:"authorization_response_iss_parameter_supported,omitempty"`
	ClientIDMetadataDocumentSupported          bool     `json:"client_id_metadata_document_supported,omitempty"`
	DPoPSigningAlgValuesSupported              []string `json:"dpop_signing_alg_values_supported,omitempty"`
	// RevocationEndpoint is RFC 7009's token revocation endpoint (RFC 8414
	// section 2).
	RevocationEndpoint string `json:"revocation_endpoint,omitempty"`

	// Fallback marks metadata made up from the 2025-03-26 defaults
	// (/authorize, /token, /register at the MCP server's origin) because
	// the server published none (package oauth); it is never decoded.
	Fallback bool `json:"-"`
}

// MetadataURL returns where the metadata of resource lives: the well-known
// prefix inserted between its host and its path (RFC 9728 section 3.1), so
// "https://h/mcp" gives "https://h/.well-known/oauth-protected-resource/mcp".
func MetadataURL(resource string) (string, error) {
	u, err := url.Parse(resource)
	if err != nil {
		return "", err
	}
	if u.Scheme == "" || u.Host == "" || u.Fragment != "" {
		return "", errors.New("auth: the resource must be an absolute URL without a fragment")
	}
	out := u.Scheme + "://" + u.Host + MetadataPath(u.EscapedPath())
	if u.RawQuery != "" {
		out += "?" + u.RawQuery
	}
	return out, nil
}

// MetadataPath returns the path of the metadata of a resource whose URL has
// path endpointPath ("/mcp" gives
// "/.well-known/oauth-protected-resource/mcp"; "" and "/" give the bare
// prefix).
func MetadataPath(endpointPath string) string {
	p := strings.TrimSuffix(endpointPath, "/")
	if p != "" && !strings.HasPrefix(p, "/") {
		p = "/" + p
	}
	return MetadataPrefix + p
}

// MetadataHandler serves md as JSON to GET and HEAD (and OPTIONS, for
// browser clients: it is public and sent with Access-Control-Allow-Origin:
// *). Mount it at MetadataPath of the endpoint, and at MetadataPrefix for
// clients that look there. It answers 405 to other methods.
func MetadataHandler(md ResourceMetadata) http.Handler {
	if len(md.BearerMethodsSupported) == 0 {
		md.BearerMethodsSupported = []string{"header"}
	}
	body, err := json.Marshal(md)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Access-Control-Allow-Origin", "*")
		switch r.Method {
		case http.MethodGet, http.MethodHead:
		case http.MethodOptions:
			w.Header().Set("Access-Control-Allow-Methods", "GET, HEAD, OPTIONS")
			w.Header().Set("Access-Control-Allow-Headers", "MCP-Protocol-Version")
			w.WriteHeader(http.StatusNoContent)
			return
		default:
			w.Header().Set("Allow", "GET, HEAD, OPTIONS")
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
			return
		}
		if err != nil {
			http.Error(w, "internal error", http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Cache-Control", "public, max-age=3600")
		if r.Method == http.MethodGet {
			_, _ = w.Write(body)
		}
	})
}
