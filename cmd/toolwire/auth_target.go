package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"
	"github.com/toolwire/toolwire/oauth"
)

// Environment variables of the client side of OAuth.
const (
	envTokenDir     = "TOOLWIRE_TOKEN_DIR"     // where login keeps tokens (overrides the default)
	envClientSecret = "TOOLWIRE_CLIENT_SECRET" // --client-secret, kept out of the process list
)

// oauthTargetFlags are the OAuth flags of every command that takes a
// TARGET: where `toolwire login` stored the tokens, or the client
// credentials of a machine client.
type oauthTargetFlags struct {
	tokenDir     string
	clientID     string
	clientSecret string
}

func (o *oauthTargetFlags) register(cmd *cobra.Command) {
	fl := cmd.Flags()
	fl.StringVar(&o.tokenDir, "token-dir", "", "directory of the tokens that toolwire login stored (default: $"+envTokenDir+", else toolwire/tokens\n"+
		"under $XDG_STATE_HOME or ~/.local/state)")
	fl.StringVar(&o.clientID, "client-id", "", "HTTP: authorize as this pre-registered OAuth client with the client credentials grant\n"+
		"(a machine client: no login, tokens kept in memory only)")
	fl.StringVar(&o.clientSecret, "client-secret", "", "the secret of --client-id (default: $"+envClientSecret+", which keeps it out of the process list)")
}

// tokenDirectory is where tokens are kept: --token-dir, else
// $TOOLWIRE_TOKEN_DIR, else tokens in toolwire's directory under the
// user's state directory (the base of serve's --data-dir default).
func tokenDirectory(flag string) (string, error) {
	if flag != "" {
		return flag, nil
	}
	if d := os.Getenv(envTokenDir); d != "" {
		return d, nil
	}
	d, err := defaultDataDir()
	if err != nil {
		return "", fmt.Errorf("no directory for tokens (%v): pass --token-dir or set $%s", err, envTokenDir)
	}
	return filepath.Join(d, "tokens"), nil
}

// secret is --client-secret, else $TOOLWIRE_CLIENT_SECRET.
func (o *oauthTargetFlags) secret() string {
	if o.clientSecret != "" {
		return o.clientSecret
	}
	return os.Getenv(envClientSecret)
}

// authFor returns the HTTPAuth of an HTTP target: the client credentials
// grant with --client-id; else the tokens `toolwire login` stored, used
// and refreshed without ever starting a browser flow (a 401 that needs
// one fails with loginRequiredError); nil when the user sets the
// Authorization header, or for a plain-http non-loopback URL, to which
// no token is ever sent.
func (o *oauthTargetFlags) authFor(url string, h http.Header, errw io.Writer) (*cliAuth, error) {
	logger := slog.New(slog.NewTextHandler(errw, &slog.HandlerOptions{Level: slog.LevelWarn}))
	if o.clientID != "" {
		if h.Get("Authorization") != "" {
			return nil, usageError{"--client-id and an Authorization --header exclude each other"}
		}
		a, err := oauth.NewAuthorizer(oauth.Config{Endpoint: url, Grant: oauth.ClientCredentials{},
			ClientID: o.clientID, ClientSecret: o.secret(), Store: &oauth.MemoryStore{}, Logger: logger})
		if err != nil {
			return nil, usageError{"--client-id: " + err.Error()}
		}
		return &cliAuth{Authorizer: a, target: url, machine: true}, nil
	}
	if o.clientSecret != "" {
		return nil, usageError{"--client-secret needs --client-id"}
	}
	if h.Get("Authorization") != "" {
		return nil, nil // the user's own credentials
	}
	dir, err := tokenDirectory(o.tokenDir)
	if err != nil {
		return nil, nil // nowhere tokens could have been stored
	}
	a, err := oauth.NewAuthorizer(oauth.Config{Endpoint: url, Store: &oauth.FileStore{Dir: dir}, NoInteractive: true, Logger: logger})
	if err != nil {
		return nil, nil // http on a public host: never sent a token
	}
	return &cliAuth{Authorizer: a, target: url}, nil
}

// cliAuth is an *oauth.Authorizer whose "a browser flow is needed" failure
// tells the user to log in.
type cliAuth struct {
	*oauth.Authorizer
	target  string
	machine bool
}

// Challenge answers a 401 or 403 as the Authorizer does, turning
// oauth.ErrAuthorizationRequired into a loginRequiredError.
func (c *cliAuth) Challenge(ctx context.Context, req *http.Request, resp *http.Response) (bool, error) {
	if !c.machine && c.Token(ctx) == nil && !bearerChallenge(resp.Header.Values("WWW-Authenticate")) {
		return false, nil // not OAuth (an API key, Basic): the plain 401 or 403
	}
	retry, err := c.Authorizer.Challenge(ctx, req, resp)
	if errors.Is(err, oauth.ErrAuthorizationRequired) {
		return false, &loginRequiredError{target: c.target, forbidden: resp.StatusCode == http.StatusForbidden, err: err}
	}
	return retry, err
}

// bearerChallenge reports whether a WWW-Authenticate value names the
// Bearer or DPoP scheme.
func bearerChallenge(values []string) bool {
	for _, c := range oauth.ParseWWWAuthenticate(values) {
		if strings.EqualFold(c.Scheme, "bearer") || strings.EqualFold(c.Scheme, "dpop") {
			return true
		}
	}
	return false
}

// loginRequiredError: the server wants a token only `toolwire login` can
// get.
type loginRequiredError struct {
	target    string
	forbidden bool // 403 insufficient_scope: more scopes are needed
	err       error
}

func (e *loginRequiredError) Error() string {
	if e.forbidden {
		return "authorization required: the server wants scopes the stored token lacks; run `toolwire login " + e.target + " --scope SCOPE`"
	}
	return "authorization required: run `toolwire login " + e.target + "`"
}

func (e *loginRequiredError) Unwrap() error { return e.err }
