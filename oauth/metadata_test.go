package oauth

import (
	"net/url"
	"strings"
	"testing"
)

func TestDecodeMetadata(t *testing.T) {
	if _, err := DecodeProtectedResourceMetadata([]byte(`{"resource":"https://m/mcp","authorization_servers":["https://as"],"extra":1}`)); err != nil {
		t.Error(err)
	}
	for _, bad := range []string{``, `[]`, `{}`, `{"resource":1}`, `{"resource":"x","authorization_servers":[""]}`, `{"resource":"x"} {}`, strings.Repeat(" ", DefaultMaxResponseBytes+1)} {
		if _, err := DecodeProtectedResourceMetadata([]byte(bad)); err == nil {
			t.Errorf("accepted %.40q", bad)
		}
	}
	if _, err := DecodeAuthServerMetadata([]byte(`{"issuer":"https://as","token_endpoint":"https://as/token"}`)); err != nil {
		t.Error(err)
	}
	for _, bad := range []string{`{"issuer":"https://as"}`, `{"token_endpoint":"https://as/token"}`, `{"issuer":"a","token_endpoint":"b","code_challenge_methods_supported":"S256"}`} {
		if _, err := DecodeAuthServerMetadata([]byte(bad)); err == nil {
			t.Errorf("accepted %q", bad)
		}
	}
}

func TestResourceCovers(t *testing.T) {
	u, _ := url.Parse("https://mcp.example.com:443/tenant/mcp")
	for res, want := range map[string]bool{
		"https://mcp.example.com":             true,
		"https://MCP.example.com/":            true,
		"https://mcp.example.com/tenant":      true,
		"https://mcp.example.com/tenant/mcp":  true,
		"https://mcp.example.com/ten":         false,
		"https://mcp.example.com/tenant/mcp2": false,
		"http://mcp.example.com/tenant/mcp":   false,
		"https://mcp.example.com:8443/":       false,
		"https://evil.example.com/tenant/mcp": false,
		"not a url":                           false,
	} {
		if got := resourceCovers(res, u); got != want {
			t.Errorf("resourceCovers(%q) = %v", res, got)
		}
	}
}

func TestCanonicalResource(t *testing.T) {
	for in, want := range map[string]string{
		"HTTPS://MCP.Example.com:443/Mcp#frag": "https://mcp.example.com/Mcp",
		"http://localhost:8080":                "http://localhost:8080",
		"http://127.0.0.1:80/mcp?x=1":          "http://127.0.0.1/mcp?x=1",
	} {
		if got, err := CanonicalResource(in); err != nil || got != want {
			t.Errorf("CanonicalResource(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
}

func TestMetadataURLs(t *testing.T) {
	ep, _ := url.Parse("https://mcp.example.com/public/mcp")
	got := prmURLs(ep, "")
	want := []string{"https://mcp.example.com/.well-known/oauth-protected-resource/public/mcp", "https://mcp.example.com/.well-known/oauth-protected-resource"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("prmURLs = %q", got)
	}
	iss, _ := url.Parse("https://auth.example.com/tenant1")
	got = asMetadataURLs(iss)
	want = []string{"https://auth.example.com/.well-known/oauth-authorization-server/tenant1", "https://auth.example.com/.well-known/openid-configuration/tenant1", "https://auth.example.com/tenant1/.well-known/openid-configuration"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("asMetadataURLs = %q", got)
	}
	iss, _ = url.Parse("https://auth.example.com")
	if got = asMetadataURLs(iss); len(got) != 2 || !strings.HasSuffix(got[0], "/.well-known/oauth-authorization-server") {
		t.Errorf("asMetadataURLs = %q", got)
	}
}

// FuzzDecodeMetadata: both decoders take any input without panicking, and
// what they accept has the required members.
func FuzzDecodeMetadata(f *testing.F) {
	for _, s := range []string{
		`{"resource":"https://m/mcp","authorization_servers":["https://as"],"scopes_supported":["a"]}`,
		`{"issuer":"https://as","token_endpoint":"https://as/token","code_challenge_methods_supported":["S256"]}`,
		`{"resource":"x","issuer":"y","token_endpoint":"z"}`, `[]`, `{"resource":null}`, `{`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if m, err := DecodeProtectedResourceMetadata(data); err == nil && m.Resource == "" {
			t.Fatal("accepted PRM without a resource")
		}
		if m, err := DecodeAuthServerMetadata(data); err == nil && (m.Issuer == "" || m.TokenEndpoint == "") {
			t.Fatal("accepted AS metadata without issuer or token endpoint")
		}
	})
}
