package policy_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/toolwire/toolwire/auth"
	"github.com/toolwire/toolwire/gateway/policy"
)

func TestAuthenticate(t *testing.T) {
	key, err := policy.NewKey()
	if err != nil {
		t.Fatal(err)
	}
	other, _ := policy.NewKey()
	keys, err := policy.NewKeySet(map[string]string{"ci-bot": policy.HashKey(key)})
	if err != nil {
		t.Fatal(err)
	}
	jwt := auth.TokenVerifierFunc(func(_ context.Context, token string) (*auth.Principal, error) {
		if token != "eyJ.good.jwt" {
			return nil, auth.ErrInvalidToken
		}
		return &auth.Principal{Issuer: "https://issuer.test", Subject: "alice", Claims: map[string]any{"roles": []any{"analyst"}}}, nil
	})
	who := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, policy.FromPrincipal(auth.PrincipalFrom(r.Context())).String())
	})
	cases := []struct {
		name    string
		tokens  auth.TokenVerifier
		headers map[string]string
		status  int
		body    string
	}{
		{"no credential, a persona admits anonymous", jwt, nil, 200, "anonymous"},
		{"key as bearer", jwt, map[string]string{"Authorization": "Bearer " + key}, 200, "api_key:ci-bot"},
		{"key in X-API-Key", nil, map[string]string{"X-API-Key": key}, 200, "api_key:ci-bot"},
		{"same key twice", nil, map[string]string{"X-API-Key": key, "Authorization": "Bearer " + key}, 200, "api_key:ci-bot"},
		{"unknown key", jwt, map[string]string{"X-API-Key": other}, 401, "not one this gateway knows"},
		{"oauth token", jwt, map[string]string{"Authorization": "Bearer eyJ.good.jwt"}, 200, "oauth:alice"},
		{"bad oauth token", jwt, map[string]string{"Authorization": "Bearer eyJ.bad.jwt"}, 401, "unauthorized"},
		{"token without OAuth configured", nil, map[string]string{"Authorization": "Bearer eyJ.good.jwt"}, 401, "accepts no OAuth tokens"},
		{"token in X-API-Key", jwt, map[string]string{"X-API-Key": "eyJ.good.jwt"}, 401, "not an API key"},
		{"two credentials", jwt, map[string]string{"X-API-Key": key, "Authorization": "Bearer eyJ.good.jwt"}, 401, "different credentials"},
		{"basic scheme", jwt, map[string]string{"Authorization": "Basic dTpw"}, 401, "unsupported Authorization scheme"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h := policy.Authenticate(keys, c.tokens, func() bool { return true })(who)
			r := httptest.NewRequest("POST", "/mcp", strings.NewReader("{}"))
			for k, v := range c.headers {
				r.Header.Set(k, v)
			}
			w := httptest.NewRecorder()
			h.ServeHTTP(w, r)
			body := w.Body.String()
			if w.Code != c.status || !strings.Contains(body, c.body) {
				t.Fatalf("got %d %q, want %d containing %q", w.Code, body, c.status, c.body)
			}
			if c.status == 401 && !strings.HasPrefix(w.Header().Get("WWW-Authenticate"), "Bearer ") {
				t.Errorf("a refusal without a challenge: %v", w.Header())
			}
			for _, secret := range []string{key, other, "eyJ.good.jwt", "eyJ.bad.jwt"} {
				if strings.Contains(body, secret) || strings.Contains(w.Header().Get("WWW-Authenticate"), secret) {
					t.Errorf("the response repeats a credential: %q", body)
				}
			}
		})
	}
}

