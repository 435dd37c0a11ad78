package oauth_test

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/toolwire/toolwire/internal/oauthtest"
	"github.com/toolwire/toolwire/oauth"
)

// refreshRefused says whether the authorization server refuses rt now.
func refreshRefused(t *testing.T, as *oauthtest.Server, tok *oauth.Token) bool {
	t.Helper()
	form := url.Values{"grant_type": {"refresh_token"}, "refresh_token": {tok.RefreshToken}}
	req, _ := http.NewRequest(http.MethodPost, as.URL+"/token", strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.SetBasicAuth(url.QueryEscape(tok.Client.ID), url.QueryEscape(tok.Client.Secret))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode == http.StatusBadRequest
}

// Logout revokes the refresh token, then the access token, at the
// advertised revocation endpoint, authenticating the client as the token
// endpoint does (here a confidential client, client_secret_basic), and
// deletes them; the revoked refresh token is refused afterwards.
func TestLogoutRevokes(t *testing.T) {
	for _, c := range []struct {
		name   string
		opts   oauthtest.Options
		client func(*oauth.Config)
	}{
		{"dynamic public client", oauthtest.Options{}, nil},
		{"confidential client", oauthtest.Options{Clients: map[string]string{"conf": "conf-secret-value"}}, func(cfg *oauth.Config) {
			cfg.ClientID, cfg.ClientSecret = "conf", "conf-secret-value"
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			e := newEnv(t, c.opts, nil)
			cfg := e.config()
			store := &oauth.FileStore{Dir: t.TempDir() + "/tokens"}
			cfg.Store = store
			if c.client != nil {
				c.client(&cfg)
			}
			a := newAuthorizer(t, cfg)
			ctx := context.Background()
			if err := a.Login(ctx); err != nil {
				t.Fatal(err)
			}
			tok := a.Token(ctx)
			if tok == nil || tok.RefreshToken == "" {
				t.Fatalf("token %v", tok)
			}
			// A new Authorizer (the next run) logs out from the store.
			b := newAuthorizer(t, cfg)
			rep, err := b.LogoutReport(ctx)
			if err != nil || !rep.HadToken || !rep.Revoked || rep.RevocationEndpoint != e.as.URL+"/revoke" || rep.Issuer != e.as.URL {
				t.Fatalf("LogoutReport = %+v, %v", rep, err)
			}
			forms := e.as.RevocationForms()
			if len(forms) != 2 || forms[0].Get("token") != tok.RefreshToken || forms[0].Get("token_type_hint") != "refresh_token" ||
				forms[1].Get("token") != tok.AccessToken || forms[1].Get("token_type_hint") != "access_token" {
				t.Fatalf("revocation requests: %d", len(forms))
			}
			if c.client != nil && (forms[0].Get("client_secret") != "" || forms[0].Get("client_id") != "") {
				t.Error("the confidential client did not authenticate with client_secret_basic")
			}
			if !refreshRefused(t, e.as, tok) {
				t.Error("the revoked refresh token still works")
			}
			if _, ok := e.as.Verify(tok.AccessToken); ok {
				t.Error("the revoked access token still verifies")
			}
			key, _ := oauth.CanonicalResource(e.endpoint)
			if st, _ := store.Load(ctx, key); st != nil || b.Token(ctx) != nil {
				t.Error("the token survived Logout")
			}
			// Nothing left: a second logout revokes nothing.
			if rep, err := b.LogoutReport(ctx); err != nil || rep.HadToken || len(e.as.RevocationForms()) != 2 {
				t.Fatalf("second logout: %+v %v", rep, err)
			}
		})
	}
}

// Without a revocation endpoint Logout only deletes, without error; when
// revocation fails it deletes all the same and returns an error wrapping
// ErrNotRevoked that shows no token.
func TestLogoutWithoutRevocation(t *testing.T) {
	for _, c := range []struct {
		name string
		opts oauthtest.Options
		fail bool
	}{
		{"no endpoint", oauthtest.Options{NoRevocation: true}, false},
		{"failing endpoint", oauthtest.Options{RevocationStatus: http.StatusServiceUnavailable}, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			e := newEnv(t, c.opts, nil)
			cfg := e.config()
			store := &oauth.MemoryStore{}
			cfg.Store = store
			a := newAuthorizer(t, cfg)
			ctx := context.Background()
			if err := a.Login(ctx); err != nil {
				t.Fatal(err)
			}
			tok := a.Token(ctx)
			rep, err := a.LogoutReport(ctx)
			if rep.Revoked || !rep.HadToken {
				t.Fatalf("report %+v", rep)
			}
			if c.fail {
				if !errors.Is(err, oauth.ErrNotRevoked) || !errors.Is(rep.RevokeErr, oauth.ErrNotRevoked) || !strings.Contains(err.Error(), "HTTP 503") {
					t.Fatalf("error %v, want ErrNotRevoked with the 503", err)
				}
				if s := err.Error(); strings.Contains(s, tok.AccessToken) || strings.Contains(s, tok.RefreshToken) {
					t.Fatalf("the error shows a token: %s", s)
				}
				if refreshRefused(t, e.as, tok) {
					t.Fatal("the refresh token was revoked although revocation failed")
				}
			} else if err != nil || rep.RevocationEndpoint != "" || rep.RevokeErr != nil {
				t.Fatalf("no revocation endpoint: %+v %v", rep, err)
			}
			key, _ := oauth.CanonicalResource(e.endpoint)
			if st, _ := store.Load(ctx, key); st != nil || a.Token(ctx) != nil {
				t.Error("the token survived Logout")
			}
		})
	}
}
