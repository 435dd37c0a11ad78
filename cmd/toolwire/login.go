package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/toolwire/toolwire/internal/units"
	"github.com/toolwire/toolwire/oauth"
)

// defaultLoginTimeout bounds `toolwire login`: discovery, registration,
// the user in the browser, and the code exchange.
const defaultLoginTimeout = 5 * time.Minute

type loginFlags struct {
	tokenDir          string
	scopes            []string
	clientID          string
	clientSecret      string
	clientMetadataURL string
	redirectPort      int
	noBrowser         bool
	timeout           time.Duration
}

func newLoginCmd() *cobra.Command {
	var o loginFlags
	cmd := &cobra.Command{
		Use:   "login URL",
		Short: "Log in to an OAuth-protected MCP server and keep its tokens for the other commands",
		Long: "Log in to an MCP server that requires OAuth 2.1 (Streamable HTTP only) with the authorization code\n" +
			"flow: toolwire discovers the server's authorization server, registers (a pre-registered --client-id,\n" +
			"a --client-metadata-url document, or dynamic registration), prints the authorization URL on stderr,\n" +
			"opens a browser where one exists (--no-browser only prints it), and waits for the redirect on\n" +
			"http://127.0.0.1:PORT/callback. It prints the resource, the authorization server, the scopes granted\n" +
			"and the expiry, never the tokens.\n\n" +
			"The tokens are stored in a file of their own (mode 0600) in a directory of mode 0700: --token-dir,\n" +
			"else $" + envTokenDir + ", else toolwire/tokens under $XDG_STATE_HOME or ~/.local/state. Every\n" +
			"command given the same URL (tools, call, resources, read, prompts, prompt, tasks, task) then uses\n" +
			"them, refreshing them when they expire; when they are gone or refused for good, it fails with\n" +
			"\"authorization required: run `toolwire login URL`\" rather than open a browser. toolwire logout\n" +
			"revokes them at the authorization server (where it has a revocation endpoint) and deletes them.\n\n" +
			"--redirect-port 0 (the default) listens on any free port: fine for dynamic registration and for\n" +
			"authorization servers that accept any loopback port (RFC 8252); a pre-registered client whose\n" +
			"redirect URI names a port needs that port.\n\n" +
			"  toolwire login https://mcp.example.com/mcp\n" +
			"  toolwire login https://mcp.example.com/mcp --client-id my-app --redirect-port 8976 --scope files:read\n\n" +
			"Exit status: 0 logged in, 1 the login failed or timed out, 2 usage error.",
		RunE: func(cmd *cobra.Command, args []string) error { return runLogin(cmd, &o, args) },
	}
	fl := cmd.Flags()
	fl.StringVar(&o.tokenDir, "token-dir", "", "directory to store the tokens in (default: $"+envTokenDir+", else toolwire/tokens under\n"+
		"$XDG_STATE_HOME or ~/.local/state); created with mode 0700")
	fl.StringSliceVar(&o.scopes, "scope", nil, "scopes to ask for besides those the server asks for (comma-separated, repeatable)")
	fl.StringVar(&o.clientID, "client-id", "", "a client pre-registered with the authorization server (default: a Client ID Metadata\n"+
		"Document with --client-metadata-url, else dynamic registration)")
	fl.StringVar(&o.clientSecret, "client-secret", "", "the secret of --client-id, for a confidential client (default: $"+envClientSecret+",\n"+
		"which keeps it out of the process list)")
	fl.StringVar(&o.clientMetadataURL, "client-metadata-url", "", "https URL of toolwire's Client ID Metadata Document, used as the client id where\n"+
		"the authorization server supports them")
	fl.IntVar(&o.redirectPort, "redirect-port", 0, "loopback port of the redirect URI http://127.0.0.1:PORT/callback (0: any free port)")
	fl.BoolVar(&o.noBrowser, "no-browser", false, "only print the authorization URL; do not open a browser")
	fl.Var(units.Duration(&o.timeout, defaultLoginTimeout), "timeout", "longest the whole login may take, the time in the browser included")
	return cmd
}

// httpTargetOnly reads the one URL of login and logout.
func httpTargetOnly(cmd *cobra.Command, args []string, name string) (target, error) {
	t, rest, err := splitTarget(cmd, args)
	if err != nil {
		return target{}, err
	}
	if t.url == "" {
		return target{}, usageError{name + " is for http(s) servers: a stdio server takes its credentials from its environment"}
	}
	if len(rest) > 0 {
		return target{}, usageError{fmt.Sprintf("unexpected arguments %q: %s takes only the server's URL", rest, name)}
	}
	return t, nil
}