// With callers authenticated, a request without a credential is refused
// with a challenge unless a persona admits anonymous callers, asked on
// every request; without any authentication everyone is anonymous.
func TestAuthenticateWithoutCredential(t *testing.T) {
	key, _ := policy.NewKey()
	keys, err := policy.NewKeySet(map[string]string{"ci-bot": policy.HashKey(key)})
	if err != nil {
		t.Fatal(err)
	}
	jwt := auth.TokenVerifierFunc(func(context.Context, string) (*auth.Principal, error) {
		return &auth.Principal{Issuer: "https://issuer.test", Subject: "alice"}, nil
	})
	who := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, policy.FromPrincipal(auth.PrincipalFrom(r.Context())).String())
	})
	var admit atomic.Bool
	admitted := func() bool { return admit.Load() }
	cases := []struct {
		name      string
		keys      *policy.KeySet
		tokens    auth.TokenVerifier
		anonymous func() bool
		admit     bool
		status    int
		challenge string
	}{
		{"no auth configured", nil, nil, nil, false, 200, ""},
		{"an empty key set is no auth", &policy.KeySet{}, nil, nil, false, 200, ""},
		{"API keys, no anonymous persona", keys, nil, admitted, false, 401, "Bearer"},
		{"API keys, nil anonymous", keys, nil, nil, false, 401, "Bearer"},
		{"API keys, an anonymous persona", keys, nil, admitted, true, 200, ""},
		{"OAuth, no anonymous persona", nil, jwt, admitted, false, 401, `Bearer resource_metadata="https://gw.test/.well-known/oauth-protected-resource/mcp"`},
		{"both, no anonymous persona", keys, jwt, admitted, false, 401, `Bearer resource_metadata="https://gw.test/.well-known/oauth-protected-resource/mcp"`},
		{"both, an anonymous persona", keys, jwt, admitted, true, 200, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			admit.Store(c.admit)
			h := policy.Authenticate(c.keys, c.tokens, c.anonymous,
				auth.WithResourceMetadata("https://gw.test/.well-known/oauth-protected-resource/mcp"))(who)
			w := httptest.NewRecorder()
			h.ServeHTTP(w, httptest.NewRequest("POST", "/mcp", strings.NewReader("{}")))
			if w.Code != c.status {
				t.Fatalf("status %d %q, want %d", w.Code, w.Body, c.status)
			}
			if got := w.Header().Get("WWW-Authenticate"); got != c.challenge {
				t.Errorf("WWW-Authenticate %q, want %q", got, c.challenge)
			}
			if c.status == 200 && w.Body.String() != "anonymous" {
				t.Errorf("body %q", w.Body)
			}
			if c.status == 401 && !strings.Contains(w.Body.String(), "unauthorized") {
				t.Errorf("body %q", w.Body)
			}
		})
	}
	// The answer is asked for on every request: a reload that adds or
	// removes the anonymous persona counts at once.
	h := policy.Authenticate(keys, nil, admitted)(who)
	for _, a := range []bool{true, false, true} {
		admit.Store(a)
		w := httptest.NewRecorder()
		h.ServeHTTP(w, httptest.NewRequest("POST", "/mcp", strings.NewReader("{}")))
		if (w.Code == 200) != a {
			t.Errorf("admit %v: status %d", a, w.Code)
		}
	}
}

func TestAdmitsAnonymous(t *testing.T) {
	var none *policy.Policy
	if none.AdmitsAnonymous() {
		t.Error("a nil policy admits anonymous callers")
	}
	for _, c := range []struct {
		personas []policy.Persona
		want     bool
	}{
		{nil, false},
		{[]policy.Persona{{Name: "a", Match: policy.Match{Identities: []string{"x"}}}}, false},
		{[]policy.Persona{{Name: "a", Match: policy.Match{Identities: []string{"x"}}}, {Name: "g", Match: policy.Match{Anonymous: true}}}, true},
		{[]policy.Persona{{Name: "c", Match: policy.Match{Claims: map[string]string{"role": "x"}}}}, false},
	} {
		p, err := policy.New(c.personas)
		if err != nil {
			t.Fatal(err)
		}
		if got := p.AdmitsAnonymous(); got != c.want {
			t.Errorf("%+v: AdmitsAnonymous = %v", c.personas, got)
		}
	}
}
