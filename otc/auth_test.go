package otc_test

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/toolwire/toolwire/otc"
)

var secret = []byte("0123456789abcdef0123456789abcdef")

func TestAPIKeyAuth(t *testing.T) {
	ts := serve(t, newSeedServer(t, defaultSeedEnv(t)), otc.WithAPIKeys("first-key", "second-key"))
	for name, tc := range map[string]struct {
		header map[string]string
		status int
	}{
		"OTC header":          {map[string]string{"OTC-API-Key": "first-key"}, 200},
		"OXP header":          {map[string]string{"OXP-API-Key": "second-key"}, 200},
		"wrong key":           {map[string]string{"OTC-API-Key": "first-kez"}, 401},
		"prefix of a key":     {map[string]string{"OTC-API-Key": "first"}, 401},
		"no credentials":      {nil, 401},
		"bearer not accepted": {map[string]string{"Authorization": "Bearer first-key"}, 401},
	} {
		for _, path := range []string{"/tools", "/tools/call"} {
			var r *reply
			if path == "/tools" {
				r = do(t, http.MethodGet, ts.URL+path, nil, tc.header)
			} else {
				r = call(t, ts, map[string]any{"tool_id": "Calculator.Add", "input": map[string]any{"a": 1, "b": 1}}, tc.header)
			}
			if r.status != tc.status {
				t.Errorf("%s %s: status %d, want %d: %s", name, path, r.status, tc.status, r.raw)
			}
			if r.status == 401 {
				errorSchemaCheck(t, r)
			}
		}
	}
	if _, err := otc.NewHandler(otc.NewServerBackend(newSeedServer(t, defaultSeedEnv(t))), otc.WithAPIKeys("")); err == nil {
		t.Error("an empty API key is accepted")
	}
}

func TestJWTAuth(t *testing.T) {
	now := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	clock := func() time.Time { return now }
	ts := serve(t, newSeedServer(t, defaultSeedEnv(t)), otc.WithJWT(secret, "https://tools.example"), otc.WithClock(clock))
	sign := func(key []byte, claims map[string]any) string {
		tok, err := otc.SignHS256(key, claims)
		if err != nil {
			t.Fatal(err)
		}
		return tok
	}
	exp := func(d time.Duration) int64 { return now.Add(d).Unix() }
	// signRaw signs a header and payload given as raw JSON, as a token
	// writer with its own encoder might.
	signRaw := func(header, payload string) string {
		enc := base64.RawURLEncoding
		head := enc.EncodeToString([]byte(header)) + "." + enc.EncodeToString([]byte(payload))
		mac := hmac.New(sha256.New, secret)
		mac.Write([]byte(head))
		return head + "." + enc.EncodeToString(mac.Sum(nil))
	}
	noneTok := func() string {
		good := sign(secret, map[string]any{"exp": exp(time.Minute)})
		parts := strings.Split(good, ".")
		return "eyJhbGciOiJub25lIn0." + parts[1] + "." // {"alg":"none"}
	}
	for name, tc := range map[string]struct {
		authz  string
		status int
		reason string
	}{
		"valid":               {"Bearer " + sign(secret, map[string]any{"exp": exp(10 * time.Minute)}), 200, ""},
		"valid at 15 minutes": {"Bearer " + sign(secret, map[string]any{"exp": exp(15 * time.Minute)}), 200, ""},
		"lower-case scheme":   {"bearer " + sign(secret, map[string]any{"exp": exp(time.Minute)}), 200, ""},
		"aud matches":         {"Bearer " + sign(secret, map[string]any{"exp": exp(time.Minute), "aud": "https://tools.example"}), 200, ""},
		"aud array matches":   {"Bearer " + sign(secret, map[string]any{"exp": exp(time.Minute), "aud": []string{"x", "https://tools.example"}}), 200, ""},
		"aud mismatch":        {"Bearer " + sign(secret, map[string]any{"exp": exp(time.Minute), "aud": "https://other.example"}), 401, "aud"},
		"aud wrong type":      {"Bearer " + sign(secret, map[string]any{"exp": exp(time.Minute), "aud": 7}), 401, "aud"},
		"no exp":              {"Bearer " + sign(secret, map[string]any{"sub": "me"}), 401, `"exp" is required`},
		"exp not a number":    {"Bearer " + sign(secret, map[string]any{"exp": "soon"}), 401, "exp"},
		"expired":             {"Bearer " + sign(secret, map[string]any{"exp": exp(-time.Second)}), 401, "expired"},
		"exp now":             {"Bearer " + sign(secret, map[string]any{"exp": exp(0)}), 401, "expired"},
		"exp too far ahead":   {"Bearer " + sign(secret, map[string]any{"exp": exp(16 * time.Minute)}), 401, "at most 15m0s"},
		"nbf in the future":   {"Bearer " + sign(secret, map[string]any{"exp": exp(time.Minute), "nbf": exp(30 * time.Second)}), 401, "nbf"},
		"wrong secret":        {"Bearer " + sign([]byte("another secret, also 32 bytes..."), map[string]any{"exp": exp(time.Minute)}), 401, "signature"},
		"alg none":            {"Bearer " + noneTok(), 401, `alg "none"`},
		// Claims and header are read exactly: a reader that lets the last
		// of two members win, or matches names case-insensitively, must
		// not be able to see another token than this one.
		"exp twice":            {"Bearer " + signRaw(`{"alg":"HS256"}`, fmt.Sprintf(`{"exp":%d,"exp":%d}`, exp(-time.Hour), exp(time.Minute))), 401, "distinct member names"},
		"Alg variant":          {"Bearer " + signRaw(`{"alg":"HS256","Alg":"none"}`, fmt.Sprintf(`{"exp":%d}`, exp(time.Minute))), 401, "header"},
		"raw valid":            {"Bearer " + signRaw(`{"alg":"HS256","typ":"JWT"}`, fmt.Sprintf(`{"exp":%d}`, exp(time.Minute))), 200, ""},
		"not a JWT":            {"Bearer abc", 401, "compact JWT"},
		"basic scheme":         {"Basic dXNlcjpwYXNz", 401, "Bearer"},
		"no credentials":       {"", 401, "missing credentials"},
		"API key not accepted": {"", 401, "API keys are not accepted"},
	} {
		h := map[string]string{}
		if tc.authz != "" {
			h["Authorization"] = tc.authz
		}
		if name == "API key not accepted" {
			h["OTC-API-Key"] = "k"
		}
		r := do(t, http.MethodGet, ts.URL+"/tools", nil, h)
		if r.status != tc.status {
			t.Errorf("%s: status %d, want %d: %s", name, r.status, tc.status, r.raw)
			continue
		}
		if tc.status == 401 {
			if msg, _ := r.body["message"].(string); !strings.Contains(msg, tc.reason) {
				t.Errorf("%s: message %q does not say %q", name, msg, tc.reason)
			}
			if r.header.Get("WWW-Authenticate") == "" {
				t.Errorf("%s: no WWW-Authenticate", name)
			}
		}
	}
	if _, err := otc.NewHandler(otc.NewServerBackend(newSeedServer(t, defaultSeedEnv(t))), otc.WithJWT([]byte("short"), "")); err == nil {
		t.Error("a 5-byte HS256 secret is accepted")
	}
}

