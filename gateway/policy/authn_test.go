package policy_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
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
		{"no credential is anonymous", jwt, nil, 200, "anonymous"},
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
			h := policy.Authenticate(keys, c.tokens)(who)
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
