package streamable

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/toolwire/toolwire/auth"
	"github.com/toolwire/toolwire/internal/oauthtest"
	"github.com/toolwire/toolwire/internal/testwait"
	"github.com/toolwire/toolwire/mcp"
	"github.com/toolwire/toolwire/server"
)

// bearerAuth makes "Bearer NAME" the principal NAME with the scope
// "tools"; no header leaves the request anonymous.
func bearerAuth(next http.Handler) http.Handler { return oauthtest.NamedBearer(next, "tools") }

// whoami reports the principal and a header of the request that carried
// the call, and counts its runs.
func whoamiServer(t *testing.T, runs *atomic.Int32) *server.Server {
	t.Helper()
	srv := server.New(mcp.Implementation{Name: "principal-test", Version: "1"})
	type none struct{}
	err := server.AddTool(srv, &mcp.Tool{Name: "whoami"}, func(ctx context.Context, req *server.CallRequest, _ none) (string, error) {
		runs.Add(1)
		p := req.Principal()
		if p == nil || p != auth.PrincipalFrom(ctx) {
			return "anonymous; trace " + req.Header().Get("X-Trace"), nil
		}
		return p.Subject + "; trace " + req.Header().Get("X-Trace") + "; era " + req.Peer.Era.String(), nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return srv
}

func TestPrincipalReachesHandlersInBothEras(t *testing.T) {
	var runs atomic.Int32
	h := NewHandler(whoamiServer(t, &runs))
	ts := httptest.NewServer(bearerAuth(h))
	t.Cleanup(func() { h.Close(); ts.Close() })

	as := func(r *http.Request, who string) *http.Request {
		if who != "" {
			r.Header.Set("Authorization", "Bearer "+who)
		}
		r.Header.Set("X-Trace", "t-1")
		return r
	}
	initAs := func(who string) string {
		resp := do(t, as(legacyRequest(t, ts.URL, "", initializeBody), who))
		readAll(t, resp)
		sid := resp.Header.Get("Mcp-Session-Id")
		if resp.StatusCode != http.StatusOK || sid == "" {
			t.Fatalf("initialize as %q: %d", who, resp.StatusCode)
		}
		resp = do(t, as(legacyRequest(t, ts.URL, sid, `{"jsonrpc":"2.0","method":"notifications/initialized"}`), who))
		readAll(t, resp)
		return sid
	}
	callText := func(t *testing.T, resp *http.Response) string {
		t.Helper()
		body := readAll(t, resp)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("status %d: %s", resp.StatusCode, body)
		}
		var res mcp.CallToolResult
		if err := res.UnmarshalJSON(decodeReply(t, body).Result); err != nil || len(res.Content) != 1 {
			t.Fatalf("result %s: %v", body, err)
		}
		return res.Content[0].(*mcp.TextContent).Text
	}
	call := `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"whoami"}}`

	// 2025-era session: the handler sees the principal and headers of the
	// HTTP request that carried the call, though the call is not cancelled
	// with that request.
	alice := initAs("alice")
	if got := callText(t, do(t, as(legacyRequest(t, ts.URL, alice, call), "alice"))); got != "alice; trace t-1; era legacy" {
		t.Errorf("legacy call as alice: %q", got)
	}
	// 2026-07-28: the same, statelessly.
	if got := callText(t, do(t, as(modernRequest(t, ts.URL, 3, "tools/call", map[string]any{"name": "whoami"}), "bob"))); got != "bob; trace t-1; era modern" {
		t.Errorf("modern call as bob: %q", got)
	}

	// Another principal, or none, presenting alice's session id gets 403
	// and nothing runs: POST (request, notification, response), GET, DELETE.
	before := runs.Load()
	for _, who := range []string{"bob", ""} {
		for name, r := range map[string]*http.Request{
			"POST request":      legacyRequest(t, ts.URL, alice, call),
			"POST notification": legacyRequest(t, ts.URL, alice, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":2}}`),
			"POST response":     legacyRequest(t, ts.URL, alice, `{"jsonrpc":"2.0","id":1,"result":{}}`),
			"GET":               sseGet(t, ts.URL, alice),
			"DELETE":            deleteRequest(t, ts.URL, alice),
		} {
			resp := do(t, as(r, who))
			body := readAll(t, resp)
			if resp.StatusCode != http.StatusForbidden || !strings.Contains(body, "another principal") {
				t.Errorf("%s as %q on alice's session: %d %s", name, who, resp.StatusCode, body)
			}
		}
	}
	if runs.Load() != before {
		t.Errorf("the tool ran for a refused request")
	}
	// The session is intact for its owner.
	if got := callText(t, do(t, as(legacyRequest(t, ts.URL, alice, call), "alice"))); got != "alice; trace t-1; era legacy" {
		t.Errorf("alice after refusals: %q", got)
	}
	// An anonymous session is bound too: a principal cannot take it over.
	anon := initAs("")
	resp := do(t, as(legacyRequest(t, ts.URL, anon, call), "mallory"))
	readAll(t, resp)
	if resp.StatusCode != http.StatusForbidden {
		t.Errorf("mallory on an anonymous session: %d", resp.StatusCode)
	}
	if got := callText(t, do(t, as(legacyRequest(t, ts.URL, anon, call), ""))); got != "anonymous; trace t-1" {
		t.Errorf("anonymous call: %q", got)
	}
}

// sseGet builds a GET for a session's stream, bounded so that a stream that
// opens where it must not fails the test instead of hanging it.
func sseGet(t *testing.T, url, session string) *http.Request {
	t.Helper()
	r, err := http.NewRequestWithContext(testwait.Context(t), http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	r.Header.Set("Accept", "text/event-stream")
	r.Header.Set("Mcp-Session-Id", session)
	return r
}

func deleteRequest(t *testing.T, url, session string) *http.Request {
	t.Helper()
	r, err := http.NewRequest(http.MethodDelete, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	r.Header.Set("Mcp-Session-Id", session)
	return r
}
