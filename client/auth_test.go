package client_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/toolwire/toolwire/client"
	"github.com/toolwire/toolwire/internal/testwait"
	"github.com/toolwire/toolwire/mcp"
)

// stubAuth is an HTTPAuth that sets a token and, on a challenge, switches
// to the next one while tokens remain.
type stubAuth struct {
	mu         sync.Mutex
	tokens     []string
	i          int
	challenges []string
	err        error
}

func (s *stubAuth) Authorize(req *http.Request) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	req.Header.Set("Authorization", "Bearer "+s.tokens[s.i])
	return nil
}

func (s *stubAuth) Challenge(_ context.Context, _ *http.Request, resp *http.Response) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.challenges = append(s.challenges, resp.Header.Get("WWW-Authenticate"))
	if s.err != nil {
		return false, s.err
	}
	if s.i+1 < len(s.tokens) {
		s.i++
		return true, nil
	}
	return false, nil
}

// authServer answers 401 unless the request carries "Bearer good", and
// records the bodies it gets.
func authServer(t *testing.T) (*httptest.Server, *[]string) {
	var mu sync.Mutex
	var bodies []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		bodies = append(bodies, r.Method+" "+r.Header.Get("Authorization")+" "+string(b))
		mu.Unlock()
		if r.Header.Get("Authorization") != "Bearer good" {
			w.Header().Set("WWW-Authenticate", `Bearer resource_metadata="http://x/prm"`)
			http.Error(w, `{"error":"invalid_token"}`, http.StatusUnauthorized)
			return
		}
		if r.Method != http.MethodPost {
			w.WriteHeader(http.StatusMethodNotAllowed)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		var msg struct {
			ID json.RawMessage `json:"id"`
		}
		_ = json.Unmarshal(b, &msg)
		id := string(msg.ID)
		switch {
		case strings.Contains(string(b), `"initialize"`):
			w.Header().Set("Mcp-Session-Id", "s1")
			_, _ = w.Write([]byte(`{"jsonrpc":"2.0","id":` + id + `,"result":{"protocolVersion":"2025-11-25","capabilities":{},"serverInfo":{"name":"s","version":"1"}}}`))
		case strings.Contains(string(b), `"id"`):
			_, _ = w.Write([]byte(`{"jsonrpc":"2.0","id":` + id + `,"result":{"tools":[]}}`))
		default:
			w.WriteHeader(http.StatusAccepted)
		}
	}))
	t.Cleanup(srv.Close)
	return srv, &bodies
}

func authOpts() []client.Option {
	return []client.Option{client.WithEra(mcp.EraLegacy), client.WithProtocolVersion("2025-11-25"), client.WithTimeout(testwait.Limit)}
}

func TestHTTPAuthRetriesWithBodyReplayed(t *testing.T) {
	srv, bodies := authServer(t)
	a := &stubAuth{tokens: []string{"stale", "good"}}
	ctx := testwait.Context(t)
	c, err := client.Connect(ctx, &client.HTTP{URL: srv.URL, Auth: a}, authOpts()...)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.ListTools(ctx); err != nil {
		t.Fatal(err)
	}
	if len(a.challenges) != 1 || a.challenges[0] != `Bearer resource_metadata="http://x/prm"` {
		t.Errorf("challenges %q", a.challenges)
	}
	b := *bodies
	if len(b) < 2 || !strings.HasPrefix(b[0], "POST Bearer stale {") || strings.Replace(b[0], "stale", "good", 1) != b[1] {
		t.Errorf("the retry differs from the request: %q", b)
	}
}

func TestHTTP401WithoutAuthKeepsChallenge(t *testing.T) {
	srv, _ := authServer(t)
	ctx := testwait.Context(t)
	_, err := client.Connect(ctx, &client.HTTP{URL: srv.URL}, authOpts()...)
	var te *client.TransportError
	if !errors.As(err, &te) || te.StatusCode != http.StatusUnauthorized || te.WWWAuthenticate != `Bearer resource_metadata="http://x/prm"` {
		t.Fatalf("got %#v", err)
	}
	if client.CodeOf(err) != client.CodeTransport {
		t.Errorf("code %s", client.CodeOf(err))
	}
}

func TestHTTPAuthRetriesAreBounded(t *testing.T) {
	srv, bodies := authServer(t)
	a := &stubAuth{tokens: []string{"a", "b", "c", "d", "e", "f", "good"}}
	ctx := testwait.Context(t)
	_, err := client.Connect(ctx, &client.HTTP{URL: srv.URL, Auth: a}, authOpts()...)
	var te *client.TransportError
	if !errors.As(err, &te) || te.StatusCode != http.StatusUnauthorized {
		t.Fatalf("got %v", err)
	}
	if n := len(*bodies); n != 1+client.MaxAuthRetries {
		t.Errorf("%d requests, want %d", n, 1+client.MaxAuthRetries)
	}
}

func TestHTTPAuthChallengeError(t *testing.T) {
	srv, _ := authServer(t)
	a := &stubAuth{tokens: []string{"x"}, err: errors.New("no browser")}
	ctx := testwait.Context(t)
	_, err := client.Connect(ctx, &client.HTTP{URL: srv.URL, Auth: a}, authOpts()...)
	var te *client.TransportError
	if !errors.As(err, &te) || te.StatusCode != http.StatusUnauthorized || !strings.Contains(err.Error(), "no browser") {
		t.Fatalf("got %v", err)
	}
}
