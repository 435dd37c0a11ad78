package daemon

import (
	"fmt"
	"log/slog"
	"net/http"

	"github.com/toolwire/toolwire/auth"
	"github.com/toolwire/toolwire/gateway/config"
	"github.com/toolwire/toolwire/gateway/policy"
	"github.com/toolwire/toolwire/transport/streamable"
)

// endpointAuth returns the MCP endpoint's authentication (API keys and
// OAuth access tokens, as configured) and the Protected Resource Metadata
// routes that tell OAuth clients where to get tokens, and the same
// authentication as a middleware for the OTC listener. Without either
// kind of credential configured every caller is anonymous (and mw is
// nil); with one, a request without a credential gets 401 unless
// anonymous reports true (a persona admits such callers).
func endpointAuth(file *config.File, anonymous func() bool, logger *slog.Logger) (opts []streamable.ServerOption, mw func(http.Handler) http.Handler, err error) {
	keys, err := file.KeySet()
	if err != nil {
		return nil, nil, err
	}
	o := file.Auth.OAuth
	if keys == nil && o == nil {
		return nil, nil, nil
	}
	var tokens auth.TokenVerifier
	var requireOpts []auth.RequireOption
	if o != nil {
		var jopts []auth.JWTOption
		if o.JWKSURL != "" {
			jopts = append(jopts, auth.WithJWKSURL(o.JWKSURL))
		}
		v, err := auth.NewJWTVerifier(o.Issuer, o.Audience, jopts...)
		if err != nil {
			return nil, nil, fmt.Errorf("auth.oauth: %w", err)
		}
		tokens = v
		prm, err := auth.MetadataURL(o.Audience)
		if err != nil {
			return nil, nil, fmt.Errorf("auth.oauth.audience: %w", err)
		}
		requireOpts = append(requireOpts, auth.WithResourceMetadata(prm), auth.WithScopes(o.Scopes...), auth.WithRequireLogger(logger))
		md := auth.MetadataHandler(auth.ResourceMetadata{Resource: o.Audience, AuthorizationServers: []string{o.Issuer},
			ScopesSupported: o.Scopes, ResourceName: "toolwire gateway"})
		opts = append(opts, streamable.WithRoute("GET "+auth.MetadataPath(streamable.DefaultPath), md))
	}
	n := 0
	if keys != nil {
		n = keys.Len()
	}
	logger.Info("callers authenticated", "api_keys", n, "oauth", o != nil)
	mw = policy.Authenticate(keys, tokens, anonymous, requireOpts...)
	return append(opts, streamable.WithHTTPMiddleware(mw)), mw, nil
}