// prepareTokenDir creates the token directory (mode 0700) and refuses one
// that group or others may access: the store would refuse it too, after
// the login.
func prepareTokenDir(dir string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("token directory: %w", err)
	}
	fi, err := os.Stat(dir)
	if err != nil {
		return fmt.Errorf("token directory: %w", err)
	}
	if !fi.IsDir() {
		return fmt.Errorf("token directory %s is not a directory", dir)
	}
	if fi.Mode().Perm()&0o077 != 0 {
		return fmt.Errorf("token directory %s has mode %v; tokens are only kept in a directory of the user's alone (chmod 700 %s)",
			dir, fi.Mode().Perm(), dir)
	}
	return nil
}

func runLogin(cmd *cobra.Command, o *loginFlags, args []string) error {
	t, err := httpTargetOnly(cmd, args, "login")
	if err != nil {
		return err
	}
	if o.redirectPort < 0 || o.redirectPort > 65535 {
		return usageError{fmt.Sprintf("invalid --redirect-port %d: want 0 (any free port) to 65535", o.redirectPort)}
	}
	if o.timeout <= 0 {
		return usageError{"--timeout must be positive"}
	}
	secret := o.clientSecret
	if secret == "" {
		secret = os.Getenv(envClientSecret)
	}
	if o.clientSecret != "" && o.clientID == "" {
		return usageError{"--client-secret needs --client-id"}
	}
	if o.clientID == "" {
		secret = "" // $TOOLWIRE_CLIENT_SECRET belongs to a --client-id
	}
	dir, err := tokenDirectory(o.tokenDir)
	if err != nil {
		return err
	}
	port := o.redirectPort
	if port == 0 {
		// A free port now; LoopbackUserAgent listens on it once the
		// authorization URL is ready.
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return fmt.Errorf("finding a free port for the redirect: %w", err)
		}
		port = ln.Addr().(*net.TCPAddr).Port
		ln.Close()
	}
	redirect := fmt.Sprintf("http://127.0.0.1:%d/callback", port)
	errw := cmd.ErrOrStderr()
	open := oauth.OpenBrowser
	if o.noBrowser {
		open = func(context.Context, string) error { return nil }
	}
	ua := oauth.LoopbackUserAgent{
		Open: open,
		Prompt: func(u string) {
			fmt.Fprintf(errw, "To log in, open this URL in a browser (toolwire waits for the redirect to %s):\n\n  %s\n\n", redirect, u)
		},
	}
	store := &oauth.FileStore{Dir: dir}
	a, err := oauth.NewAuthorizer(oauth.Config{
		Endpoint: t.url, UserAgent: ua, RedirectURI: redirect,
		ClientName: "toolwire", SoftwareID: "toolwire",
		ClientID: o.clientID, ClientSecret: secret, ClientMetadataURL: o.clientMetadataURL,
		Scopes: o.scopes, Store: store,
		Logger: slog.New(slog.NewTextHandler(errw, &slog.HandlerOptions{Level: slog.LevelWarn})),
	})
	if err != nil {
		return usageError{err.Error()}
	}
	if err := prepareTokenDir(dir); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(cmd.Context(), o.timeout)
	defer cancel()
	if err := a.Login(ctx); err != nil {
		if errors.Is(err, context.DeadlineExceeded) && ctx.Err() != nil {
			return fmt.Errorf("login to %s timed out after %v (raise --timeout)", t.url, o.timeout)
		}
		return fmt.Errorf("login to %s failed: %w", t.url, err)
	}
	key, err := oauth.CanonicalResource(t.url)
	if err != nil {
		return err
	}
	tok, err := store.Load(ctx, key)
	if err != nil || tok == nil {
		return fmt.Errorf("logged in, but the tokens could not be stored in %s: %v", dir, err)
	}
	out := cmd.OutOrStdout()
	fmt.Fprintf(out, "Logged in to %s\n", tok.Resource)
	fmt.Fprintf(out, "  authorization server: %s\n", tok.Issuer)
	scopes := strings.Join(tok.Scopes, " ")
	if scopes == "" {
		scopes = "(none named)"
	}
	fmt.Fprintf(out, "  scopes granted:       %s\n", scopes)
	if tok.Expiry.IsZero() {
		fmt.Fprintf(out, "  access token expires: (not said)\n")
	} else {
		fmt.Fprintf(out, "  access token expires: %s (in %v)\n", tok.Expiry.Local().Format(time.RFC3339), time.Until(tok.Expiry).Round(time.Second))
	}
	refresh := "none: log in again when the access token expires"
	if tok.RefreshToken != "" {
		refresh = "kept; toolwire refreshes the access token when it expires"
	}
	fmt.Fprintf(out, "  refresh token:        %s\n", refresh)
	fmt.Fprintf(out, "  client:               %s (%s)\n", tok.Client.ID, orText(tok.Client.Kind, "registered"))
	fmt.Fprintf(out, "  stored in:            %s (mode 0600)\n", dir)
	return nil
}