func TestJWTAudienceWithoutConfiguredAudience(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	tok, _ := otc.SignHS256(secret, map[string]any{"exp": now.Add(time.Minute).Unix(), "aud": "x"})
	if err := otc.VerifyHS256(tok, secret, "", now, 0); err == nil || !strings.Contains(err.Error(), "none configured") {
		t.Errorf("token with aud, server without audience: %v", err)
	}
	tok, _ = otc.SignHS256(secret, map[string]any{"exp": now.Add(time.Minute).Unix()})
	if err := otc.VerifyHS256(tok, secret, "", now, 0); err != nil {
		t.Errorf("token without aud: %v", err)
	}
	if err := otc.VerifyHS256(tok, secret, "", now, 30*time.Second); err == nil {
		t.Error("a shorter max lifetime is not enforced")
	}
}

func TestBothAuthMethodsTogether(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	ts := serve(t, newSeedServer(t, defaultSeedEnv(t)), otc.WithAPIKeys("k"), otc.WithJWT(secret, ""),
		otc.WithClock(func() time.Time { return now }))
	tok, _ := otc.SignHS256(secret, map[string]any{"exp": now.Add(time.Minute).Unix()})
	wantStatus(t, do(t, http.MethodGet, ts.URL+"/tools", nil, map[string]string{"OTC-API-Key": "k"}), 200)
	wantStatus(t, do(t, http.MethodGet, ts.URL+"/tools", nil, map[string]string{"Authorization": "Bearer " + tok}), 200)
	// A wrong key is refused even with a good token beside it: the key is
	// what the request chose to authenticate with.
	wantStatus(t, do(t, http.MethodGet, ts.URL+"/tools", nil, map[string]string{"OTC-API-Key": "bad", "Authorization": "Bearer " + tok}), 401)
}

func TestAuthOffIgnoresCredentials(t *testing.T) {
	ts := serve(t, newSeedServer(t, defaultSeedEnv(t)))
	for _, h := range []map[string]string{
		{"Authorization": "Bearer not-a-token"},
		{"Authorization": "Basic garbage"},
		{"OTC-API-Key": "whatever"},
	} {
		wantStatus(t, do(t, http.MethodGet, ts.URL+"/tools", nil, h), 200)
		wantStatus(t, call(t, ts, map[string]any{"tool_id": "Calculator.Add", "input": map[string]any{"a": 1, "b": 1}}, h), 200)
	}
}
