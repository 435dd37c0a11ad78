package config

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/goccy/go-yaml/ast"

	"github.com/toolwire/toolwire/gateway"
)

// tokenExchangeKeys are the keys of an upstream's oauth: token_exchange.
var tokenExchangeKeys = []string{"token_endpoint", "issuer", "client_id", "client_secret", "client_secret_file",
	"token_endpoint_auth_method", "audience", "resource", "scopes", "on_api_key"}

// exchangeMethods are the client authentication methods a token exchange
// can use.
var exchangeMethods = []string{"client_secret_basic", "client_secret_post", "none"}

// apiKeyModes are the values of on_api_key.
var apiKeyModes = []string{string(gateway.APIKeyRefuse), string(gateway.APIKeyStatic)}

// tokenExchange decodes an upstream's oauth: token_exchange: the gateway
// exchanges each caller's access token (RFC 8693) for one of the
// upstream's audience. Secrets are never echoed in a problem.
func (d *decoder) tokenExchange(entry *ast.MappingValueNode, what string) *gateway.TokenExchange {
	what += ": token_exchange"
	m := d.settings(entry.Value, entry.Key, what, "empty (want token_endpoint or issuer, and client_id)")
	if m == nil {
		return nil
	}
	x := &gateway.TokenExchange{OnAPIKey: gateway.APIKeyRefuse}
	before := d.Count()
	d.fields(m, what, tokenExchangeKeys, func(key string, mv *ast.MappingValueNode) {
		w := what + ": " + key
		v := mv.Value
		switch key {
		case "token_endpoint", "issuer", "audience", "resource":
			s, ok := d.str(v, w)
			if !ok {
				return
			}
			var err error
			if key == "token_endpoint" || key == "issuer" {
				err = checkSecureURL(s)
			} else if s == "" || strings.ContainsAny(s, " \t\r\n") {
				err = fmt.Errorf("%q: want a URI or a name without spaces", truncate(s))
			}
			if err != nil {
				d.Errorf(v, "%s: %v", w, err)
				return
			}
			*map[string]*string{"token_endpoint": &x.TokenEndpoint, "issuer": &x.Issuer, "audience": &x.Audience, "resource": &x.Resource}[key] = s
		case "client_id":
			if s, ok := d.str(v, w); ok {
				if err := checkHeaderValue(s); err != nil || s == "" {
					d.Errorf(v, "%s: want a non-empty printable value", w)
				}
				x.ClientID = s
			}
		case "client_secret":
			// Never echo the value.
			if s, ok := d.str(v, w); ok {
				if checkHeaderValue(s) != nil || s == "" {
					d.Errorf(v, "%s: want a non-empty printable value (not shown)", w)
				}
				x.ClientSecret = s
			}
		case "client_secret_file":
			path, ok := d.str(v, w)
			if !ok {
				return
			}
			if path == "" || strings.IndexByte(path, 0) >= 0 {
				d.Errorf(v, "%s: want the path of a file", w)
				return
			}
			if d.opts.baseSet && !filepath.IsAbs(path) {
				path = filepath.Join(d.opts.baseDir, path)
			}
			s, err := readHeaderFile(path)
			if err == nil && (s == "" || checkHeaderValue(s) != nil) {
				err = fmt.Errorf("not a non-empty printable value (not shown)")
			}
			if err != nil {
				d.Errorf(v, "%s: %s: %v", w, path, err)
				return
			}
			x.ClientSecret = s
		case "token_endpoint_auth_method":
			d.checked(v, w, oneOf(exchangeMethods), &x.AuthMethod)
		case "scopes":
			x.Scopes = d.scopes(v, w)
		case "on_api_key":
			var mode string
			d.checked(v, w, oneOf(apiKeyModes), &mode)
			x.OnAPIKey = gateway.APIKeyMode(mode)
		}
	})
	hasEP, hasIss := d.has(m, "token_endpoint"), d.has(m, "issuer")
	switch {
	case hasEP && hasIss:
		d.Errorf(entry.Key, "%s: token_endpoint and issuer exclude each other (the issuer's metadata names its token endpoint)", what)
	case !hasEP && !hasIss:
		d.Errorf(entry.Key, "%s: no token_endpoint or issuer (where to exchange the callers' tokens)", what)
	}
	if !d.has(m, "client_id") {
		d.Errorf(entry.Key, "%s: no client_id (the gateway authenticates itself at the token endpoint)", what)
	}
	if d.has(m, "client_secret") && d.has(m, "client_secret_file") {
		d.Errorf(entry.Key, "%s: client_secret and client_secret_file exclude each other", what)
	}
	if x.ClientSecret == "" && (x.AuthMethod == "client_secret_basic" || x.AuthMethod == "client_secret_post") {
		d.Errorf(entry.Key, "%s: token_endpoint_auth_method %s needs client_secret or client_secret_file", what, x.AuthMethod)
	}
	if d.Count() > before {
		return nil
	}
	return x
}

// checkStaticFallback reports on_api_key: static on an upstream that has
// no credentials of its own to fall back to.
func (d *decoder) checkStaticFallback(u *gateway.Upstream, node ast.Node, p string) {
	if u.TokenExchange == nil || u.TokenExchange.OnAPIKey != gateway.APIKeyStatic {
		return
	}
	if u.Auth == nil && len(u.Header) == 0 {
		d.Errorf(node, "%s: oauth: token_exchange: on_api_key: static needs the upstream's own credentials (oauth client_id and client_secret, or headers)", p)
	}
}
