package client

import (
	"net/url"
	"testing"

	"github.com/toolwire/toolwire/internal/httpguard"
)

// FuzzResolveEndpoint feeds arbitrary endpoint event data to the
// resolution of the HTTP+SSE transport's endpoint. Invariants: no panic;
// an endpoint accepted parses again to a URL on the stream's origin
// (scheme, host and port), without a fragment.
func FuzzResolveEndpoint(f *testing.F) {
	for _, s := range []string{
		"/message?sessionId=1", "message", "../x?a=b#frag", "http://127.0.0.1:8080/m",
		"//evil.example/m", "https://127.0.0.1:8080/m", "http://127.0.0.1:8081/m", " \t/m \n",
		"http://127.0.0.1:8080@evil.example/m", "http://[::1]:8080/m", "%zz", "", "javascript:alert(1)",
		"http://127.0.0.1:8080\\@evil.example/", "HTTP://127.0.0.1:8080/m",
	} {
		f.Add([]byte(s))
	}
	base, err := url.Parse("http://127.0.0.1:8080/sse")
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		ep, err := resolveEndpoint(base, data)
		if err != nil {
			return
		}
		u, perr := url.Parse(ep)
		if perr != nil {
			t.Fatalf("accepted %q as %q, which does not parse: %v", data, ep, perr)
		}
		if !httpguard.SameOrigin(u, base) {
			t.Fatalf("accepted %q as %q, on another origin", data, ep)
		}
		if u.Fragment != "" {
			t.Fatalf("accepted %q as %q, with a fragment", data, ep)
		}
	})
}
