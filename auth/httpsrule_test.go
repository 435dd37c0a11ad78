package auth_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/toolwire/toolwire/auth"
)

func TestHTTPSRule(t *testing.T) {
	for _, u := range []string{"http://example.com", "ftp://127.0.0.1/", "http://user:pw@127.0.0.1/", "/relative", "http://10.0.0.1"} {
		if _, err := auth.NewJWTVerifier(u, testAudience); err == nil {
			t.Errorf("issuer %q accepted", u)
		}
		if _, err := auth.NewJWTVerifier("https://as.example.com", testAudience, auth.WithJWKSURL(u)); err == nil {
			t.Errorf("JWKS URL %q accepted", u)
		}
		if _, err := auth.NewIntrospectionVerifier(u, testAudience); err == nil {
			t.Errorf("introspection endpoint %q accepted", u)
		}
	}
	for _, u := range []string{"https://as.example.com", "http://127.0.0.1:9", "http://localhost:9", "http://[::1]:9", "http://127.1.2.3"} {
		if _, err := auth.NewJWTVerifier(u, testAudience); err != nil {
			t.Errorf("issuer %q refused: %v", u, err)
		}
	}
	// A jwks_uri that breaks the rule is not fetched.
	iss := newTestIssuer(t)
	v := newTestVerifier(t, iss, newClock(), auth.WithHTTPClient(&http.Client{Transport: auth.RoundTripFunc(func(r *http.Request) (*http.Response, error) {
		return jsonResponse(`{"issuer":"` + iss.url + `","jwks_uri":"http://keys.example.com/jwks"}`), nil
	})}))
	_, err := v.Verify(context.Background(), iss.mint(t, "k1", "", iss.claims(testAudience)))
	if !errors.Is(err, auth.ErrUnavailable) || !strings.Contains(err.Error(), "must use https") {
		t.Fatalf("http jwks_uri: %v", err)
	}
}

func jsonResponse(body string) *http.Response {
	return &http.Response{StatusCode: 200, Header: http.Header{"Content-Type": {"application/json"}},
		Body: io.NopCloser(strings.NewReader(body))}
}

func TestRedirectKeepsToHTTPSRule(t *testing.T) {
	iss := newTestIssuer(t)
	v := newTestVerifier(t, iss, newClock(), auth.WithHTTPClient(&http.Client{Transport: auth.RoundTripFunc(func(r *http.Request) (*http.Response, error) {
		if r.URL.Host == "keys.example.com" {
			t.Errorf("followed a redirect to %s", r.URL)
		}
		return &http.Response{StatusCode: http.StatusFound, Header: http.Header{"Location": {"http://keys.example.com/md"}},
			Body: io.NopCloser(strings.NewReader(""))}, nil
	})}))
	_, err := v.Verify(context.Background(), iss.mint(t, "k1", "", iss.claims(testAudience)))
	if !errors.Is(err, auth.ErrUnavailable) || !strings.Contains(err.Error(), "must use https") {
		t.Fatalf("redirect to http: %v", err)
	}
}
