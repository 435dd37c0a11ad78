package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolwire/toolwire/gateway"
)

// TestUpstreamToolsAndTokenExchange: an upstream's tools (title,
// description, pinned arguments as compact JSON) and oauth: token_exchange
// decode into it, the secret from the environment or a file; each mistake
// is reported at its line and column, without a secret.
func TestUpstreamToolsAndTokenExchange(t *testing.T) {
	secretFile := filepath.Join(t.TempDir(), "secret")
	if err := os.WriteFile(secretFile, []byte("from-a-file\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	src := `upstreams:
  gh:
    url: https://gh.example.com/mcp
    oauth:
      token_exchange:
        token_endpoint: https://as.example.com/token
        client_id: gateway
        client_secret: ${TX_SECRET}
        audience: https://gh.example.com/mcp
        scopes: [issues]
    tools:
      create_issue:
        title: Create an issue in acme/app
        description: Files an issue in acme/app.
        pin: {repo: "acme/<app>", draft: false, priority: 2, ratio: -1.5e3}
  ticket:
    url: https://t.example.com/mcp
    headers: {Authorization: Bearer static}
    oauth:
      token_exchange: {issuer: https://as.example.com, client_id: gw, client_secret_file: ` + secretFile + `, on_api_key: static}
`
	f, err := Parse([]byte(src), "g.yaml", env(map[string]string{"TX_SECRET": "s3cret"}))
	if err != nil {
		t.Fatal(err)
	}
	gh, ticket := f.Gateway.Upstreams[0], f.Gateway.Upstreams[1]
	x := gh.TokenExchange
	if x == nil || x.TokenEndpoint != "https://as.example.com/token" || x.ClientID != "gateway" || x.ClientSecret != "s3cret" ||
		x.Audience != "https://gh.example.com/mcp" || strings.Join(x.Scopes, " ") != "issues" || x.OnAPIKey != gateway.APIKeyRefuse || gh.Auth != nil {
		t.Fatalf("gh: %+v auth %v", x, gh.Auth)
	}
	o := gh.Tools["create_issue"]
	if o.Title != "Create an issue in acme/app" || o.Description != "Files an issue in acme/app." {
		t.Fatalf("override: %+v", o)
	}
	for k, want := range map[string]string{"repo": `"acme/<app>"`, "draft": "false", "priority": "2", "ratio": "-1.5e3"} {
		if got := string(o.Pin[k]); got != want {
			t.Errorf("pin %s = %s, want %s", k, got, want)
		}
	}
	if y := ticket.TokenExchange; y == nil || y.Issuer != "https://as.example.com" || y.ClientSecret != "from-a-file" || y.OnAPIKey != gateway.APIKeyStatic {
		t.Fatalf("ticket: %+v", y)
	}

	head := "upstreams:\n  gh:\n    url: https://gh.example.com/mcp\n"
	for _, c := range []struct{ src, want string }{
		{head + "    oauth:\n      token_exchange: {client_id: g}\n", `g.yaml:5:7: upstream "gh": oauth: token_exchange: no token_endpoint or issuer`},
		{head + "    oauth:\n      token_exchange: {token_endpoint: https://a/t}\n", `g.yaml:5:7: upstream "gh": oauth: token_exchange: no client_id`},
		{head + "    oauth:\n      token_exchange: {token_endpoint: http://as.example.com/t, client_id: g}\n", `g.yaml:5:40: upstream "gh": oauth: token_exchange: token_endpoint: "http://as.example.com/t": want https`},
		{head + "    oauth:\n      token_exchange: {issuer: https://a, token_endpoint: https://a/t, client_id: g}\n", `token_endpoint and issuer exclude each other`},
		{head + "    oauth:\n      token_exchange: {token_endpoint: https://a/t, client_id: g, on_api_key: statik}\n", `on_api_key: "statik" is not one of refuse, static (did you mean "static"?)`},
		{head + "    oauth:\n      token_exchange: {token_endpoint: https://a/t, client_id: g, on_api_key: static}\n", `on_api_key: static needs the upstream's own credentials`},
		{head + "    oauth:\n      token_exchange: {token_endpoint: https://a/t, client_id: g, client_secret: \"bad\x01secret\"}\n", `client_secret: want a non-empty printable value (not shown)`},
		{head + "    oauth:\n      token_exchange: {token_endpoint: https://a/t, client_id: g, audiense: x}\n", `unknown key "audiense" in upstream "gh": oauth: token_exchange (did you mean "audience"?)`},
		{head + "    tools:\n      t: {pin: {repo: [a, b]}}\n", `g.yaml:5:23: upstream "gh": tools: "t": pin: "repo": want a string, a number or a boolean, not a list`},
		{head + "    tools:\n      t: {pin: {n: 0x1f}}\n", `g.yaml:5:20: upstream "gh": tools: "t": pin: "n": "0x1f" is not a number as JSON writes it`},
		{head + "    tools:\n      t: {titel: x}\n", `g.yaml:5:11: unknown key "titel" in upstream "gh": tools: "t" (did you mean "title"?)`},
		{head + "    tools:\n      t: {description: \" \"}\n", `upstream "gh": tools: "t": description: empty`},
	} {
		_, err := Parse([]byte(c.src), "g.yaml", env(nil))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q:\n got %v\nwant %s", c.src, err, c.want)
		} else if strings.Contains(err.Error(), "secret") && strings.Contains(err.Error(), "bad") {
			t.Errorf("a secret is echoed: %v", err)
		}
	}
}

// isJSONNumber takes a number only as JSON writes it: no sign but a
// leading minus, no leading zero, digits on both sides of the point and
// after the exponent's sign.
func TestIsJSONNumber(t *testing.T) {
	for s, want := range map[string]bool{
		"0": true, "-0": true, "7": true, "120": true, "-3.25": true, "1e9": true, "1E+9": true, "2.5e-3": true, "0.0": true,
		"": false, "-": false, "+1": false, "01": false, ".5": false, "5.": false, "1e": false, "1e+": false,
		"0x1f": false, "1_000": false, " 1": false, "1 ": false, "1.2.3": false, "Inf": false, "1e5x": false,
	} {
		if got := isJSONNumber(s); got != want {
			t.Errorf("isJSONNumber(%q) = %v, want %v", s, got, want)
		}
	}
}
