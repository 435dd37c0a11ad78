package oauthtest_test

import (
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"

	"github.com/toolwire/toolwire/auth"
	"github.com/toolwire/toolwire/internal/oauthtest"
)

// NamedBearer makes the bearer's name the principal, with the scopes
// given, and leaves a request without the header anonymous.
func TestNamedBearer(t *testing.T) {
	var got *auth.Principal
	h := oauthtest.NamedBearer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = auth.PrincipalFrom(r.Context())
	}), "tools")
	r := httptest.NewRequest(http.MethodPost, "/mcp", nil)
	r.Header.Set("Authorization", "Bearer alice")
	h.ServeHTTP(httptest.NewRecorder(), r)
	if got == nil || got.Subject != "alice" || got.Issuer != "test" || !slices.Equal(got.Scopes, []string{"tools"}) {
		t.Fatalf("principal %+v, want alice of test with scope tools", got)
	}
	got = nil
	h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodPost, "/mcp", nil))
	if got != nil {
		t.Fatalf("a request without the header got the principal %+v", got)
	}
}
