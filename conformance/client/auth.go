package main

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"strings"

	"github.com/toolwire/toolwire/client"
	"github.com/toolwire/toolwire/internal/wirejson"
	"github.com/toolwire/toolwire/oauth"
)

// cimdURL is the Client ID Metadata Document URL the suite expects in
// auth/basic-cimd.
const cimdURL = "https://conformance-test.local/client-metadata.json"

// authContext is MCP_CONFORMANCE_CONTEXT as the auth scenarios fill it.
type authContext struct {
	Name             string `json:"name"`
	ClientID         string `json:"client_id"`
	ClientSecret     string `json:"client_secret"`
	PrivateKeyPEM    string `json:"private_key_pem"`
	SigningAlgorithm string `json:"signing_algorithm"`
	Issuer           string `json:"issuer"`
	// Raw is the whole context, for the scenarios of authext.go.
	Raw map[string]json.RawMessage `json:"-"`
}

// authExtensions lets other files (authext.go) take over the
// configuration of scenarios they implement: the function gets the
// context and the configuration built so far, and may change it or return
// an HTTPAuth of its own (nil keeps the oauth.Authorizer built from cfg).
var authExtensions = map[string]func(cx *authContext, cfg *oauth.Config) (client.HTTPAuth, error){}

// authFor returns the HTTPAuth of an auth/* scenario (nil for the others):
// an oauth.Authorizer whose user agent GETs the authorization URL without
// following the redirect, with the credentials the context carries.
func authFor(scenario, endpoint string, logger *slog.Logger) (client.HTTPAuth, error) {
	if !strings.HasPrefix(scenario, "auth/") {
		return nil, nil
	}
	cx := &authContext{}
	if raw := os.Getenv("MCP_CONFORMANCE_CONTEXT"); raw != "" {
		if err := wirejson.Unmarshal([]byte(raw), cx); err != nil {
			return nil, fmt.Errorf("MCP_CONFORMANCE_CONTEXT: %w", err)
		}
		_ = wirejson.Unmarshal([]byte(raw), &cx.Raw) // read above
	}
	cfg := oauth.Config{
		Endpoint:          endpoint,
		UserAgent:         oauth.NoRedirectUserAgent{},
		RedirectURI:       "http://127.0.0.1:8976/callback",
		ClientName:        "toolwire-conformance-client",
		ClientMetadataURL: cimdURL,
		Logger:            logger,
	}
	switch scenario {
	case "auth/client-credentials-basic", "auth/client-credentials-jwt":
		cfg.Grant = oauth.ClientCredentials{}
		cfg.ClientID, cfg.ClientSecret = cx.ClientID, cx.ClientSecret
		cfg.ClientMetadataURL = ""
	case "auth/pre-registration":
		cfg.ClientID, cfg.ClientSecret, cfg.ClientIssuer = cx.ClientID, cx.ClientSecret, cx.Issuer
	}
	if cx.PrivateKeyPEM != "" {
		key, err := oauth.ParsePrivateKeyPEM([]byte(cx.PrivateKeyPEM))
		if err != nil {
			return nil, fmt.Errorf("private_key_pem: %w", err)
		}
		cfg.ClientKey = &oauth.ClientKey{Signer: key, Alg: cx.SigningAlgorithm}
	}
	if ext := authExtensions[scenario]; ext != nil {
		auth, err := ext(cx, &cfg)
		if err != nil || auth != nil {
			return auth, err
		}
	}
	a, err := oauth.NewAuthorizer(cfg)
	if err != nil {
		return nil, err
	}
	return a, nil
}
