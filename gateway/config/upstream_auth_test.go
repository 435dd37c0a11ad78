package config

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolwire/toolwire/oauth"
)

func TestHeaderFiles(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("auth", "Bearer s3cret-token\r\n\n")
	write("tenant", "ops")
	src := "upstreams:\n  web:\n    url: https://h/mcp\n    headers: {X-A: a}\n    header_files:\n      authorization: auth\n      X-Tenant: " + filepath.Join(dir, "tenant") + "\n"
	f, err := Parse([]byte(src), "g.yaml", WithBaseDir(dir))
	if err != nil {
		t.Fatal(err)
	}
	want := http.Header{"X-A": {"a"}, "Authorization": {"Bearer s3cret-token"}, "X-Tenant": {"ops"}}
	if got := f.Gateway.Upstreams[0].Header; !equalHeader(got, want) {
		t.Errorf("Header %v, want %v", got, want)
	}
	if err := Validate(f); err != nil {
		t.Errorf("Validate: %v", err)
	}

	// Errors never show a file's content.
	const secret = "Bearer s3cret\x01token"
	write("ctl", secret)
	write("empty", "\n")
	write("big", strings.Repeat("x", MaxHeaderFile+1))
	write("max", strings.Repeat("x", MaxHeaderFile))
	if err := os.Mkdir(filepath.Join(dir, "sub"), 0o700); err != nil {
		t.Fatal(err)
	}
	head := "upstreams:\n  web:\n    url: https://h/mcp\n"
	for _, c := range []struct{ src, want string }{
		{head + "    header_files: {A: ctl}\n", `g.yaml:4:23: upstream "web": header_files: A: ` + filepath.Join(dir, "ctl") + `: value contains a control character`},
		{head + "    header_files: {A: empty}\n", `g.yaml:4:23: upstream "web": header_files: A: ` + filepath.Join(dir, "empty") + `: empty value`},
		{head + "    header_files: {A: big}\n", `g.yaml:4:23: upstream "web": header_files: A: ` + filepath.Join(dir, "big") + `: larger than 65536 bytes`},
		{head + "    header_files: {A: missing}\n", `g.yaml:4:23: upstream "web": header_files: A: ` + filepath.Join(dir, "missing") + `: no such file or directory`},
		{head + "    header_files: {A: sub}\n", `g.yaml:4:23: upstream "web": header_files: A: ` + filepath.Join(dir, "sub") + `: not a regular file`},
		{head + "    header_files: {A: ''}\n", `g.yaml:4:23: upstream "web": header_files: A: want the path of a file`},
		{head + "    header_files: {Host: max}\n", `g.yaml:4:20: upstream "web": header_files: Host is set by the transport, not the config`},
		{head + "    headers: {X-A: a}\n    header_files: {x-a: max}\n", `g.yaml:5:20: upstream "web": header_files: "x-a" repeats a header name (first at 4:15)`},
		{head + "    header_files: [max]\n", `g.yaml:4:19: upstream "web": header_files: want a mapping, not a list`},
		{"upstreams:\n  cmd:\n    command: [x]\n    header_files: {A: max}\n", `g.yaml:4:5: upstream "cmd": header_files applies to url upstreams only`},
	} {
		_, err := Parse([]byte(c.src), "g.yaml", WithBaseDir(dir))
		if err == nil || err.Error() != c.want {
			t.Errorf("%q:\n got %v\nwant %s", c.src, err, c.want)
		}
		if err != nil && (strings.Contains(err.Error(), "s3cret") || strings.Contains(err.Error(), "xxxx")) {
			t.Errorf("%q: the error shows the file's content: %v", c.src, err)
		}
	}
	// The maximum is fine; relative paths without a base directory are
	// the working directory's.
	if _, err := Parse([]byte(head+"    header_files: {A: max}\n"), "g.yaml", WithBaseDir(dir)); err != nil {
		t.Errorf("a file of %d bytes: %v", MaxHeaderFile, err)
	}
	t.Chdir(dir)
	if _, err := Parse([]byte(head+"    header_files: {A: tenant}\n"), "g.yaml"); err != nil {
		t.Errorf("relative to the working directory: %v", err)
	}
}

func equalHeader(a, b http.Header) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w := b[k]; len(w) != 1 || len(v) != 1 || v[0] != w[0] {
			return false
		}
	}
	return true
}

