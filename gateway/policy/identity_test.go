package policy

import (
	"testing"

	"github.com/toolwire/toolwire/auth"
)

func TestIdentity(t *testing.T) {
	if got := FromPrincipal(nil); !got.IsAnonymous() || got.String() != "anonymous" {
		t.Errorf("FromPrincipal(nil) = %+v", got)
	}
	claims := map[string]any{"role": "admin", "groups": []any{"eng", "sre"}, "n": float64(3), "ok": true, "obj": map[string]any{"a": "b"}, "list": []string{"x"}}
	id := FromPrincipal(&auth.Principal{Subject: "alice", Claims: claims})
	claims["role"] = "changed"
	if id.Kind != KindOAuth || id.Name != "alice" || id.String() != "oauth:alice" || id.IsAnonymous() {
		t.Errorf("FromPrincipal = %+v", id)
	}
	for _, c := range []struct {
		k, v string
		want bool
	}{
		{"role", "admin", true}, // the copy kept the original value
		{"role", "changed", false},
		{"groups", "sre", true},
		{"groups", "ops", false},
		{"n", "3", true},
		{"ok", "true", true},
		{"obj", "map[a:b]", false},
		{"list", "x", true},
		{"missing", "", false},
	} {
		if got := id.HasClaim(c.k, c.v); got != c.want {
			t.Errorf("HasClaim(%q, %q) = %v", c.k, c.v, got)
		}
	}
	if k := FromAPIKey("ci"); k.String() != "api_key:ci" || k.IsAnonymous() {
		t.Errorf("FromAPIKey = %+v", k)
	}
}