func orText(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// logoutTimeout bounds `toolwire logout`: reading the authorization
// server's metadata and the two revocation requests.
const logoutTimeout = time.Minute

func newLogoutCmd() *cobra.Command {
	var tokenDir string
	cmd := &cobra.Command{
		Use:   "logout URL",
		Short: "Revoke and delete the tokens `toolwire login` stored for an MCP server",
		Long: "Revoke the tokens `toolwire login URL` stored for the server at its authorization server, when that\n" +
			"advertises a revocation endpoint (RFC 7009: the refresh token, then the access token), and delete\n" +
			"them. It says which happened: revoked at the server and deleted, or only deleted locally (no\n" +
			"revocation endpoint, or the revocation failed: then the access token, and maybe the refresh token,\n" +
			"stay valid at the server until they expire; a warning on stderr says why). The tokens are deleted\n" +
			"either way. Without stored tokens it says so and exits 0.\n\n" +
			"Exit status: 0 logged out (revoked or not), 1 the tokens could not be deleted, 2 usage error.",
		RunE: func(cmd *cobra.Command, args []string) error {
			t, err := httpTargetOnly(cmd, args, "logout")
			if err != nil {
				return err
			}
			dir, err := tokenDirectory(tokenDir)
			if err != nil {
				return err
			}
			key, err := oauth.CanonicalResource(t.url)
			if err != nil {
				return usageError{err.Error()}
			}
			store := &oauth.FileStore{Dir: dir}
			ctx, cancel := context.WithTimeout(cmd.Context(), logoutTimeout)
			defer cancel()
			tok, lerr := store.Load(ctx, key)
			out, errw := cmd.OutOrStdout(), cmd.ErrOrStderr()
			if lerr == nil && tok == nil {
				fmt.Fprintf(out, "Not logged in to %s: no tokens stored in %s\n", t.url, dir)
				return nil
			}
			from := ""
			if tok != nil && tok.Issuer != "" {
				from = " (issued by " + tok.Issuer + ")"
			}
			// Revoke through an Authorizer over the same store: it reads
			// the authorization server's metadata and authenticates the
			// client as the token requests did, with the same guards.
			var rep oauth.LogoutReport
			var derr error
			a, aerr := oauth.NewAuthorizer(oauth.Config{Endpoint: t.url, Store: store, NoInteractive: true})
			switch {
			case lerr != nil:
				rep.RevokeErr = fmt.Errorf("%w: the stored tokens cannot be read: %w", oauth.ErrNotRevoked, lerr)
				derr = store.Delete(ctx, key)
			case aerr != nil:
				rep.RevokeErr = fmt.Errorf("%w: %w", oauth.ErrNotRevoked, aerr)
				derr = store.Delete(ctx, key)
			default:
				rep, err = a.LogoutReport(ctx)
				if err != nil && !errors.Is(err, oauth.ErrNotRevoked) {
					derr = err
				}
			}
			if derr != nil && !errors.Is(derr, fs.ErrNotExist) {
				return fmt.Errorf("deleting the tokens of %s: %w", t.url, derr)
			}
			switch {
			case rep.Revoked:
				fmt.Fprintf(out, "Logged out of %s: revoked the tokens at the authorization server%s and deleted them from %s.\n", t.url, from, dir)
			case rep.RevokeErr != nil:
				fmt.Fprintf(out, "Logged out of %s: deleted the stored tokens%s from %s, locally only.\n", t.url, from, dir)
				fmt.Fprintf(out, "They were not revoked: the revocation failed, so they may stay valid at the server until they expire.\n")
				fmt.Fprintf(errw, "warning: revoking the tokens of %s: %v\n", t.url, rep.RevokeErr)
			default:
				fmt.Fprintf(out, "Logged out of %s: deleted the stored tokens%s from %s, locally only.\n", t.url, from, dir)
				fmt.Fprintf(out, "They were not revoked: the authorization server advertises no revocation endpoint, so the access token stays valid there until it expires.\n")
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&tokenDir, "token-dir", "", "directory of the stored tokens (default: $"+envTokenDir+", else toolwire/tokens under\n"+
		"$XDG_STATE_HOME or ~/.local/state)")
	return cmd
}
