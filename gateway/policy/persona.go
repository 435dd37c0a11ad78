package policy

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
)

// Feature is the kind of downstream object a rule applies to, named as
// the MCP list methods name them.
type Feature string

const (
	Tools     Feature = "tools"
	Prompts   Feature = "prompts"
	Resources Feature = "resources"
)

// Rules are a persona's globs for one feature, over downstream names
// (tool and prompt names as the gateway exposes them, resource URIs).
// Deny is checked first, then Allow; a name neither matches is denied.
type Rules struct {
	Allow []string
	Deny  []string
}

// Match says which callers a persona applies to. A caller matches if any
// of the three holds: its identity is listed in Identities (a bare name,
// without a colon, matches an API key name or a token subject;
// "api_key:NAME" or "oauth:NAME" only a caller of that kind with that
// exact name, so a token subject that itself reads "api_key:NAME" is
// not the API key), or it carries every claim in Claims (and Claims is
// not empty), or Anonymous is set and it has no credentials. Anonymous
// callers match only through Anonymous.
type Match struct {
	Identities []string
	Claims     map[string]string
	Anonymous  bool
}

// Persona is a named set of rights: who it applies to, and which tools,
// prompts and resources those callers may see and use.
type Persona struct {
	Name      string
	Match     Match
	Tools     Rules
	Prompts   Rules
	Resources Rules
}

// compiledRules are a feature's globs in config order, deny list first
// in evaluation; a decision cites the glob that decided.
type compiledRules struct {
	deny, allow []*Glob
}

type compiledPersona struct {
	name string
	// bare are the names listed without a kind, matching either kind;
	// qualified the kind:name entries, matching that kind only. Kept
	// apart so that a name is never read as a kind and a name together.
	bare      map[string]bool
	qualified map[qualifiedName]bool
	claims    [][2]string // sorted by key
	anonymous bool
	rules     map[Feature]compiledRules
}

// qualifiedName is an identity entry with its kind: "oauth:a:b" is the
// token subject "a:b".
type qualifiedName struct {
	kind Kind
	name string
}

func compilePersona(p Persona) (*compiledPersona, error) {
	var errs []error
	fail := func(format string, args ...any) {
		errs = append(errs, fmt.Errorf("persona %q: "+format, append([]any{p.Name}, args...)...))
	}
	cp := &compiledPersona{name: p.Name, anonymous: p.Match.Anonymous, bare: map[string]bool{},
		qualified: map[qualifiedName]bool{}, rules: map[Feature]compiledRules{}}
	for i, id := range p.Match.Identities {
		kind, name, qualified := strings.Cut(id, ":")
		switch {
		case strings.TrimSpace(id) == "":
			fail("match.identities[%d] is empty", i)
		case qualified && kind != string(KindAPIKey) && kind != string(KindOAuth):
			fail("match.identities[%d] %q: kind %q is neither %q nor %q", i, id, kind, KindAPIKey, KindOAuth)
		case qualified && name == "":
			fail("match.identities[%d] %q: empty name after the kind", i, id)
		case id == string(KindAnonymous):
			fail("match.identities[%d]: use match.anonymous to grant rights to callers without credentials", i)
		case qualified:
			cp.qualified[qualifiedName{Kind(kind), name}] = true
		default:
			cp.bare[id] = true
		}
	}
	for _, k := range slices.Sorted(maps.Keys(p.Match.Claims)) {
		if k == "" {
			fail("match.claims has an empty claim name")
			continue
		}
		cp.claims = append(cp.claims, [2]string{k, p.Match.Claims[k]})
	}
	if len(cp.bare) == 0 && len(cp.qualified) == 0 && len(cp.claims) == 0 && !cp.anonymous && len(errs) == 0 {
		fail("match names no identity, claim or anonymous, so no caller can have this persona")
	}
	for _, f := range []struct {
		feature Feature
		rules   Rules
	}{{Tools, p.Tools}, {Prompts, p.Prompts}, {Resources, p.Resources}} {
		var cr compiledRules
		for _, list := range []struct {
			name     string
			patterns []string
			deny     bool
		}{{"deny", f.rules.Deny, true}, {"allow", f.rules.Allow, false}} {
			for i, pat := range list.patterns {
				g, err := CompileGlob(pat)
				if err != nil {
					fail("%s.%s[%d]: %v", f.feature, list.name, i, err)
					continue
				}
				if list.deny {
					cr.deny = append(cr.deny, g)
				} else {
					cr.allow = append(cr.allow, g)
				}
			}
		}
		cp.rules[f.feature] = cr
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return cp, nil
}

// matches reports whether the persona applies to id.
func (cp *compiledPersona) matches(id Identity) bool {
	if id.IsAnonymous() {
		return cp.anonymous
	}
	if cp.bare[id.Name] || cp.qualified[qualifiedName{id.Kind, id.Name}] {
		return true
	}
	if len(cp.claims) == 0 {
		return false
	}
	for _, c := range cp.claims {
		if !id.HasClaim(c[0], c[1]) {
			return false
		}
	}
	return true
}

// describe is the persona's match condition in words, for explain output.
func (cp *compiledPersona) describe() string {
	var parts []string
	if len(cp.bare)+len(cp.qualified) > 0 {
		ids := slices.Collect(maps.Keys(cp.bare))
		for q := range cp.qualified {
			ids = append(ids, string(q.kind)+":"+q.name)
		}
		sort.Strings(ids)
		parts = append(parts, "identities "+strings.Join(ids, ", "))
	}
	if len(cp.claims) > 0 {
		cs := make([]string, len(cp.claims))
		for i, c := range cp.claims {
			cs[i] = c[0] + "=" + c[1]
		}
		sort.Strings(cs)
		parts = append(parts, "claims "+strings.Join(cs, " and "))
	}
	if cp.anonymous {
		parts = append(parts, "anonymous")
	}
	return strings.Join(parts, "; or ")
}
