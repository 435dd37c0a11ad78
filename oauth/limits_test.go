package oauth

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/toolwire/toolwire/auth"
)

// padJSON is a JSON object of exactly n bytes: obj with a pad member.
func padJSON(t *testing.T, obj string, n int) string {
	t.Helper()
	base := strings.TrimSuffix(obj, "}") + `,"pad":""}`
	if len(base) > n {
		t.Fatalf("%d bytes do not hold %s", n, obj)
	}
	return strings.TrimSuffix(obj, "}") + `,"pad":"` + strings.Repeat("x", n-len(base)) + `"}`
}

// Config.MaxResponseBytes bounds discovery's documents: one of exactly
// the limit is read, one byte more is refused with an error naming the
// limit.
func TestMaxResponseBytesMetadata(t *testing.T) {
	const limit = 600
	var size int
	var srvURL string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/.well-known/oauth-protected-resource/mcp":
			fmt.Fprint(w, padJSON(t, `{"resource":"`+srvURL+`/mcp","authorization_servers":["`+srvURL+`"]}`, size))
		case "/.well-known/oauth-authorization-server":
			fmt.Fprint(w, padJSON(t, `{"issuer":"`+srvURL+`","token_endpoint":"`+srvURL+`/token"}`, size))
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	srvURL = srv.URL
	a, err := NewAuthorizer(Config{Endpoint: srv.URL + "/mcp", MaxResponseBytes: limit})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()

	size = limit
	if prm, err := a.disc.protectedResource(ctx, a.endpoint, ""); err != nil || prm == nil {
		t.Fatalf("a document of exactly the limit: %v %v", prm, err)
	}
	if md, err := a.disc.authServer(ctx, srv.URL, false); err != nil || md.TokenEndpoint == "" {
		t.Fatalf("metadata of exactly the limit: %v %v", md, err)
	}

	size = limit + 1
	_, err = a.disc.protectedResource(ctx, a.endpoint, "")
	if err == nil || !strings.Contains(err.Error(), "longer than the limit of 600 bytes (MaxResponseBytes)") {
		t.Fatalf("a document one byte over the limit: %v", err)
	}
	_, err = a.disc.authServer(ctx, srv.URL, false)
	if err == nil || !strings.Contains(err.Error(), "600 bytes") {
		t.Fatalf("metadata one byte over the limit: %v", err)
	}
	// Login fails at discovery, naming the limit.
	if err := a.Login(ctx); err == nil || !strings.Contains(err.Error(), "discovery") || !strings.Contains(err.Error(), "limit of 600 bytes") {
		t.Fatalf("Login: %v", err)
	}

	// The default is DefaultMaxResponseBytes: 300 KiB is too long, 200
	// KiB is fine.
	d, _ := NewAuthorizer(Config{Endpoint: srv.URL + "/mcp"})
	if d.maxBytes != DefaultMaxResponseBytes || d.disc.limit() != DefaultMaxResponseBytes {
		t.Fatalf("default bound %d", d.maxBytes)
	}
	size = 200 << 10
	if _, err := d.disc.protectedResource(ctx, d.endpoint, ""); err != nil {
		t.Fatal(err)
	}
	size = DefaultMaxResponseBytes + 1
	if _, err := d.disc.protectedResource(ctx, d.endpoint, ""); err == nil {
		t.Fatal("a document over the default limit was read")
	}
	// And a larger limit admits a larger document.
	big, _ := NewAuthorizer(Config{Endpoint: srv.URL + "/mcp", MaxResponseBytes: 1 << 20})
	if _, err := big.disc.protectedResource(ctx, big.endpoint, ""); err != nil {
		t.Fatalf("a larger limit: %v", err)
	}
}

