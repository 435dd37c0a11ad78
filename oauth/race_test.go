package oauth_test

import (
	"context"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/toolwire/toolwire/internal/oauthtest"
	"github.com/toolwire/toolwire/oauth"
)

// staleStore is a FileStore whose Load returns, while stale holds a
// token, that token once instead of the file's: another process has
// rotated the refresh token at the server but not yet stored the result.
type staleStore struct {
	*oauth.FileStore
	mu    sync.Mutex
	stale *oauth.Token
}

func (s *staleStore) Load(ctx context.Context, key string) (*oauth.Token, error) {
	s.mu.Lock()
	t := s.stale
	s.stale = nil
	s.mu.Unlock()
	if t != nil {
		return t, nil
	}
	return s.FileStore.Load(ctx, key)
}

// sharedEnv: an Authorizer logged in with a rotating authorization
// server, its token stored in a FileStore, and the config for more
// Authorizers over that store.
func sharedEnv(t *testing.T) (*env, oauth.Config, *oauth.FileStore) {
	t.Helper()
	e := newEnv(t, oauthtest.Options{}, nil) // rotation on
	store := &oauth.FileStore{Dir: t.TempDir() + "/tokens"}
	cfg := e.config()
	cfg.Store = store
	cfg.NoInteractive = true // a refresh, never a new authorization
	a := newAuthorizer(t, cfg)
	if err := a.Login(context.Background()); err != nil {
		t.Fatal(err)
	}
	return e, cfg, store
}

// authorizeToken runs Authorize on a request to the endpoint and returns
// the access token it carries.
func authorizeToken(t *testing.T, a *oauth.Authorizer, endpoint string) string {
	t.Helper()
	req, _ := http.NewRequestWithContext(context.Background(), http.MethodPost, endpoint, nil)
	if err := a.Authorize(req); err != nil {
		t.Error(err)
		return ""
	}
	h := req.Header.Get("Authorization")
	if len(h) < 8 {
		t.Errorf("no token sent: %q", h)
		return ""
	}
	return h[len("Bearer "):]
}

// rotate lets the token b holds (before, returned) expire and has a
// refresh it, rotating the refresh token at the server and storing the
// new token; it returns the access token a sent.
func rotate(t *testing.T, e *env, a, b *oauth.Authorizer) (before *oauth.Token, atA string) {
	t.Helper()
	before = b.Token(context.Background())
	e.clock.Advance(2 * time.Hour)
	return before, authorizeToken(t, a, e.endpoint)
}

// loginOnly fails the test unless the server saw one authorization, the
// login's: however the refreshes raced, none sent the user back to log in.
func loginOnly(t *testing.T, as *oauthtest.Server) {
	t.Helper()
	if auths, _, _ := as.Counts(); auths != 1 {
		t.Fatalf("%d authorizations, want the login's only", auths)
	}
}

// refreshes counts the refresh_token grants the server was asked for.
func refreshes(as *oauthtest.Server) int {
	n := 0
	for _, f := range as.TokenForms() {
		if f.Get("grant_type") == "refresh_token" {
			n++
		}
	}
	return n
}

// Two Authorizers over one FileStore hold the same token; it expires. A
// refreshes first (rotation); B then finds A's token in the store and
// uses it, without presenting the rotated-away refresh token.
func TestSharedStoreRefreshAfterRotation(t *testing.T) {
	e, cfg, _ := sharedEnv(t)
	a := newAuthorizer(t, cfg)
	b := newAuthorizer(t, cfg)
	ctx := context.Background()
	t0 := a.Token(ctx)
	if b.Token(ctx).AccessToken != t0.AccessToken {
		t.Fatal("the Authorizers do not share the token")
	}
	e.clock.Advance(2 * time.Hour)
	atA := authorizeToken(t, a, e.endpoint)
	atB := authorizeToken(t, b, e.endpoint)
	if atA == t0.AccessToken || atB != atA {
		t.Fatalf("A sends a new token %t, B sends A's %t", atA != t0.AccessToken, atB == atA)
	}
	if _, ok := e.as.Verify(atB); !ok {
		t.Fatal("B's token is not valid at the server")
	}
	if n := refreshes(e.as); n != 1 {
		t.Fatalf("%d refreshes, want 1 (B uses A's)", n)
	}
	loginOnly(t, e.as)
}

