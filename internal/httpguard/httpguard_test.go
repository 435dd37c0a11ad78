package httpguard

import (
	"net/http"
	"strings"
	"testing"
)

func TestPolicy(t *testing.T) {
	def := NewPolicy(nil, nil)
	for _, h := range []string{"localhost", "localhost:8080", "127.0.0.1:1", "[::1]:80", "LOCALHOST"} {
		if !def.HostAllowed(h) {
			t.Errorf("default policy refuses host %q", h)
		}
	}
	for _, h := range []string{"evil.example.com", "evil.example.com:8080", "127.0.0.2", ""} {
		if def.HostAllowed(h) {
			t.Errorf("default policy allows host %q", h)
		}
	}
	for _, o := range []string{"http://localhost:3000", "https://127.0.0.1", "http://[::1]:9"} {
		if !def.OriginAllowed(o) {
			t.Errorf("default policy refuses origin %q", o)
		}
	}
	for _, o := range []string{"http://evil.example.com", "null", "file://", "http://localhost.evil.com"} {
		if def.OriginAllowed(o) {
			t.Errorf("default policy allows origin %q", o)
		}
	}
	custom := NewPolicy([]string{"mcp.example.com", "10.0.0.5:8080"}, []string{"https://app.example.com"})
	if !custom.HostAllowed("mcp.example.com:443") || !custom.HostAllowed("10.0.0.5:8080") || custom.HostAllowed("10.0.0.5:9090") || custom.HostAllowed("localhost") {
		t.Error("custom host list misapplied")
	}
	if !custom.OriginAllowed("https://app.example.com") || custom.OriginAllowed("http://localhost") {
		t.Error("custom origin list misapplied")
	}
	if any := NewPolicy([]string{"*"}, []string{"*"}); !any.HostAllowed("x") || !any.OriginAllowed("http://y") {
		t.Error("* does not allow everything")
	}
}

func TestRefusal(t *testing.T) {
	p := NewPolicy(nil, nil)
	req := func(host, origin string) *http.Request {
		r, _ := http.NewRequest(http.MethodPost, "http://127.0.0.1:1/x", nil)
		r.Host = host
		if origin != "" {
			r.Header.Set("Origin", origin)
		}
		return r
	}
	if msg := p.Refusal(req("127.0.0.1:1", "")); msg != "" {
		t.Errorf("loopback refused: %s", msg)
	}
	if msg := p.Refusal(req("localhost:1", "http://localhost:3000")); msg != "" {
		t.Errorf("loopback origin refused: %s", msg)
	}
	if msg := p.Refusal(req("evil.example:1", "http://evil.example")); !strings.Contains(msg, `Origin "http://evil.example"`) {
		t.Errorf("foreign origin: %q", msg)
	}
	if msg := p.Refusal(req("evil.example:1", "")); !strings.Contains(msg, `Host "evil.example:1"`) {
		t.Errorf("foreign host: %q", msg)
	}
}

func TestMediaTypeIs(t *testing.T) {
	for ct, want := range map[string]bool{
		"application/json":                  true,
		"Application/JSON":                  true,
		"application/json; charset=utf-8":   true,
		"application/json ; charset=UTF-8":  true,
		"application/json;":                 true,
		"":                                  false,
		"text/plain":                        false,
		"application/x-www-form-urlencoded": false,
		"multipart/form-data; boundary=x":   false,
		"application/jsonx":                 false,
		"application/json; bad":             false,
	} {
		if got := MediaTypeIs(ct, "application/json"); got != want {
			t.Errorf("MediaTypeIs(%q) = %v, want %v", ct, got, want)
		}
	}
}
