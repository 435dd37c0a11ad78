package auth

import (
	"context"
	"errors"
	"fmt"
	"mime"
	"net"
	"net/http"
	"net/url"
	"strings"

	"github.com/toolwire/toolwire/internal/httpguard"
	"github.com/toolwire/toolwire/internal/wirejson"
)

// checkFetchURL enforces the transport rule for everything fetched from an
// authorization server: https, or http to a loopback host (127.0.0.0/8, ::1,
// localhost) for local development and tests. The URL must be absolute and
// carry no credentials or fragment.
func checkFetchURL(raw string) error {
	u, err := url.Parse(raw)
	if err != nil {
		return fmt.Errorf("invalid URL: %v", err)
	}
	if u.Host == "" || u.User != nil || u.Fragment != "" {
		return fmt.Errorf("URL %q must be absolute, without credentials or fragment", raw)
	}
	switch u.Scheme {
	case "https":
		return nil
	case "http":
		if isLoopbackHost(u.Hostname()) {
			return nil
		}
		return fmt.Errorf("URL %q must use https (http is allowed for loopback hosts only)", raw)
	}
	return fmt.Errorf("URL %q must use https", raw)
}

func isLoopbackHost(h string) bool {
	if strings.EqualFold(h, "localhost") {
		return true
	}
	ip := net.ParseIP(h)
	return ip != nil && ip.IsLoopback()
}

// errNotFound is a 404 from the authorization server (discovery tries the
// next well-known location).
var errNotFound = errors.New("not found")

// getJSON fetches u and decodes its JSON body into v, reading at most
// fc.maxBytes.
func (fc *fetchConfig) getJSON(ctx context.Context, u string, v any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return err
	}
	req.Header.Set("Accept", "application/json")
	return fc.doJSON(req, v)
}

// doJSON sends req with the fetch timeout (not the caller's cancellation:
// a fetch that many requests wait on should not fail because one of them
// went away) and decodes a 200 JSON answer into v.
func (fc *fetchConfig) doJSON(req *http.Request, v any) error {
	if err := checkFetchURL(req.URL.String()); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(req.Context()), fc.timeout)
	defer cancel()
	resp, err := fc.client.Do(req.WithContext(ctx))
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, err := httpguard.ReadLimited(resp.Body, fc.maxBytes)
	var tl *httpguard.TooLongError
	if errors.As(err, &tl) {
		return fmt.Errorf("%s: response larger than %d bytes", req.URL, fc.maxBytes)
	}
	if err != nil {
		return fmt.Errorf("%s: reading the response: %v", req.URL, err)
	}
	if resp.StatusCode == http.StatusNotFound {
		return fmt.Errorf("%s: %w", req.URL, errNotFound)
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s: status %d", req.URL, resp.StatusCode)
	}
	if ct := resp.Header.Get("Content-Type"); ct != "" {
		mt, _, _ := mime.ParseMediaType(ct)
		if mt != "application/json" && !strings.HasSuffix(mt, "+json") {
			return fmt.Errorf("%s: content type %q is not JSON", req.URL, ct)
		}
	}
	// The authorization server's answer is read as the wire is: exact
	// member names, no duplicates, valid UTF-8.
	if err := wirejson.Unmarshal(body, v); err != nil {
		return fmt.Errorf("%s: invalid JSON: %v", req.URL, err)
	}
	return nil
}

// metadataURLs lists where an issuer's metadata may be, in the order MCP
// clients try them: RFC 8414 (path inserted after the well-known prefix),
// then OpenID Connect Discovery (path inserted, then appended).
func metadataURLs(issuer string) ([]string, error) {
	u, err := url.Parse(issuer)
	if err != nil {
		return nil, err
	}
	path := strings.TrimSuffix(u.EscapedPath(), "/")
	base := u.Scheme + "://" + u.Host
	if path == "" {
		return []string{base + "/.well-known/oauth-authorization-server", base + "/.well-known/openid-configuration"}, nil
	}
	return []string{
		base + "/.well-known/oauth-authorization-server" + path,
		base + "/.well-known/openid-configuration" + path,
		base + path + "/.well-known/openid-configuration",
	}, nil
}

// discover fetches the issuer's metadata and checks that it names the
// issuer (RFC 8414 section 3.3).
func (fc *fetchConfig) discover(ctx context.Context, issuer string) (*AuthServerMetadata, error) {
	urls, err := metadataURLs(issuer)
	if err != nil {
		return nil, err
	}
	var errs []error
	for _, u := range urls {
		var md AuthServerMetadata
		err := fc.getJSON(ctx, u, &md)
		if errors.Is(err, errNotFound) {
			errs = append(errs, err)
			continue
		}
		if err != nil {
			return nil, err
		}
		if md.Issuer != issuer {
			return nil, fmt.Errorf("%s: metadata names issuer %q, not %q", u, md.Issuer, issuer)
		}
		return &md, nil
	}
	return nil, fmt.Errorf("no authorization server metadata for %s: %w", issuer, errors.Join(errs...))
}
