package main

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/toolwire/toolwire/auth"
	"github.com/toolwire/toolwire/internal/httpguard"
	"github.com/toolwire/toolwire/internal/units"
	"github.com/toolwire/toolwire/server"
	"github.com/toolwire/toolwire/transport/streamable"
)

// Environment variables the introspection client credentials may come from,
// so that the secret stays out of the process list.
const (
	envAuthClientID     = "TOOLWIRE_AUTH_CLIENT_ID"
	envAuthClientSecret = "TOOLWIRE_AUTH_CLIENT_SECRET"
)

// authFlags are serve's --auth-* flags: the MCP endpoint as an OAuth 2.1
// resource server.
type authFlags struct {
	issuer        string
	audience      string
	scopes        []string
	jwks          string
	introspect    string
	clientID      string
	clientSecret  string
	toolScopes    []string
	clockSkew     time.Duration
	jwksRefresh   time.Duration
	introspectTTL time.Duration
	tokenCache    time.Duration
	resourceName  string
}

func (a *authFlags) register(cmd *cobra.Command) {
	fl := cmd.Flags()
	fl.StringVar(&a.issuer, "auth-issuer", "", "HTTP: require OAuth bearer tokens from this issuer (its exact iss; JWT keys from its RFC 8414 or OpenID metadata); https unless loopback")
	fl.StringVar(&a.audience, "auth-audience", "", "HTTP: the audience tokens must name, this server's canonical URL (default: the endpoint URL, http://<addr><path>)")
	fl.StringSliceVar(&a.scopes, "auth-scopes", nil, "HTTP: scopes every token must carry, comma-separated (403 insufficient_scope otherwise)")
	fl.StringVar(&a.jwks, "auth-jwks", "", "HTTP: fetch the issuer's JWKS from this URL instead of discovering it")
	fl.StringVar(&a.introspect, "auth-introspect", "", "HTTP: verify tokens with this RFC 7662 introspection endpoint instead of as JWTs")
	fl.StringVar(&a.clientID, "auth-client-id", "", "HTTP: client id for --auth-introspect (default: $"+envAuthClientID+")")
	fl.StringVar(&a.clientSecret, "auth-client-secret", "", "HTTP: client secret for --auth-introspect (default: $"+envAuthClientSecret+", which keeps it out of the process list)")
	fl.StringArrayVar(&a.toolScopes, "auth-tool-scope", nil, "HTTP: TOOL=SCOPE[ SCOPE...]: scopes a tools/call of TOOL needs beyond --auth-scopes; repeatable")
	fl.Var(units.Duration(&a.clockSkew, auth.DefaultClockSkew), "auth-clock-skew", "HTTP: clock skew allowed when checking exp, nbf and iat")
	fl.Var(units.Duration(&a.jwksRefresh, auth.DefaultJWKSRefreshInterval), "auth-jwks-refresh", "HTTP: least time between two JWKS fetches (a token with an unknown kid fetches again)")
	fl.Var(units.Duration(&a.introspectTTL, auth.DefaultIntrospectionTTL), "auth-introspect-ttl", "HTTP: how long an introspection answer is reused (never past the token's exp)")
	fl.Var(units.Duration(&a.tokenCache, auth.DefaultVerifiedTokenTTL), "auth-token-cache", "HTTP: how long a verified JWT is taken again without repeating its checks (never past its exp; 0 checks every request in full)")
	fl.StringVar(&a.resourceName, "auth-resource-name", "toolwire reference server", "HTTP: resource_name in the protected resource metadata")
}

// enabled reports whether any --auth-* flag was given.
func (a *authFlags) enabled(cmd *cobra.Command) bool {
	for _, name := range []string{"auth-issuer", "auth-audience", "auth-scopes", "auth-jwks", "auth-introspect", "auth-client-id",
		"auth-client-secret", "auth-tool-scope", "auth-clock-skew", "auth-jwks-refresh", "auth-introspect-ttl", "auth-token-cache", "auth-resource-name"} {
		if cmd.Flags().Changed(name) {
			return true
		}
	}
	return false
}

