package policy

import (
	"fmt"
	"maps"

	"github.com/toolwire/toolwire/auth"
)

// Kind says how a caller authenticated.
type Kind string

const (
	// KindAnonymous is a caller that presented no credentials.
	KindAnonymous Kind = "anonymous"
	// KindAPIKey is a caller that presented a configured API key.
	KindAPIKey Kind = "api_key"
	// KindOAuth is a caller that presented a valid OAuth access token.
	KindOAuth Kind = "oauth"
)

// Identity is a resolved caller: who it is (an API key's configured name,
// or an access token's subject), how it authenticated, and the claims
// (roles, groups, ...) its token carried. Treat it as immutable: Claims is
// a private copy made by the constructors.
type Identity struct {
	Name   string
	Kind   Kind
	Claims map[string]any
}

// Anonymous is the identity of a caller without credentials. It has no
// rights unless a persona grants them to anonymous callers explicitly.
func Anonymous() Identity { return Identity{Name: "anonymous", Kind: KindAnonymous} }

// FromAPIKey is the identity of a caller that presented the API key
// configured as name (as KeySet.Lookup returns it).
func FromAPIKey(name string) Identity {
	return Identity{Name: name, Kind: KindAPIKey}
}

// FromPrincipal is the identity of an authenticated caller: the API key's
// name for a principal of APIKeyIssuer (Authenticate), else an OAuth
// access token's subject with its claims (copied). A nil principal is
// Anonymous.
func FromPrincipal(p *auth.Principal) Identity {
	if p == nil {
		return Anonymous()
	}
	if p.Issuer == APIKeyIssuer {
		return FromAPIKey(p.Subject)
	}
	return Identity{Name: p.Subject, Kind: KindOAuth, Claims: maps.Clone(p.Claims)}
}

// String is the identity as audit records and explain output show it,
// "api_key:ci-bot", "oauth:alice" or "anonymous".
func (id Identity) String() string {
	if id.Kind == KindAnonymous || id.Kind == "" {
		return string(KindAnonymous)
	}
	return string(id.Kind) + ":" + id.Name
}

// IsAnonymous reports whether the caller presented no credentials.
func (id Identity) IsAnonymous() bool {
	return id.Kind == KindAnonymous || id.Kind == ""
}

// HasClaim reports whether the identity's claim key equals want. A claim
// that is a list (roles, groups) holds if any element equals want; scalar
// claims (strings, numbers, booleans) compare by their text, so a YAML
// `admin: true` matches a JSON true.
func (id Identity) HasClaim(key, want string) bool {
	v, ok := id.Claims[key]
	if !ok {
		return false
	}
	switch v := v.(type) {
	case []any:
		for _, e := range v {
			if scalarEquals(e, want) {
				return true
			}
		}
		return false
	case []string:
		for _, e := range v {
			if e == want {
				return true
			}
		}
		return false
	default:
		return scalarEquals(v, want)
	}
}

func scalarEquals(v any, want string) bool {
	switch v := v.(type) {
	case string:
		return v == want
	case bool, float64, float32, int, int64, int32, uint, uint64, uint32:
		return fmt.Sprint(v) == want
	default:
		// Objects, nulls and json.Number-like types never match: a
		// persona must not be granted by a claim of an unexpected shape.
		return false
	}
}
