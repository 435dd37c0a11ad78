package daemon

import (
	"errors"
	"fmt"
	"log/slog"
	"net/http"

	"github.com/toolwire/toolwire/auth"
	"github.com/toolwire/toolwire/gateway"
	"github.com/toolwire/toolwire/gateway/config"
	"github.com/toolwire/toolwire/gateway/policy"
	"github.com/toolwire/toolwire/jsonrpc"
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

// admitPersonas refuses every MCP request of a caller no persona admits
// (gateway.AdmitSession, asked of the personas in force at the time) with
// 403 Forbidden and a JSON-RPC error naming the caller: the caller is
// authenticated, or anonymous where that is allowed, but may use nothing,
// which is what 403 means to an MCP client. A 2025-era initialize is
// refused the same way by the session admission; this answers the
// 2026-07-28 requests, which open no session, alike, instead of empty lists
// and denied calls that never say why. It runs inside the authentication.
func admitPersonas(g *gateway.Gateway) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			err := g.AdmitSession(r, auth.PrincipalFrom(r.Context()))
			if err == nil {
				next.ServeHTTP(w, r)
				return
			}
			var je *jsonrpc.Error
			if !errors.As(err, &je) {
				je = jsonrpc.NewError(jsonrpc.CodeInvalidRequest, "%s", err.Error())
			}
			body, _ := jsonrpc.Encode(&jsonrpc.Response{Error: je})
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusForbidden)
			_, _ = w.Write(body)
		})
	}
}