// check validates the flags before anything is served.
func (a *authFlags) check(stdio bool) error {
	if stdio {
		return usageError{"--auth-* flags protect the HTTP endpoint; a stdio server takes its credentials from its environment (drop --stdio or the --auth-* flags)"}
	}
	if a.issuer == "" {
		return usageError{"--auth-issuer is required with the other --auth-* flags"}
	}
	if a.jwks != "" && a.introspect != "" {
		return usageError{"--auth-jwks and --auth-introspect exclude each other"}
	}
	if a.clientID == "" {
		a.clientID = os.Getenv(envAuthClientID)
	}
	if a.clientSecret == "" {
		a.clientSecret = os.Getenv(envAuthClientSecret)
	}
	if (a.clientID != "" || a.clientSecret != "") && a.introspect == "" {
		return usageError{"--auth-client-id and --auth-client-secret are for --auth-introspect"}
	}
	if a.clockSkew < 0 || a.jwksRefresh <= 0 || a.introspectTTL < 0 || a.tokenCache < 0 {
		return usageError{"--auth-jwks-refresh must be positive, --auth-clock-skew, --auth-introspect-ttl and --auth-token-cache 0 or more"}
	}
	for _, ts := range a.toolScopes {
		name, scopes, ok := strings.Cut(ts, "=")
		if !ok || strings.TrimSpace(name) == "" || len(strings.Fields(scopes)) == 0 {
			return usageError{"invalid --auth-tool-scope " + ts + ": want TOOL=SCOPE[ SCOPE...]"}
		}
	}
	return nil
}

// verifier builds the token verifier for audience.
func (a *authFlags) verifier(audience string) (auth.TokenVerifier, error) {
	// A flag's 0 means none (no skew, no caching); a Limits field's means
	// the default, and none is negative.
	none := func(d time.Duration) time.Duration {
		if d == 0 {
			return -1
		}
		return d
	}
	lim := auth.WithLimits(auth.Limits{
		ClockSkew:              none(a.clockSkew),
		IntrospectionTTL:       none(a.introspectTTL),
		MinJWKSRefreshInterval: a.jwksRefresh,
		VerifiedTokenTTL:       none(a.tokenCache),
	})
	if a.introspect != "" {
		opts := []auth.IntrospectionOption{auth.WithIssuer(a.issuer), lim}
		if a.clientID != "" {
			opts = append(opts, auth.WithClientCredentials(a.clientID, a.clientSecret))
		}
		v, err := auth.NewIntrospectionVerifier(a.introspect, audience, opts...)
		if err != nil {
			return nil, usageError{"--auth-introspect: " + err.Error()}
		}
		return v, nil
	}
	opts := []auth.JWTOption{lim}
	if a.jwks != "" {
		opts = append(opts, auth.WithJWKSURL(a.jwks))
	}
	v, err := auth.NewJWTVerifier(a.issuer, audience, opts...)
	if err != nil {
		return nil, usageError{"--auth-issuer: " + err.Error()}
	}
	return v, nil
}

// toolScopeFunc is the auth.WithScopesFor hook of --auth-tool-scope.
func (a *authFlags) toolScopeFunc() func(method, name string) []string {
	byTool := map[string][]string{}
	for _, ts := range a.toolScopes {
		name, scopes, _ := strings.Cut(ts, "=")
		name = strings.TrimSpace(name)
		byTool[name] = append(byTool[name], strings.Fields(scopes)...)
	}
	return func(method, name string) []string {
		if method != "tools/call" {
			return nil
		}
		return byTool[name]
	}
}

// supportedScopes lists every scope the flags name, for the metadata.
func (a *authFlags) supportedScopes() []string {
	out := slices.Clone(a.scopes)
	for _, ts := range a.toolScopes {
		_, scopes, _ := strings.Cut(ts, "=")
		for _, s := range strings.Fields(scopes) {
			if !slices.Contains(out, s) {
				out = append(out, s)
			}
		}
	}
	return out
}