func TestUpstreamOAuth(t *testing.T) {
	src := "upstreams:\n  crm:\n    url: https://crm.example.com/mcp\n    oauth:\n      client_id: gw\n      client_secret: ${SECRET}\n      scopes: [a, b]\n"
	load := func(secret string) *oauth.Authorizer {
		t.Helper()
		f, err := Parse([]byte(src), "g.yaml", env(map[string]string{"SECRET": secret}))
		if err != nil {
			t.Fatal(err)
		}
		if err := Validate(f); err != nil {
			t.Errorf("Validate: %v", err)
		}
		a, ok := f.Gateway.Upstreams[0].Auth.(*oauth.Authorizer)
		if !ok {
			t.Fatalf("Auth is a %T", f.Gateway.Upstreams[0].Auth)
		}
		return a
	}
	a1, a2, b := load("one"), load("one"), load("two")
	if a1 != a2 {
		t.Error("the same settings made another Authorizer")
	}
	if a1 == b {
		t.Error("another secret kept the Authorizer")
	}
	if load("one") == load("two") {
		t.Error("the cache mixed up secrets")
	}
	// A loopback http url is allowed.
	if _, err := Parse([]byte("upstreams:\n  l:\n    url: http://127.0.0.1:3000/mcp\n    oauth: {client_id: a, client_secret: b}\n"), "g.yaml"); err != nil {
		t.Errorf("loopback http: %v", err)
	}

	head := "upstreams:\n  crm:\n    url: https://crm.example.com/mcp\n"
	for _, c := range []struct{ src, want string }{
		{head + "    oauth: {client_id: a}\n", `g.yaml:4:5: upstream "crm": oauth: no client_secret (the client credentials grant needs client_id and client_secret)`},
		{head + "    oauth:\n", `g.yaml:4:5: upstream "crm": oauth: no client_id (the client credentials grant needs client_id and client_secret)` + "\n" +
			`g.yaml:4:5: upstream "crm": oauth: no client_secret (the client credentials grant needs client_id and client_secret)`},
		{head + "    oauth: {client_id: a, client_secret: b, token_endpoint_auth_method: private_key_jwt}\n", `g.yaml:4:73: upstream "crm": oauth: token_endpoint_auth_method: "private_key_jwt" is not one of client_secret_basic, client_secret_post`},
		{head + "    oauth: {client_id: a, client_secret: b, scope: [x]}\n", `g.yaml:4:45: unknown key "scope" in upstream "crm": oauth (did you mean "scopes"?)`},
		{head + "    oauth: {client_id: a, client_secret: b, allow_private_networks: maybe}\n", `g.yaml:4:69: upstream "crm": oauth: allow_private_networks: "maybe" is neither true nor false`},
		{head + "    oauth: {client_id: a, client_secret: \"x\\ny\"}\n", `g.yaml:4:42: upstream "crm": oauth: client_secret: value contains a control character`},
		{head + "    headers: {authorization: x}\n    oauth: {client_id: a, client_secret: b}\n", `g.yaml:5:5: upstream "crm": oauth sets the Authorization header, which headers or header_files set too`},
		{"upstreams:\n  crm:\n    url: http://crm.example.com/mcp\n    oauth: {client_id: a, client_secret: b}\n", `g.yaml:4:5: upstream "crm": oauth needs an https url (http only on a loopback host): no token is sent over plain http`},
		{"upstreams:\n  cmd:\n    command: [x]\n    oauth: {client_id: a, client_secret: b}\n", `g.yaml:4:5: upstream "cmd": oauth applies to url upstreams only`},
		{head + "    oauth: [x]\n", `g.yaml:4:12: upstream "crm": oauth: want a mapping, not a list`},
	} {
		rejected(t, c.src, c.want)
	}
}

func TestAuthorizerCacheBounded(t *testing.T) {
	for i := range maxAuthorizers + 10 {
		o := &upstreamOAuth{clientID: "c", clientSecret: strings.Repeat("s", i+1)}
		if _, err := authorizer("https://h/mcp", o); err != nil {
			t.Fatal(err)
		}
	}
	authorizers.Lock()
	n, m := len(authorizers.byKey), len(authorizers.order)
	authorizers.Unlock()
	if n > maxAuthorizers || n != m {
		t.Errorf("%d cached (%d in order), at most %d", n, m, maxAuthorizers)
	}
}
