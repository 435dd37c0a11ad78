package oauth

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"syscall"
	"time"

	"github.com/toolwire/toolwire/internal/httpguard"
)

// Limits on what the package reads and waits for.
const (
	// DefaultMaxResponseBytes bounds a metadata document, a registration
	// response and a token (or revocation, or token exchange) response when
	// Config.MaxResponseBytes (TokenEndpoint.MaxResponseBytes,
	// TokenExchange.MaxResponseBytes) is 0.
	DefaultMaxResponseBytes = 256 << 10
	// DefaultMaxRedirects is how many redirects one request follows when
	// Config.MaxRedirects (TokenEndpoint.MaxRedirects) is 0.
	DefaultMaxRedirects = 3

	maxStoredTokenBytes = DefaultMaxResponseBytes // a FileStore token file
	defaultTimeout      = 30 * time.Second
)

// responseLimit resolves a configured response bound: 0 (or less) is
// DefaultMaxResponseBytes.
func responseLimit(n int) int64 {
	if n <= 0 {
		return DefaultMaxResponseBytes
	}
	return int64(n)
}

// redirectLimit is a configured redirect bound (0: DefaultMaxRedirects, a
// negative number none) as httpguard.Outbound takes it.
func redirectLimit(n int) int {
	switch {
	case n == 0:
		return DefaultMaxRedirects
	case n < 0:
		return -1
	}
	return n
}

// ErrUnsafeURL is wrapped by every refusal of a URL or address by the
// package's safety rules (https, the address guard).
var ErrUnsafeURL = errors.New("refused by the OAuth client's network safety rules")

// netPolicy is the address guard: which destinations the package may
// connect to.
type netPolicy struct {
	allowLoopback bool // the MCP endpoint is loopback, or Config.AllowLoopback
	allowPrivate  bool // Config.AllowPrivateNetworks
}

// checkAddr refuses addresses the package must not reach: unspecified,
// multicast, link-local (169.254.169.254, the cloud metadata service,
// among them), private (RFC 1918, RFC 4193 unique local, CGNAT) unless
// allowed, and loopback unless allowed.
func (p netPolicy) checkAddr(a netip.Addr) error {
	a = a.Unmap()
	switch {
	case !a.IsValid(), a.IsUnspecified():
		return fmt.Errorf("%w: the unspecified address %s", ErrUnsafeURL, a)
	case a.IsMulticast() || a.IsInterfaceLocalMulticast() || a.IsLinkLocalMulticast():
		return fmt.Errorf("%w: the multicast address %s", ErrUnsafeURL, a)
	case a.IsLinkLocalUnicast():
		return fmt.Errorf("%w: the link-local address %s", ErrUnsafeURL, a)
	case a.IsLoopback():
		if !p.allowLoopback {
			return fmt.Errorf("%w: the loopback address %s (the MCP endpoint is not loopback)", ErrUnsafeURL, a)
		}
	case a.IsPrivate() || cgnat.Contains(a) || a == broadcast:
		if !p.allowPrivate {
			return fmt.Errorf("%w: the private address %s", ErrUnsafeURL, a)
		}
	}
	return nil
}

var (
	cgnat     = netip.MustParsePrefix("100.64.0.0/10")
	broadcast = netip.MustParseAddr("255.255.255.255")
)

// control is the net.Dialer's Control: it runs on the address actually
// dialled, after name resolution, so a name that resolves (or later
// rebinds) to a refused address is refused.
func (p netPolicy) control(_, address string, _ syscall.RawConn) error {
	host, _, err := net.SplitHostPort(address)
	if err != nil {
		return fmt.Errorf("%w: %q", ErrUnsafeURL, address)
	}
	a, err := netip.ParseAddr(host)
	if err != nil {
		return fmt.Errorf("%w: %q is not an IP address", ErrUnsafeURL, host)
	}
	return p.checkAddr(a)
}

