package oauthtest

import (
	"net/http"
	"strings"

	"github.com/toolwire/toolwire/auth"
)

// NamedBearer stands in for an authentication middleware in tests of what
// happens after authentication: a request with "Authorization: Bearer
// NAME" gets the principal NAME (issuer "test", with scopes), one without
// the header goes on anonymous. It checks nothing: any name is accepted.
func NamedBearer(next http.Handler, scopes ...string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if name, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer "); ok {
			r = r.WithContext(auth.WithPrincipal(r.Context(), &auth.Principal{Issuer: "test", Subject: name, Scopes: scopes}))
		}
		next.ServeHTTP(w, r)
	})
}
