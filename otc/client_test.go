package otc_test

import (
	"context"
	"encoding/json"
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

	"github.com/toolwire/toolwire/otc"
)

func TestClientAgainstHandler(t *testing.T) {
	env := defaultSeedEnv(t)
	ts := serve(t, newSeedServer(t, env), otc.WithAPIKeys("k"))
	c, err := otc.NewClient(ts.URL+"/", otc.WithAPIKey("k"))
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	if err := c.Health(ctx); err != nil {
		t.Fatal(err)
	}
	defs, err := c.ListTools(ctx)
	if err != nil || len(defs) != 6 || defs[0].ID != "Calculator.Add@1.0.0" || !strings.Contains(string(defs[0].InputSchema), `"properties"`) {
		t.Fatalf("ListTools: %+v %v", defs, err)
	}
	resp, err := c.Call(ctx, "Calculator.Add", map[string]any{"a": 2, "b": 3})
	if err != nil || !resp.Success || string(resp.Value) != "5" || resp.Duration == nil || resp.CallID == "" {
		t.Fatalf("Call: %+v %v", resp, err)
	}
	resp, err = c.CallRequest(ctx, &otc.CallToolRequest{ToolID: "Doorbell.Ring@1", CallID: "mine", Input: json.RawMessage(`{"doorbell_id":"doorbell9"}`)})
	if err != nil || resp.Success || resp.CallID != "mine" {
		t.Fatalf("failing call: %+v %v", resp, err)
	}
	var te *otc.ToolError
	if !errors.As(resp.Err(), &te) || !te.CanRetry || te.RetryAfterMs == nil || *te.RetryAfterMs != 500 || te.AdditionalPromptContent != "ids: doorbell42,doorbell84" {
		t.Errorf("tool error %+v", te)
	}
	_, err = c.Call(ctx, "Calculator.Add", json.RawMessage(`{"a":"x","b":1}`))
	var he *otc.HTTPError
	if !errors.As(err, &he) || he.Status != 422 || he.Validation == nil || he.Validation.ParameterErrors["a"] == "" {
		t.Errorf("422: %v", err)
	} else if !strings.Contains(err.Error(), "a: expected number") {
		t.Errorf("422 error text: %v", err)
	}
	_, err = c.Call(ctx, "Nope.Nope", nil)
	if !errors.As(err, &he) || he.Status != 400 || he.Server == nil || !strings.Contains(he.Server.Message, "unknown tool") {
		t.Errorf("400: %v", err)
	}
	anon, _ := otc.NewClient(ts.URL)
	if _, err := anon.ListTools(ctx); !errors.As(err, &he) || he.Status != 401 {
		t.Errorf("401: %v", err)
	}
}

func TestClientBearerAndOXP(t *testing.T) {
	ts := serve(t, newSeedServer(t, defaultSeedEnv(t)), otc.WithJWT(secret, "aud-1"))
	c, err := otc.NewClient(ts.URL, otc.WithTokenSource(otc.HS256TokenSource(secret, "aud-1", time.Minute)), otc.WithClientDialect(otc.OXP))
	if err != nil {
		t.Fatal(err)
	}
	defs, err := c.ListTools(t.Context())
	if err != nil || len(defs) != 6 {
		t.Fatalf("OXP ListTools: %d %v", len(defs), err)
	}
	resp, err := c.Call(t.Context(), "SMS.Send", map[string]any{"phone_number": "1", "message": "hi"})
	if err != nil || string(resp.Value) != `{"status":"sent"}` {
		t.Errorf("OXP call: %+v %v", resp, err)
	}
	wrong, _ := otc.NewClient(ts.URL, otc.WithTokenSource(otc.HS256TokenSource(secret, "aud-2", time.Minute)))
	var he *otc.HTTPError
	if _, err := wrong.ListTools(t.Context()); !errors.As(err, &he) || he.Status != 401 {
		t.Errorf("wrong audience: %v", err)
	}
	failing, _ := otc.NewClient(ts.URL, otc.WithTokenSource(func(context.Context) (string, error) { return "", errors.New("vault sealed") }))
	if _, err := failing.ListTools(t.Context()); err == nil || !strings.Contains(err.Error(), "vault sealed") {
		t.Errorf("token source error: %v", err)
	}
}

