package oauth

import (
	"context"
	"errors"
	"fmt"
	"html"
	"net"
	"net/http"
	"net/url"
	"os/exec"
	"runtime"
	"strings"
	"time"

	"github.com/toolwire/toolwire/internal/httpguard"
)

// UserAgent takes the user through the authorization endpoint: given the
// authorization URL and the redirect URI it carries, it returns the URL the
// authorization server redirected to (with code, state, iss, or error).
// A CLI opens a browser and listens on the loopback redirect URI
// (LoopbackUserAgent); a test or an automated client GETs the URL without
// following the redirect (NoRedirectUserAgent).
type UserAgent interface {
	Authorize(ctx context.Context, authURL, redirectURI string) (*url.URL, error)
}

// UserAgentFunc adapts a function to UserAgent.
type UserAgentFunc func(ctx context.Context, authURL, redirectURI string) (*url.URL, error)

// Authorize calls f.
func (f UserAgentFunc) Authorize(ctx context.Context, authURL, redirectURI string) (*url.URL, error) {
	return f(ctx, authURL, redirectURI)
}

// NoRedirectUserAgent GETs the authorization URL with Client (nil: the
// Authorizer's guarded client is not available here, so a plain client
// with a timeout) without following redirects, and returns the Location of
// the redirect: for an authorization server that approves at once, as the
// conformance suite's and internal/oauthtest's do.
type NoRedirectUserAgent struct {
	Client *http.Client
}

// Authorize GETs authURL and reads the redirect.
func (u NoRedirectUserAgent) Authorize(ctx context.Context, authURL, _ string) (*url.URL, error) {
	hc := httpguard.Outbound{Base: u.Client, Timeout: defaultTimeout}.Client()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, authURL, nil)
	if err != nil {
		return nil, err
	}
	resp, err := hc.Do(req)
	if err != nil {
		return nil, fmt.Errorf("oauth: authorization request: %w", ctxErr(ctx, err))
	}
	resp.Body.Close()
	if resp.StatusCode/100 != 3 {
		return nil, &Error{Op: "authorization", StatusCode: resp.StatusCode, Description: "the authorization endpoint did not redirect"}
	}
	loc, err := resp.Location()
	if err != nil {
		return nil, &Error{Op: "authorization", StatusCode: resp.StatusCode, Description: "the redirect has no usable Location"}
	}
	return loc, nil
}

// LoopbackUserAgent is a CLI's user agent: it listens on the redirect URI
// (http on a loopback host, with a port: "http://127.0.0.1:8976/callback"),
// opens the authorization URL with Open (nil: OpenBrowser), and returns the
// first request to the redirect path. Prompt, when set, is told the URL,
// for a user whose browser does not open.
type LoopbackUserAgent struct {
	Open   func(ctx context.Context, url string) error
	Prompt func(url string)
}

// Authorize runs the loopback redirect.
func (l LoopbackUserAgent) Authorize(ctx context.Context, authURL, redirectURI string) (*url.URL, error) {
	ru, err := url.Parse(redirectURI)
	if err != nil || ru.Scheme != "http" || !isLoopbackHost(ru.Hostname()) || ru.Port() == "" {
		return nil, fmt.Errorf("oauth: the redirect URI %q is not http on a loopback host with a port", redirectURI)
	}
	ln, err := net.Listen("tcp", ru.Host)
	if err != nil {
		return nil, fmt.Errorf("oauth: listening for the redirect: %w", err)
	}
	got := make(chan *url.URL, 1)
	path := ru.EscapedPath()
	if path == "" {
		path = "/"
	}
	srv := &http.Server{
		ReadHeaderTimeout: 10 * time.Second,
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.EscapedPath() != path {
				http.NotFound(w, r)
				return
			}
			cb := *ru
			cb.RawQuery = r.URL.RawQuery
			select {
			case got <- &cb:
			default:
			}
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			msg := "Authorization complete. You can close this window."
			if e := r.URL.Query().Get("error"); e != "" {
				msg = "Authorization failed: " + e
			}
			fmt.Fprintf(w, "<!doctype html><title>toolwire</title><p>%s</p>", html.EscapeString(msg))
		}),
	}
	go func() { _ = srv.Serve(ln) }()
	defer func() {
		// Shutdown, not Close: the page the browser is waiting for is
		// written before the listener goes.
		sctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		if srv.Shutdown(sctx) != nil {
			srv.Close()
		}
	}()
	if l.Prompt != nil {
		l.Prompt(authURL)
	}
	open := l.Open
	if open == nil {
		open = OpenBrowser
	}
	if err := open(ctx, authURL); err != nil && l.Prompt == nil {
		return nil, err
	}
	select {
	case u := <-got:
		return u, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// OpenBrowser opens an http or https URL in the user's browser. The URL
// is passed as one argument to the platform's opener (xdg-open, open,
// rundll32), never through a shell, and anything but an absolute http or
// https URL is refused.
func OpenBrowser(ctx context.Context, raw string) error {
	cmd, err := browserCommand(ctx, runtime.GOOS, raw)
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("oauth: opening a browser: %w", err)
	}
	go func() { _ = cmd.Wait() }()
	return nil
}

func browserCommand(ctx context.Context, goos, raw string) (*exec.Cmd, error) {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || strings.ContainsAny(raw, "\x00\r\n") {
		return nil, errors.New("oauth: refusing to open a URL that is not http or https")
	}
	s := u.String()
	switch goos {
	case "darwin":
		return exec.CommandContext(ctx, "open", s), nil
	case "windows":
		return exec.CommandContext(ctx, "rundll32", "url.dll,FileProtocolHandler", s), nil
	default:
		return exec.CommandContext(ctx, "xdg-open", s), nil
	}
}
