package oauth

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"

	"github.com/toolwire/toolwire/auth"
)

// ErrNoRegistration: the client has no way to register with the
// authorization server: no pre-registered credentials for it, no Client ID
// Metadata Document it accepts, no dynamic registration endpoint.
var ErrNoRegistration = errors.New("no client registration is possible with the authorization server")

// register returns the client's registration with the authorization
// server md, in the order MCP gives: pre-registered credentials for it,
// a Client ID Metadata Document URL when the server accepts them, then
// RFC 7591 dynamic registration.
func (a *Authorizer) register(ctx context.Context, md *auth.AuthServerMetadata) (ClientInfo, error) {
	cfg := &a.cfg
	if cfg.ClientID != "" && (cfg.ClientIssuer == "" || cfg.ClientIssuer == md.Issuer) {
		c := ClientInfo{ID: cfg.ClientID, Secret: cfg.ClientSecret, Issuer: md.Issuer, Kind: "preregistered", AuthMethod: cfg.TokenEndpointAuthMethod}
		c.AuthMethod = a.authMethod(md, c)
		return c, nil
	}
	if cfg.ClientMetadataURL != "" && md.ClientIDMetadataDocumentSupported {
		c := ClientInfo{ID: cfg.ClientMetadataURL, Issuer: md.Issuer, Kind: "cimd", AuthMethod: "none"}
		if cfg.ClientKey != nil {
			c.AuthMethod = "private_key_jwt"
		}
		return c, nil
	}
	if md.RegistrationEndpoint == "" {
		return ClientInfo{}, fmt.Errorf("%w %s", ErrNoRegistration, md.Issuer)
	}
	return a.dynamicRegistration(ctx, md)
}

// authMethod picks the token endpoint authentication of a client: the one
// it was registered with, else private_key_jwt with a key, else for a
// secret client_secret_basic (RFC 8414's default) or client_secret_post
// as the server supports, else none.
func (a *Authorizer) authMethod(md *auth.AuthServerMetadata, c ClientInfo) string {
	if c.AuthMethod != "" {
		return c.AuthMethod
	}
	supported := md.TokenEndpointAuthMethodsSupported
	if len(supported) == 0 {
		supported = []string{"client_secret_basic"}
	}
	switch {
	case a.cfg.ClientKey != nil && supports(supported, "private_key_jwt"):
		return "private_key_jwt"
	case c.Secret != "" && supports(supported, "client_secret_basic"):
		return "client_secret_basic"
	case c.Secret != "" && supports(supported, "client_secret_post"):
		return "client_secret_post"
	case a.cfg.ClientKey != nil:
		return "private_key_jwt"
	case c.Secret != "" && !supports(supported, "none"):
		return "client_secret_basic"
	}
	return "none"
}

// registrationRequest is the RFC 7591 client metadata sent.
type registrationRequest struct {
	ClientName              string   `json:"client_name,omitempty"`
	RedirectURIs            []string `json:"redirect_uris"`
	GrantTypes              []string `json:"grant_types"`
	ResponseTypes           []string `json:"response_types"`
	TokenEndpointAuthMethod string   `json:"token_endpoint_auth_method"`
	ApplicationType         string   `json:"application_type"`
	ClientURI               string   `json:"client_uri,omitempty"`
	SoftwareID              string   `json:"software_id,omitempty"`
	SoftwareVersion         string   `json:"software_version,omitempty"`
}

type registrationResponse struct {
	ClientID                string `json:"client_id"`
	ClientSecret            string `json:"client_secret"`
	TokenEndpointAuthMethod string `json:"token_endpoint_auth_method"`
}

// dynamicRegistration registers a public native client (RFC 7591) with
// the authorization code and refresh token grants.
func (a *Authorizer) dynamicRegistration(ctx context.Context, md *auth.AuthServerMetadata) (ClientInfo, error) {
	method := "none"
	if supported := md.TokenEndpointAuthMethodsSupported; len(supported) > 0 && !supports(supported, "none") {
		switch {
		case supports(supported, "client_secret_basic"):
			method = "client_secret_basic"
		case supports(supported, "client_secret_post"):
			method = "client_secret_post"
		}
	}
	grants := []string{"authorization_code", "refresh_token"}
	if a.cfg.Grant != nil {
		grants = []string{"client_credentials"}
	}
	appType := "native"
	if a.cfg.ApplicationType != "" {
		appType = a.cfg.ApplicationType
	}
	body, _ := json.Marshal(registrationRequest{
		ClientName:              a.cfg.ClientName,
		RedirectURIs:            []string{a.cfg.RedirectURI},
		GrantTypes:              grants,
		ResponseTypes:           []string{"code"},
		TokenEndpointAuthMethod: method,
		ApplicationType:         appType,
		ClientURI:               a.cfg.ClientURI,
		SoftwareID:              a.cfg.SoftwareID,
		SoftwareVersion:         a.cfg.SoftwareVersion,
	})
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, md.RegistrationEndpoint, bytes.NewReader(body))
	if err != nil {
		return ClientInfo{}, &Error{Op: "registration", Description: "bad registration endpoint URL"}
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	resp, err := a.hc.Do(req)
	if err != nil {
		return ClientInfo{}, fmt.Errorf("oauth: registration at %s: %w", truncate(md.RegistrationEndpoint, 200), ctxErr(ctx, err))
	}
	defer resp.Body.Close()
	data, err := readResponse(resp.Body, a.maxBytes)
	if err != nil {
		return ClientInfo{}, &Error{Op: "registration", StatusCode: resp.StatusCode, Description: err.Error()}
	}
	if resp.StatusCode != http.StatusOK && resp.StatusCode != http.StatusCreated {
		er := decodeErrorResponse(data)
		return ClientInfo{}, &Error{Op: "registration", StatusCode: resp.StatusCode, Code: truncate(er.Error, 100), Description: truncate(er.ErrorDescription, 300)}
	}
	var rr registrationResponse
	if err := decodeObject(data, &rr, a.maxBytes); err != nil || rr.ClientID == "" {
		return ClientInfo{}, &Error{Op: "registration", StatusCode: resp.StatusCode, Description: "the registration response has no client_id"}
	}
	c := ClientInfo{ID: rr.ClientID, Secret: rr.ClientSecret, Issuer: md.Issuer, Kind: "dynamic", AuthMethod: rr.TokenEndpointAuthMethod}
	if c.AuthMethod == "" {
		c.AuthMethod = method
		if c.Secret != "" && method == "none" {
			c.AuthMethod = a.authMethod(md, ClientInfo{Secret: c.Secret})
		}
	}
	return c, nil
}
