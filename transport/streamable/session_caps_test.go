package streamable

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/toolwire/toolwire/auth"
	"github.com/toolwire/toolwire/internal/testclock"
	"github.com/toolwire/toolwire/internal/testwait"
	"github.com/toolwire/toolwire/jsonrpc"
)

// TestAnonymousInitializeFloodLeavesKeyedSessions: 10,000 initialize
// requests without credentials, 32 at a time, against the default session
// limits (10,000 sessions): once they held every session, and a key holder then
// got 503 for one. Now the anonymous ones open DefaultMaxAnonymousSessions
// (2,500) and the rest get 503 naming that limit, while a key holder, in
// the middle of the flood, opens a session and its calls are answered, and
// so does another after the flood.
func TestAnonymousInitializeFloodLeavesKeyedSessions(t *testing.T) {
	const (
		flood   = 10000
		workers = 32
	)
	f := newFixture(t)
	// The flood's sessions are never used: the unused timeout is put out
	// of reach, so that none expires on a slow machine and makes room.
	h := NewHandler(f.srv, WithLimits(Limits{UnusedSessionTimeout: time.Hour}))
	ts := httptest.NewServer(bearerAuth(h))
	t.Cleanup(func() { h.Close(); ts.Close() })
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: workers + 4}}
	t.Cleanup(client.CloseIdleConnections)

	var opened, refused atomic.Int32
	var otherStatus sync.Once
	next := make(chan int)
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for i := range next {
				body := strings.Replace(initializeBody, `"id":1`, fmt.Sprintf(`"id":%d`, i), 1)
				resp, err := client.Do(legacyRequest(t, ts.URL, "", body))
				if err != nil {
					t.Error(err)
					return
				}
				b, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				switch {
				case resp.StatusCode == http.StatusOK:
					opened.Add(1)
				case resp.StatusCode == http.StatusServiceUnavailable && strings.Contains(string(b), fmt.Sprintf("without credentials: their limit of %d is reached", DefaultMaxAnonymousSessions)):
					refused.Add(1)
				default:
					otherStatus.Do(func() { t.Errorf("anonymous initialize: status %d: %s", resp.StatusCode, b) })
				}
			}
		})
	}
	keyed := make(chan int, 1)
	go func() {
		defer close(next)
		for i := range flood {
			if i == flood/2 {
				keyed <- int(opened.Load() + refused.Load())
			}
			next <- i
		}
	}()
	// Halfway through the flood, with the anonymous limit long reached, a
	// key holder opens a session and calls.
	during := testwait.Recv(t, keyed, "the flood to be halfway")
	sid := keyedSession(t, ts.URL, "alice")
	answered := 0
	const calls = 20
	for i := range calls {
		if keyedCall(t, ts.URL, sid, "alice", fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"echo","arguments":{"message":"hi"}}}`, i+2)) {
			answered++
		}
	}
	wg.Wait()
	// After the whole flood, another key holder still gets a session.
	late := keyedSession(t, ts.URL, "bob")
	for i := range calls {
		if keyedCall(t, ts.URL, late, "bob", fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"ping"}`, i+2)) {
			answered++
		}
	}
	t.Logf("%d anonymous initializes: %d opened a session, %d got 503 at the anonymous limit; a key holder, %d initializes into the flood, and another after it opened sessions and got %d of %d calls answered",
		flood, opened.Load(), refused.Load(), during, answered, 2*calls)
	if opened.Load() != DefaultMaxAnonymousSessions || refused.Load() != flood-DefaultMaxAnonymousSessions || answered != 2*calls {
		t.Fatalf("%d opened, %d refused, %d of %d keyed calls answered", opened.Load(), refused.Load(), answered, 2*calls)
	}
	if n := h.SessionCount(); n != DefaultMaxAnonymousSessions+2 {
		t.Fatalf("%d sessions open, want %d", n, DefaultMaxAnonymousSessions+2)
	}
}

