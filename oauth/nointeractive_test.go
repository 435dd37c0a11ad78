package oauth_test

import (
	"context"
	"errors"
	"testing"

	"github.com/toolwire/toolwire/internal/oauthtest"
	"github.com/toolwire/toolwire/oauth"
)

// TestNoInteractive: with Config.NoInteractive a 401 refreshes the stored
// token when it can, and otherwise fails with ErrAuthorizationRequired
// without registering a client or sending anyone to the authorization
// endpoint; Login still runs the flow.
func TestNoInteractive(t *testing.T) {
	e := newEnv(t, oauthtest.Options{}, nil)
	store := &oauth.MemoryStore{}
	noFlow := func() *oauth.Authorizer {
		cfg := e.config()
		cfg.UserAgent, cfg.RedirectURI = nil, ""
		cfg.NoInteractive, cfg.Store = true, store
		a := newAuthorizer(t, cfg)
		return a
	}

	// No token: no flow, no registration.
	if _, err := connect(t, e.endpoint, noFlow()); !errors.Is(err, oauth.ErrAuthorizationRequired) {
		t.Fatalf("without a token: %v, want ErrAuthorizationRequired", err)
	}
	if auths, tokens, regs := e.as.Counts(); auths+tokens+regs != 0 {
		t.Fatalf("authorizations %d, token requests %d, registrations %d; want none", auths, tokens, regs)
	}

	// Login (interactive) stores a token the non-interactive one uses.
	cfg := e.config()
	cfg.Store = store
	li := newAuthorizer(t, cfg)
	if err := li.Login(context.Background()); err != nil {
		t.Fatal(err)
	}
	c := mustConnect(t, e.endpoint, noFlow())
	echoOK(t, c)

	// The access token is rejected: the refresh token gets a new one.
	e.as.RevokeAccess()
	auths0, _, regs0 := e.as.Counts()
	if _, err := connect(t, e.endpoint, noFlow()); err != nil {
		t.Fatalf("after revocation, with a refresh token: %v", err)
	}

	// Rejected, and the refresh token is no good: no flow.
	e.as.RevokeAccess()
	tok, _ := store.Load(context.Background(), li.Token(context.Background()).Resource)
	if tok == nil {
		t.Fatal("no stored token")
	}
	tok.RefreshToken = "not-a-refresh-token"
	if err := store.Save(context.Background(), tok.Resource, tok); err != nil {
		t.Fatal(err)
	}
	if _, err := connect(t, e.endpoint, noFlow()); !errors.Is(err, oauth.ErrAuthorizationRequired) {
		t.Fatalf("with a bad refresh token: %v, want ErrAuthorizationRequired", err)
	}
	if auths, _, regs := e.as.Counts(); auths != auths0 || regs != regs0 {
		t.Fatalf("authorizations %d→%d, registrations %d→%d; want no new ones", auths0, auths, regs0, regs)
	}
}