// serveAuthHTTP is streamable.ListenAndServe with the endpoint behind
// auth.Require and the RFC 9728 metadata served next to it.
func serveAuthHTTP(ctx context.Context, srv *server.Server, f *serveFlags, h *streamable.Handler, logger *slog.Logger) error {
	a := &f.auth
	path := f.path
	if path == "" {
		path = streamable.DefaultPath
	}
	ln, err := net.Listen("tcp", f.addr)
	if err != nil {
		return err
	}
	endpoint := "http://" + ln.Addr().String() + path
	if f.otc.addr != "" {
		logger.Warn("--auth-* protects the MCP endpoint only; the OTC endpoint of --otc-addr has its own --otc-api-key and --otc-jwt-secret-file")
	}
	audience := a.audience
	if audience == "" {
		audience = endpoint
		if host, _, _ := net.SplitHostPort(ln.Addr().String()); net.ParseIP(host) != nil && net.ParseIP(host).IsUnspecified() {
			logger.Warn("tokens must name the audience "+endpoint+", which clients cannot reach; pass --auth-audience with the server's public URL", "addr", f.addr)
		}
	}
	v, err := a.verifier(audience)
	if err != nil {
		ln.Close()
		return err
	}
	prm, err := auth.MetadataURL(audience)
	if err != nil {
		ln.Close()
		return usageError{"--auth-audience: " + err.Error()}
	}
	requireOpts := []auth.RequireOption{auth.WithResourceMetadata(prm), auth.WithScopes(a.scopes...),
		auth.WithLimits(auth.Limits{MaxPeekBytes: f.maxBodySize}), auth.WithRequireLogger(logger)}
	if len(a.toolScopes) > 0 {
		requireOpts = append(requireOpts, auth.WithScopesFor(a.toolScopeFunc()))
	}
	md := auth.MetadataHandler(auth.ResourceMetadata{Resource: audience, AuthorizationServers: []string{a.issuer},
		ScopesSupported: a.supportedScopes(), ResourceName: a.resourceName})
	mux := http.NewServeMux()
	mux.Handle(path, auth.Require(v, requireOpts...)(h))
	mdPaths := []string{auth.MetadataPrefix, auth.MetadataPath(path)}
	if u, err := url.Parse(audience); err == nil {
		mdPaths = append(mdPaths, auth.MetadataPath(u.EscapedPath()))
	}
	for _, p := range slices.Compact(slices.Sorted(slices.Values(mdPaths))) {
		if p != path {
			mux.Handle(p, md)
		}
	}
	hs := &http.Server{
		Handler:           mux,
		ReadHeaderTimeout: orDefault(f.readHeaderTimeout, streamable.DefaultReadHeaderTimeout),
		IdleTimeout:       orDefault(f.idleTimeout, streamable.DefaultIdleTimeout),
		MaxHeaderBytes:    f.maxHeaderBytes,
		ErrorLog:          slog.NewLogLogger(logger.Handler(), slog.LevelWarn),
	}
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(httpguard.LimitListener(ln, streamable.DefaultMaxConns)) }()
	logger.Info("serving reference tools over Streamable HTTP", "url", endpoint, "tools", len(srv.Tools()),
		"auth_issuer", a.issuer, "audience", audience, "resource_metadata", prm)
	select {
	case err := <-errc:
		h.Close()
		return err
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), orDefault(f.shutdownTimeout, streamable.DefaultShutdownTimeout))
	defer cancel()
	serr := make(chan error, 1)
	go func() { serr <- hs.Shutdown(sctx) }()
	herr := h.Shutdown(sctx)
	err = <-serr
	if e := <-errc; e != nil && !errors.Is(e, http.ErrServerClosed) {
		err = errors.Join(err, e)
	}
	return errors.Join(herr, err)
}

func orDefault(d, def time.Duration) time.Duration {
	if d <= 0 {
		return def
	}
	return d
}