// TestSessionCapPerPrincipal: one principal may hold
// Limits.MaxSessionsPerPrincipal sessions; its next initialize gets 503 with
// Retry-After naming the limit, while another principal and an anonymous
// caller still open theirs, and ending one of its sessions makes room.
func TestSessionCapPerPrincipal(t *testing.T) {
	f := newFixture(t)
	h := NewHandler(f.srv, WithLimits(Limits{MaxSessionsPerPrincipal: 3, MaxAnonymousSessions: 2}))
	ts := httptest.NewServer(bearerAuth(h))
	t.Cleanup(func() { h.Close(); ts.Close() })
	initAs := func(who string) *http.Response {
		r := legacyRequest(t, ts.URL, "", initializeBody)
		if who != "" {
			r.Header.Set("Authorization", "Bearer "+who)
		}
		return do(t, r)
	}
	var alice []string
	for range 3 {
		alice = append(alice, keyedSession(t, ts.URL, "alice"))
	}
	resp := initAs("alice")
	body := readAll(t, resp)
	if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") == "" ||
		!strings.Contains(body, "too many sessions for this principal: its limit of 3 is reached") || !strings.Contains(body, `"id":1`) ||
		!strings.Contains(body, `"code":-32005`) {
		t.Fatalf("alice's fourth session: status %d: %s", resp.StatusCode, body)
	}
	keyedSession(t, ts.URL, "bob")
	for range 2 {
		initialize(t, ts.URL)
	}
	resp = initAs("")
	if body := readAll(t, resp); resp.StatusCode != http.StatusServiceUnavailable || !strings.Contains(body, "without credentials: their limit of 2 is reached") {
		t.Fatalf("a third anonymous session: status %d: %s", resp.StatusCode, body)
	}
	del := deleteRequest(t, ts.URL, alice[0])
	del.Header.Set("Authorization", "Bearer alice")
	if resp := do(t, del); readAll(t, resp) != "" || resp.StatusCode != http.StatusOK {
		t.Fatalf("DELETE: status %d", resp.StatusCode)
	}
	keyedSession(t, ts.URL, "alice")
	if n := h.SessionCount(); n != 3+1+2 {
		t.Fatalf("%d sessions open, want 6", n)
	}
}

// TestUnusedSessionExpires: a session whose client sends nothing after
// initialize ends after WithUnusedSessionTimeout, long before the idle
// timeout, and frees its place under the anonymous limit; a session whose
// client sent notifications/initialized lives on. The clock is fake.
func TestUnusedSessionExpires(t *testing.T) {
	f := newFixture(t)
	clock := testclock.New(time.Unix(1_700_000_000, 0))
	h := NewHandler(f.srv, WithLimits(Limits{SessionIdleTimeout: time.Hour, UnusedSessionTimeout: 30 * time.Second, MaxAnonymousSessions: 2}))
	h.now = clock.Now
	ts := httptest.NewServer(h)
	t.Cleanup(func() { h.Close(); ts.Close() })

	resp := do(t, legacyRequest(t, ts.URL, "", initializeBody))
	readAll(t, resp)
	unused := resp.Header.Get("Mcp-Session-Id")
	used := initialize(t, ts.URL) // sends notifications/initialized
	resp = do(t, legacyRequest(t, ts.URL, "", initializeBody))
	if readAll(t, resp); resp.StatusCode != http.StatusServiceUnavailable {
		t.Fatalf("a third anonymous session: status %d", resp.StatusCode)
	}

	clock.Advance(29 * time.Second)
	h.sweep()
	if h.SessionCount() != 2 {
		t.Fatalf("%d sessions before the unused timeout, want 2", h.SessionCount())
	}
	clock.Advance(2 * time.Second)
	// At the anonymous limit, an initialize sweeps first: the unused
	// session is gone and the new one takes its place.
	third := initialize(t, ts.URL)
	resp = do(t, legacyRequest(t, ts.URL, unused, `{"jsonrpc":"2.0","id":3,"method":"ping"}`))
	if body := readAll(t, resp); resp.StatusCode != http.StatusNotFound {
		t.Fatalf("the unused session: status %d, want 404: %s", resp.StatusCode, body)
	}
	for _, sid := range []string{used, third} {
		resp = do(t, legacyRequest(t, ts.URL, sid, `{"jsonrpc":"2.0","id":4,"method":"ping"}`))
		if body := readAll(t, resp); resp.StatusCode != http.StatusOK {
			t.Fatalf("a used session: status %d: %s", resp.StatusCode, body)
		}
	}
	if h.SessionCount() != 2 {
		t.Fatalf("%d sessions, want 2", h.SessionCount())
	}
}