func TestClientLimitsAndBadServers(t *testing.T) {
	for _, bad := range []string{"", "ftp://x", "localhost:8080", "http://"} {
		if _, err := otc.NewClient(bad); err == nil {
			t.Errorf("NewClient(%q) accepted", bad)
		}
	}
	big := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte(`{"tools":[` + strings.Repeat(" ", 4096) + `]}`))
	}))
	defer big.Close()
	if _, err := otc.NewClient(big.URL, otc.WithClientLimits(otc.ClientLimits{MaxResponseBytes: -1})); err == nil {
		t.Error("a negative MaxResponseBytes was accepted")
	}
	// A later WithClientLimits that leaves MaxResponseBytes zero keeps the
	// bound; a nil option is ignored.
	c, err := otc.NewClient(big.URL, otc.WithClientLimits(otc.ClientLimits{MaxResponseBytes: 1024}), nil, otc.WithClientLimits(otc.ClientLimits{}))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.ListTools(t.Context()); err == nil || !strings.Contains(err.Error(), "1024 bytes") {
		t.Errorf("oversized response: %v", err)
	}
	odd := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/tools":
			w.Write([]byte(`{"something":[]}`))
		case "/tools/call":
			w.Write([]byte(`{"result":{"call_id":"x","success":true,"error":{"message":"both"}}}`))
		default:
			w.WriteHeader(502)
			w.Write([]byte("bad gateway"))
		}
	}))
	defer odd.Close()
	c, _ = otc.NewClient(odd.URL)
	if _, err := c.ListTools(t.Context()); err == nil {
		t.Error("a list without tools or items is accepted")
	}
	if _, err := c.Call(t.Context(), "A.B", nil); err == nil {
		t.Error("a response with success true and an error is accepted")
	}
	var he *otc.HTTPError
	if err := c.Health(t.Context()); !errors.As(err, &he) || he.Status != 502 || he.Body != "bad gateway" {
		t.Errorf("non-JSON error body: %v", err)
	}
	// A flattened response (no "result" wrapper) is read too.
	flat := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte(`{"call_id":"x","success":true,"value":[1]}`))
	}))
	defer flat.Close()
	c, _ = otc.NewClient(flat.URL)
	if resp, err := c.Call(t.Context(), "A.B", nil); err != nil || string(resp.Value) != "[1]" {
		t.Errorf("flat response: %+v %v", resp, err)
	}
}

// A server that redirects to another origin never gets the client's
// credentials there: the client follows redirects only within the
// server's origin, for every redirect status and method.
func TestClientRedirectsKeepCredentialsAtTheOrigin(t *testing.T) {
	var mu sync.Mutex
	var seen []string // what reached the other origin
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		mu.Lock()
		seen = append(seen, fmt.Sprintf("%s %s key=%q auth=%q body=%q", r.Method, r.URL.Path,
			r.Header.Get(otc.HeaderAPIKey)+r.Header.Get(otc.HeaderOXPAPIKey), r.Header.Get("Authorization"), body))
		mu.Unlock()
		w.Write([]byte(`{"tools":[],"result":{"call_id":"x","success":true}}`))
	}))
	defer other.Close()
	var status atomic.Int64
	origin := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/v1/tools":
			// Reached by a redirect within the origin: the key came along.
			if r.Header.Get(otc.HeaderAPIKey) != "k-secret" {
				w.WriteHeader(http.StatusUnauthorized)
				return
			}
			w.Write([]byte(`{"tools":[]}`))
		case "/here/tools":
			http.Redirect(w, r, "/v1/tools", http.StatusTemporaryRedirect)
		default:
			http.Redirect(w, r, other.URL+r.URL.Path, int(status.Load()))
		}
	}))
	defer origin.Close()
	// The two differ by their port only: another port is another origin.
	if o, e := strings.Split(origin.URL, ":"), strings.Split(other.URL, ":"); o[1] != e[1] || o[2] == e[2] {
		t.Fatalf("want two ports of one host: %s %s", origin.URL, other.URL)
	}

	for _, code := range []int{301, 302, 303, 307, 308} {
		status.Store(int64(code))
		for _, dialect := range []otc.Dialect{otc.OTC, otc.OXP} {
			c, err := otc.NewClient(origin.URL, otc.WithAPIKey("k-secret"), otc.WithBearerToken("t-secret"), otc.WithClientDialect(dialect))
			if err != nil {
				t.Fatal(err)
			}
			if _, err := c.ListTools(t.Context()); err == nil || !strings.Contains(err.Error(), "not followed") || !strings.Contains(err.Error(), other.URL) {
				t.Errorf("%d: ListTools redirected elsewhere: %v", code, err)
			}
			if _, err := c.Call(t.Context(), "A.B", map[string]any{"secret": "input"}); err == nil || !strings.Contains(err.Error(), "not followed") {
				t.Errorf("%d: Call redirected elsewhere: %v", code, err)
			}
			if err := c.Health(t.Context()); err == nil {
				t.Errorf("%d: Health redirected elsewhere succeeded", code)
			}
		}
	}
	mu.Lock()
	if len(seen) != 0 {
		t.Errorf("the other origin received %q", seen)
	}
	mu.Unlock()

	// Within the origin a redirect is followed, and a caller's own
	// CheckRedirect is still asked; the caller's http.Client itself is
	// left as it was.
	asked := 0
	mine := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { asked++; return nil }}
	c, err := otc.NewClient(origin.URL+"/here", otc.WithAPIKey("k-secret"), otc.WithHTTPClient(mine))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.ListTools(t.Context()); err != nil || asked != 1 {
		t.Fatalf("a redirect within the origin: %v (the caller's CheckRedirect asked %d times)", err, asked)
	}
	resp, err := mine.Get(origin.URL + "/tools")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.Request.URL.Host == strings.TrimPrefix(origin.URL, "http://") || asked != 2 {
		t.Errorf("the caller's http.Client was changed: it stopped at %s (asked %d)", resp.Request.URL, asked)
	}
	mu.Lock()
	seen = nil
	mu.Unlock()
}
