package oauth

import (
	"context"
	"errors"
	"net/url"
	"strings"
	"testing"

	"github.com/toolwire/toolwire/auth"
)

func TestCheckCallback(t *testing.T) {
	md := &auth.AuthServerMetadata{Issuer: "https://as.example.com"}
	adv := &auth.AuthServerMetadata{Issuer: "https://as.example.com", AuthorizationResponseIssParameterSupported: true}
	const ru = "http://127.0.0.1:8976/callback"
	for _, tc := range []struct {
		name, cb string
		md       *auth.AuthServerMetadata
		ok       bool
		is       error
	}{
		{"plain", ru + "?code=c&state=s", md, true, nil},
		{"iss matches", ru + "?code=c&state=s&iss=https%3A%2F%2Fas.example.com", adv, true, nil},
		{"iss required", ru + "?code=c&state=s", adv, false, ErrIssMismatch},
		{"iss wrong, unadvertised", ru + "?code=c&state=s&iss=https%3A%2F%2Fevil.example.com", md, false, ErrIssMismatch},
		{"iss not normalized", ru + "?code=c&state=s&iss=https%3A%2F%2Fas.example.com%2F", adv, false, ErrIssMismatch},
		{"iss case", ru + "?code=c&state=s&iss=https%3A%2F%2FAS.example.com", adv, false, ErrIssMismatch},
		{"iss twice", ru + "?code=c&state=s&iss=https%3A%2F%2Fas.example.com&iss=x", adv, false, ErrIssMismatch},
		{"state", ru + "?code=c&state=other", md, false, nil},
		{"no code", ru + "?state=s", md, false, nil},
		{"error", ru + "?state=s&error=access_denied", md, false, nil},
		{"elsewhere", "http://127.0.0.1:9999/callback?code=c&state=s", md, false, nil},
	} {
		u, _ := url.Parse(tc.cb)
		code, err := checkCallback(u, ru, "s", tc.md)
		if tc.ok != (err == nil) || (tc.ok && code != "c") || (tc.is != nil && !errors.Is(err, tc.is)) {
			t.Errorf("%s: %q, %v", tc.name, code, err)
		}
	}
}

func TestAuthorizationURL(t *testing.T) {
	md := &auth.AuthServerMetadata{Issuer: "https://as", AuthorizationEndpoint: "https://as/authorize?tenant=t1"}
	pk := newPKCE()
	if len(pk.verifier) != 43 {
		t.Errorf("verifier length %d", len(pk.verifier))
	}
	raw, err := authorizationURL(md, ClientInfo{ID: "c"}, "http://127.0.0.1:1/cb", nil, "st", pk, "https://m", nil)
	if err != nil {
		t.Fatal(err)
	}
	u, _ := url.Parse(raw)
	q := u.Query()
	if q.Get("tenant") != "t1" || q.Has("scope") || q.Get("code_challenge") != pk.challenge || q.Get("code_challenge_method") != "S256" || q.Get("resource") != "https://m" || q.Has("dpop_jkt") {
		t.Errorf("%s", raw)
	}
}

func TestBrowserCommand(t *testing.T) {
	for _, bad := range []string{"file:///etc/passwd", "javascript:alert(1)", "-e x", "https://", "http://x/\nrm"} {
		if _, err := browserCommand(context.Background(), "linux", bad); err == nil {
			t.Errorf("would open %q", bad)
		}
	}
	cmd, err := browserCommand(context.Background(), "linux", "https://as.example.com/authorize?a=1&b=$(x);`y`")
	if err != nil {
		t.Fatal(err)
	}
	if len(cmd.Args) != 2 || cmd.Args[0] != "xdg-open" || !strings.HasPrefix(cmd.Args[1], "https://as.example.com/authorize?") {
		t.Errorf("argv %q", cmd.Args)
	}
	cmd, _ = browserCommand(context.Background(), "windows", "https://as.example.com/")
	if len(cmd.Args) != 3 || cmd.Args[1] != "url.dll,FileProtocolHandler" {
		t.Errorf("argv %q", cmd.Args)
	}
}