// isLoopbackHost says whether a URL host names the loopback interface:
// localhost (and *.localhost), 127.0.0.0/8, ::1.
func isLoopbackHost(host string) bool {
	h := strings.ToLower(strings.TrimSuffix(host, "."))
	if h == "localhost" || strings.HasSuffix(h, ".localhost") {
		return true
	}
	a, err := netip.ParseAddr(strings.Trim(h, "[]"))
	return err == nil && a.Unmap().IsLoopback()
}

// checkURL applies the https rule: an absolute https URL, or http on a
// loopback host when loopback is allowed; no user info, no fragment. It
// also refuses an IP-literal host the address guard would refuse, so the
// refusal names the URL.
func (p netPolicy) checkURL(what, raw string) (*url.URL, error) {
	u, err := url.Parse(raw)
	if err != nil || !u.IsAbs() || u.Host == "" || u.Opaque != "" {
		return nil, fmt.Errorf("%w: the %s %q is not an absolute URL", ErrUnsafeURL, what, truncate(raw, 200))
	}
	scheme := strings.ToLower(u.Scheme)
	loop := isLoopbackHost(u.Hostname())
	switch {
	case u.User != nil:
		return nil, fmt.Errorf("%w: the %s %q carries user info", ErrUnsafeURL, what, truncate(raw, 200))
	case u.Fragment != "" || strings.Contains(raw, "#"):
		return nil, fmt.Errorf("%w: the %s %q has a fragment", ErrUnsafeURL, what, truncate(raw, 200))
	case scheme == "https":
	case scheme == "http" && loop && p.allowLoopback:
	case scheme == "http":
		return nil, fmt.Errorf("%w: the %s %q is not https (http is allowed only on a loopback host)", ErrUnsafeURL, what, truncate(raw, 200))
	default:
		return nil, fmt.Errorf("%w: the %s %q is not https", ErrUnsafeURL, what, truncate(raw, 200))
	}
	if a, err := netip.ParseAddr(strings.Trim(u.Hostname(), "[]")); err == nil {
		if err := p.checkAddr(a); err != nil {
			return nil, fmt.Errorf("the %s %q: %w", what, truncate(raw, 200), err)
		}
	} else if loop && !p.allowLoopback {
		return nil, fmt.Errorf("%w: the %s %q is on a loopback host", ErrUnsafeURL, what, truncate(raw, 200))
	}
	return u, nil
}

// newGuardedClient returns the client every request of the package goes
// through: no proxy (the guard must see the real destination), the
// address guard at dial time, the https rule on every redirect (at most
// maxRedirects, as redirectLimit resolves it), and a timeout.
func newGuardedClient(p netPolicy, timeout time.Duration, maxRedirects int) *http.Client {
	if timeout <= 0 {
		timeout = defaultTimeout
	}
	d := &net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second, Control: p.control}
	tr := &http.Transport{
		Proxy:                 nil,
		DialContext:           d.DialContext,
		ForceAttemptHTTP2:     true,
		MaxIdleConns:          10,
		IdleConnTimeout:       60 * time.Second,
		TLSHandshakeTimeout:   10 * time.Second,
		ResponseHeaderTimeout: timeout,
	}
	return httpguard.Outbound{
		Transport: tr, Timeout: timeout, Redirects: httpguard.CheckedRedirects, MaxRedirects: redirectLimit(maxRedirects), MaxRedirectsName: "MaxRedirects",
		Check: func(u *url.URL) error {
			_, err := p.checkURL("redirect target", u.String())
			return err
		},
	}.Client()
}

// readResponse is httpguard.ReadLimited for a response bounded by
// MaxResponseBytes (of Config, TokenEndpoint or TokenExchange), which a
// refusal names.
func readResponse(r io.Reader, max int64) ([]byte, error) {
	data, err := httpguard.ReadLimited(r, max)
	var tl *httpguard.TooLongError
	if errors.As(err, &tl) {
		return nil, fmt.Errorf("the response is %w (MaxResponseBytes)", err)
	}
	return data, err
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// ctxErr prefers the context's error to the transport's wrapping of it.
func ctxErr(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	return err
}
