package oauth

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/toolwire/toolwire/auth"
)

// ErrIssuerMismatch: authorization server metadata whose issuer is not the
// issuer its well-known URL was built from (RFC 8414 §3.3), which the
// client must not use.
var ErrIssuerMismatch = errors.New("the authorization server metadata names another issuer")

// ErrResourceMismatch: Protected Resource Metadata whose resource does not
// cover the MCP endpoint (RFC 9728 §3.3); the client must not authorize
// against it.
var ErrResourceMismatch = errors.New("the protected resource metadata is for another resource")

// ErrNoPKCE: the authorization server does not advertise PKCE with S256
// (code_challenge_methods_supported), so the authorization code flow is
// refused, as MCP requires.
var ErrNoPKCE = errors.New("the authorization server does not advertise PKCE S256 support")

// discoverer fetches metadata through the guarded client.
type discoverer struct {
	hc       *http.Client
	pol      netPolicy
	maxBytes int64 // a document's bound (Config.MaxResponseBytes)
}

// getJSON GETs a metadata document. found is false for a 4xx (the
// document is not there: try the next place); other failures are errors.
func (d *discoverer) get(ctx context.Context, what, raw string) (data []byte, found bool, err error) {
	if _, err := d.pol.checkURL(what, raw); err != nil {
		return nil, false, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, raw, nil)
	if err != nil {
		return nil, false, err
	}
	req.Header.Set("Accept", "application/json")
	resp, err := d.hc.Do(req)
	if err != nil {
		return nil, false, fmt.Errorf("fetching the %s %s: %w", what, truncate(raw, 200), ctxErr(ctx, err))
	}
	defer resp.Body.Close()
	if resp.StatusCode >= 400 && resp.StatusCode < 500 {
		return nil, false, nil
	}
	if resp.StatusCode != http.StatusOK {
		return nil, false, fmt.Errorf("fetching the %s %s: HTTP %d", what, truncate(raw, 200), resp.StatusCode)
	}
	data, err = readResponse(resp.Body, d.limit())
	if err != nil {
		return nil, false, fmt.Errorf("reading the %s %s: %w", what, truncate(raw, 200), err)
	}
	return data, true, nil
}

// limit is the bound of a document read.
func (d *discoverer) limit() int64 {
	if d.maxBytes <= 0 {
		return DefaultMaxResponseBytes
	}
	return d.maxBytes
}

// prmURLs are the places Protected Resource Metadata is looked for, in
// order: the URL of the WWW-Authenticate resource_metadata parameter, the
// well-known URL suffixed with the endpoint's path, the root one.
func prmURLs(endpoint *url.URL, fromHeader string) []string {
	var out []string
	if fromHeader != "" {
		out = append(out, fromHeader)
	}
	origin := endpoint.Scheme + "://" + endpoint.Host
	if p := strings.TrimSuffix(endpoint.EscapedPath(), "/"); p != "" {
		out = append(out, origin+"/.well-known/oauth-protected-resource"+p)
	}
	return append(out, origin+"/.well-known/oauth-protected-resource")
}

// protectedResource finds the endpoint's Protected Resource Metadata and
// checks that its resource covers the endpoint. nil, nil: none published
// (the 2025-03-26 case).
func (d *discoverer) protectedResource(ctx context.Context, endpoint *url.URL, fromHeader string) (*auth.ResourceMetadata, error) {
	prm, _, err := firstPublished(ctx, d, "protected resource metadata URL", prmURLs(endpoint, fromHeader), decodeProtectedResourceMetadata)
	if prm == nil || err != nil {
		return nil, err
	}
	if !resourceCovers(prm.Resource, endpoint) {
		return nil, fmt.Errorf("%w: it names %q, not the MCP endpoint %s", ErrResourceMismatch, truncate(prm.Resource, 200), endpoint)
	}
	return prm, nil
}

// firstPublished GETs each of urls in turn, the places a metadata document
// may be published in the order the specifications give, and decodes the
// first one found (a 4xx answer says it is not there) within the
// discoverer's size limit; at is its URL. nil, "", nil: none is published.
func firstPublished[T any](ctx context.Context, d *discoverer, what string, urls []string, decode func([]byte, int64) (*T, error)) (md *T, at string, err error) {
	for _, u := range urls {
		data, found, err := d.get(ctx, what, u)
		if err != nil {
			return nil, "", err
		}
		if !found {
			continue
		}
		md, err := decode(data, d.limit())
		if err != nil {
			return nil, "", err
		}
		return md, u, nil
	}
	return nil, "", nil
}

// asMetadataURLs are the places authorization server metadata is looked
// for, in the order MCP gives: for an issuer with a path, RFC 8414 and
// OpenID Connect discovery with the well-known segment inserted before the
// path, then OpenID Connect's appended form; for one without, RFC 8414
// then OpenID Connect.
func asMetadataURLs(issuer *url.URL) []string {
	origin := issuer.Scheme + "://" + issuer.Host
	p := strings.TrimSuffix(issuer.EscapedPath(), "/")
	if p == "" {
		return []string{origin + "/.well-known/oauth-authorization-server", origin + "/.well-known/openid-configuration"}
	}
	return []string{
		origin + "/.well-known/oauth-authorization-server" + p,
		origin + "/.well-known/openid-configuration" + p,
		origin + p + "/.well-known/openid-configuration",
	}
}

// authServer finds the metadata of issuer and checks it: the issuer it
// names must be issuer exactly, and its endpoints must pass the https
// rule. legacy (no Protected Resource Metadata: the 2025-03-26 way) makes
// up the default endpoints when no metadata is published.
func (d *discoverer) authServer(ctx context.Context, issuer string, legacy bool) (*auth.AuthServerMetadata, error) {
	iu, err := d.pol.checkURL("authorization server issuer", issuer)
	if err != nil {
		return nil, err
	}
	if iu.RawQuery != "" {
		return nil, fmt.Errorf("the authorization server issuer %q has a query", truncate(issuer, 200))
	}
	md, u, err := firstPublished(ctx, d, "authorization server metadata URL", asMetadataURLs(iu), decodeAuthServerMetadata)
	if err != nil {
		return nil, err
	}
	if md != nil {
		if md.Issuer != issuer {
			return nil, fmt.Errorf("%w: %s names the issuer %q, not %q", ErrIssuerMismatch, u, truncate(md.Issuer, 200), issuer)
		}
		for what, e := range map[string]string{
			"authorization endpoint": md.AuthorizationEndpoint,
			"token endpoint":         md.TokenEndpoint,
			"registration endpoint":  md.RegistrationEndpoint,
		} {
			if e == "" {
				continue
			}
			if _, err := d.pol.checkURL(what, e); err != nil {
				return nil, err
			}
		}
		return md, nil
	}
	if !legacy {
		return nil, fmt.Errorf("the authorization server %s publishes no metadata", issuer)
	}
	base := strings.TrimSuffix(iu.Scheme+"://"+iu.Host, "/")
	return &auth.AuthServerMetadata{
		Issuer:                issuer,
		AuthorizationEndpoint: base + "/authorize",
		TokenEndpoint:         base + "/token",
		RegistrationEndpoint:  base + "/register",
		Fallback:              true,
	}, nil
}