// The registration and token responses share the bound; the Authorizer
// passes it to the TokenEndpoint it hands grants.
func TestMaxResponseBytesTokenAndRegistration(t *testing.T) {
	const limit = 300
	var size int
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/token":
			fmt.Fprint(w, padJSON(t, `{"access_token":"at","token_type":"Bearer"}`, size))
		case "/register":
			w.WriteHeader(http.StatusCreated)
			fmt.Fprint(w, padJSON(t, `{"client_id":"c1"}`, size))
		}
	}))
	defer srv.Close()
	a, err := NewAuthorizer(Config{Endpoint: srv.URL + "/mcp", MaxResponseBytes: limit, RedirectURI: "http://127.0.0.1:1/cb"})
	if err != nil {
		t.Fatal(err)
	}
	md := &auth.AuthServerMetadata{Issuer: srv.URL, TokenEndpoint: srv.URL + "/token", RegistrationEndpoint: srv.URL + "/register"}
	te := a.tokenEndpoint(md, ClientInfo{ID: "c1"})
	if te.MaxResponseBytes != limit {
		t.Fatalf("TokenEndpoint.MaxResponseBytes %d", te.MaxResponseBytes)
	}
	ctx := context.Background()
	size = limit
	if _, err := te.Request(ctx, url.Values{"grant_type": {"client_credentials"}}); err != nil {
		t.Fatalf("a token response of exactly the limit: %v", err)
	}
	if c, err := a.dynamicRegistration(ctx, md); err != nil || c.ID != "c1" {
		t.Fatalf("a registration response of exactly the limit: %v %v", c, err)
	}
	size = limit + 1
	if _, err := te.Request(ctx, url.Values{"grant_type": {"client_credentials"}}); err == nil || !strings.Contains(err.Error(), "limit of 300 bytes") {
		t.Fatalf("a token response one byte over: %v", err)
	}
	if _, err := a.dynamicRegistration(ctx, md); err == nil || !strings.Contains(err.Error(), "limit of 300 bytes") {
		t.Fatalf("a registration response one byte over: %v", err)
	}
	// A token exchange takes the bound from the TokenEndpoint too.
	x := TokenExchange{Endpoint: srv.URL + "/token", SubjectToken: "s", SubjectTokenType: TokenTypeIDToken, MaxResponseBytes: limit}
	if _, err := x.Exchange(ctx, srv.Client()); err == nil || !strings.Contains(err.Error(), "limit of 300 bytes") {
		t.Fatalf("a token exchange response one byte over: %v", err)
	}
}

// redirectServer redirects /r/N to /r/N-1 down to /r/0, which serves a
// metadata document.
func redirectServer(t *testing.T) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n, err := strconv.Atoi(strings.TrimPrefix(r.URL.Path, "/r/"))
		if err != nil {
			http.NotFound(w, r)
			return
		}
		if n > 0 {
			// 307 keeps a POST a POST.
			http.Redirect(w, r, "/r/"+strconv.Itoa(n-1), http.StatusTemporaryRedirect)
			return
		}
		fmt.Fprint(w, `{"access_token":"at","token_type":"Bearer","resource":"x"}`)
	}))
	t.Cleanup(srv.Close)
	return srv
}

// Config.MaxRedirects bounds the redirects of every request: 0 is 3, a
// positive number that many, a negative one none.
func TestMaxRedirects(t *testing.T) {
	srv := redirectServer(t)
	ctx := context.Background()
	for _, c := range []struct{ config, follows int }{{0, DefaultMaxRedirects}, {1, 1}, {5, 5}, {-1, 0}} {
		a, err := NewAuthorizer(Config{Endpoint: srv.URL + "/mcp", MaxRedirects: c.config})
		if err != nil {
			t.Fatal(err)
		}
		for n := 0; n <= c.follows+1; n++ {
			_, found, err := a.disc.get(ctx, "test URL", srv.URL+"/r/"+strconv.Itoa(n))
			if ok := err == nil && found; ok != (n <= c.follows) {
				t.Errorf("MaxRedirects %d, %d redirects: found %t, %v", c.config, n, found, err)
			}
			if n > c.follows && (err == nil || !strings.Contains(err.Error(), "MaxRedirects")) {
				t.Errorf("MaxRedirects %d, %d redirects: the refusal %v does not name MaxRedirects", c.config, n, err)
			}
		}
		// The TokenEndpoint handed to grants has the same bound, enforced
		// also on an HTTP client of its own.
		for _, hc := range []*http.Client{nil, srv.Client()} {
			te := a.tokenEndpoint(&auth.AuthServerMetadata{Issuer: srv.URL}, ClientInfo{})
			if hc != nil {
				te.HTTP = hc
			}
			for _, n := range []int{c.follows, c.follows + 1} {
				te.URL = srv.URL + "/r/" + strconv.Itoa(n)
				_, err := te.Request(ctx, url.Values{"grant_type": {"client_credentials"}})
				if (err == nil) != (n <= c.follows) {
					t.Errorf("token endpoint, MaxRedirects %d, %d redirects: %v", c.config, n, err)
				}
			}
		}
	}
}