// The race lost at the server: B refreshes with the refresh token A has
// just rotated away, before A's new token is in the store (as B reads
// it). The server answers invalid_grant; B reads the store again, finds
// A's token and uses it instead of failing.
func TestSharedStoreRefreshRaceLost(t *testing.T) {
	e, cfg, fs := sharedEnv(t)
	ctx := context.Background()
	a := newAuthorizer(t, cfg)
	bstore := &staleStore{FileStore: fs}
	bcfg := cfg
	bcfg.Store = bstore
	b := newAuthorizer(t, bcfg)
	t0, atA := rotate(t, e, a, b) // A rotates and stores
	bstore.mu.Lock()
	bstore.stale = t0 // B's check before its refresh still sees t0
	bstore.mu.Unlock()
	atB := authorizeToken(t, b, e.endpoint)
	if atB != atA {
		t.Fatalf("B sends %s token, want A's", map[bool]string{true: "the old", false: "another"}[atB == t0.AccessToken])
	}
	if n := refreshes(e.as); n != 2 {
		t.Fatalf("%d refreshes, want 2 (A's, and B's refused)", n)
	}
	if b.Token(ctx).AccessToken != atA {
		t.Fatal("B did not keep A's token")
	}

	// The same through a 401: B's current token is refused, its refresh
	// fails, and the store holds A's newer one.
	e.clock.Advance(2 * time.Hour)
	t1 := b.Token(ctx)
	atA = authorizeToken(t, a, e.endpoint)
	if atA == t1.AccessToken {
		t.Fatal("A did not refresh")
	}
	bstore.mu.Lock()
	bstore.stale = t1
	bstore.mu.Unlock()
	c, err := connect(t, e.endpoint, b)
	if err != nil {
		t.Fatalf("B after the lost race: %v", err)
	}
	echoOK(t, c)
	if got := b.Token(ctx).AccessToken; got == t1.AccessToken {
		t.Fatal("B still holds the refused token")
	}
}

// Two Authorizers over one FileStore refresh the same expired token at
// the same moment, many times: both end with a token the server accepts,
// and no new authorization is needed.
func TestSharedStoreConcurrentRefresh(t *testing.T) {
	e, cfg, _ := sharedEnv(t)
	ctx := context.Background()
	var failures atomic.Int32
	for round := 0; round < 10; round++ {
		a := newAuthorizer(t, cfg)
		b := newAuthorizer(t, cfg)
		a.Token(ctx)
		b.Token(ctx)
		e.clock.Advance(2 * time.Hour)
		var wg sync.WaitGroup
		start := make(chan struct{})
		for _, x := range []*oauth.Authorizer{a, b} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				at := authorizeToken(t, x, e.endpoint)
				if _, ok := e.as.Verify(at); !ok {
					failures.Add(1)
				}
			}()
		}
		close(start)
		wg.Wait()
	}
	if n := failures.Load(); n != 0 {
		t.Fatalf("%d of 20 concurrent refreshes ended with a token the server refuses", n)
	}
	loginOnly(t, e.as)
}

// Logout by an Authorizer whose token another one has rotated since
// revokes the live (stored) refresh token, not only its stale one.
func TestSharedStoreLogoutRevokesTheStoredToken(t *testing.T) {
	e, cfg, _ := sharedEnv(t)
	ctx := context.Background()
	a := newAuthorizer(t, cfg)
	b := newAuthorizer(t, cfg)
	t0, _ := rotate(t, e, a, b) // A rotates: t1 in the store
	t1 := a.Token(ctx)
	if t1.RefreshToken == t0.RefreshToken {
		t.Fatal("no rotation")
	}
	rep, err := b.LogoutReport(ctx)
	if err != nil || !rep.Revoked {
		t.Fatalf("LogoutReport = %+v, %v", rep, err)
	}
	var revoked bool
	for _, f := range e.as.RevocationForms() {
		revoked = revoked || f.Get("token") == t1.RefreshToken
	}
	if !revoked || !refreshRefused(t, e.as, t1) {
		t.Fatal("the stored, live refresh token was not revoked")
	}
}