// TestSessionAdmission: WithSessionAdmission sees the initialize's request
// and principal before anything is opened; a refused caller gets 403 with
// the hook's error (a *jsonrpc.Error as it is) and holds no session.
func TestSessionAdmission(t *testing.T) {
	f := newFixture(t)
	var asked atomic.Int32
	h := NewHandler(f.srv, WithSessionAdmission(func(r *http.Request, p *auth.Principal) error {
		asked.Add(1)
		switch {
		case r.Header.Get("X-Refuse") != "":
			return jsonrpc.NewError(-32001, "refused by header")
		case p == nil:
			return errors.New("no persona admits callers without credentials")
		}
		return nil
	}))
	ts := httptest.NewServer(bearerAuth(h))
	t.Cleanup(func() { h.Close(); ts.Close() })

	resp := do(t, legacyRequest(t, ts.URL, "", initializeBody))
	body := readAll(t, resp)
	if rep := decodeReply(t, body); resp.StatusCode != http.StatusForbidden || rep.Error == nil ||
		rep.Error.Code != jsonrpc.CodeInvalidRequest || rep.Error.Message != "no persona admits callers without credentials" || fmt.Sprint(rep.ID) != "1" {
		t.Fatalf("anonymous initialize: status %d: %s", resp.StatusCode, body)
	}
	r := legacyRequest(t, ts.URL, "", initializeBody)
	r.Header.Set("Authorization", "Bearer alice")
	r.Header.Set("X-Refuse", "1")
	resp = do(t, r)
	body = readAll(t, resp)
	if rep := decodeReply(t, body); resp.StatusCode != http.StatusForbidden || rep.Error == nil || rep.Error.Code != -32001 {
		t.Fatalf("refused keyed initialize: status %d: %s", resp.StatusCode, body)
	}
	if h.SessionCount() != 0 || f.srv.SessionCount() != 0 {
		t.Fatalf("refused callers hold sessions: handler %d, server %d", h.SessionCount(), f.srv.SessionCount())
	}
	sid := keyedSession(t, ts.URL, "alice")
	if !keyedCall(t, ts.URL, sid, "alice", `{"jsonrpc":"2.0","id":2,"method":"ping"}`) || asked.Load() != 3 {
		t.Fatalf("admitted caller: asked %d times", asked.Load())
	}
}

// The session limits' defaults, and values below 1 meaning them.
func TestSessionCapDefaults(t *testing.T) {
	for _, c := range []handlerConfig{
		newHandlerConfig(nil),
		newHandlerConfig([]HandlerOption{WithLimits(Limits{MaxSessionsPerPrincipal: 0, MaxAnonymousSessions: -1, UnusedSessionTimeout: 0})}),
	} {
		if c.maxPerPrincipal != DefaultMaxSessionsPerPrincipal || c.maxAnonymous != DefaultMaxAnonymousSessions || c.unusedTimeout != DefaultUnusedSessionTimeout {
			t.Errorf("defaults: %d per principal, %d anonymous, unused for %v", c.maxPerPrincipal, c.maxAnonymous, c.unusedTimeout)
		}
	}
	c := newHandlerConfig([]HandlerOption{WithLimits(Limits{SessionIdleTimeout: 10 * time.Second})})
	if c.unusedTimeout != 10*time.Second {
		t.Errorf("an unused timeout past the idle timeout: %v", c.unusedTimeout)
	}
}
