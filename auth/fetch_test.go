package auth

import (
	"context"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
)

func TestCheckFetchURL(t *testing.T) {
	for _, u := range []string{"https://as.example.com/x", "http://127.0.0.1:9/jwks", "http://localhost/", "http://LOCALHOST:1", "http://[::1]:9", "http://127.1.2.3"} {
		if err := checkFetchURL(u); err != nil {
			t.Errorf("%s refused: %v", u, err)
		}
	}
	for _, u := range []string{"http://example.com", "http://10.0.0.1", "http://localhost.example.com", "ftp://127.0.0.1/",
		"https://user:pw@as.example.com/", "https://as.example.com/#f", "/relative", "", "http://[::ffff:10.0.0.1]/"} {
		if err := checkFetchURL(u); err == nil {
			t.Errorf("%s accepted", u)
		}
	}
}

func TestMetadataURLs(t *testing.T) {
	for iss, want := range map[string][]string{
		"https://as.example.com": {"https://as.example.com/.well-known/oauth-authorization-server", "https://as.example.com/.well-known/openid-configuration"},
		"https://as.example.com/tenant1": {"https://as.example.com/.well-known/oauth-authorization-server/tenant1",
			"https://as.example.com/.well-known/openid-configuration/tenant1", "https://as.example.com/tenant1/.well-known/openid-configuration"},
	} {
		got, err := metadataURLs(iss)
		if err != nil || !slices.Equal(got, want) {
			t.Errorf("metadataURLs(%q) = %v, %v", iss, got, err)
		}
	}
}

func TestFetchRefusesNonJSONAndErrors(t *testing.T) {
	fc := &fetchConfig{}
	fc.defaults()
	answer := func(status int, ct, body string) {
		fc.client.Transport = roundTripFunc(func(r *http.Request) (*http.Response, error) {
			return &http.Response{StatusCode: status, Header: http.Header{"Content-Type": {ct}}, Body: io.NopCloser(strings.NewReader(body))}, nil
		})
	}
	var v map[string]any
	for _, tc := range []struct {
		status   int
		ct, body string
		want     string
	}{
		{200, "text/html", "{}", "not JSON"},
		{500, "application/json", "{}", "status 500"},
		{404, "application/json", "{}", "not found"},
		{200, "application/json", "{", "invalid JSON"},
		{200, "application/jwk-set+json", `{"keys":[]}`, ""},
		// The answer is read as the wire is: a member name twice, at any
		// depth, is refused rather than resolved by taking one.
		{200, "application/json", `{"keys":[],"keys":[{"kty":"oct"}]}`, `duplicate member name "keys"`},
		{200, "application/json", `{"keys":[{"kid":"a","kid":"b"}]}`, `duplicate member name "kid"`},
	} {
		answer(tc.status, tc.ct, tc.body)
		err := fc.getJSON(context.Background(), "https://as.example.com/x", &v)
		if tc.want == "" && err != nil || tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("%d %s: %v, want %q", tc.status, tc.ct, err, tc.want)
		}
	}
	// A case variant of a member the reader knows is refused, not taken
	// for that member (nor silently ignored).
	answer(200, "application/json", `{"Issuer":"https://evil.example.com","jwks_uri":"https://as.example.com/jwks"}`)
	var md AuthServerMetadata
	err := fc.getJSON(context.Background(), "https://as.example.com/x", &md)
	if err == nil || !strings.Contains(err.Error(), "case-sensitive") {
		t.Errorf("metadata with \"Issuer\": %v, want a refusal naming case", err)
	}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }
