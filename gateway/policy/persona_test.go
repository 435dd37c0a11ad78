package policy

import (
	"slices"
	"strings"
	"testing"
)

func mustPolicy(t *testing.T, ps ...Persona) *Policy {
	t.Helper()
	p, err := New(ps)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestPersonaMatching(t *testing.T) {
	p := mustPolicy(t,
		Persona{Name: "ci", Match: Match{Identities: []string{"api_key:ci-bot"}}, Tools: Rules{Allow: []string{"*"}}},
		Persona{Name: "named", Match: Match{Identities: []string{"carol"}}, Tools: Rules{Allow: []string{"*"}}},
		Persona{Name: "admins", Match: Match{Claims: map[string]string{"role": "admin", "tenant": "acme"}}, Tools: Rules{Allow: []string{"*"}}},
		Persona{Name: "guests", Match: Match{Anonymous: true}, Tools: Rules{Allow: []string{"public.*"}}},
	)
	oauth := func(name string, claims map[string]any) Identity {
		return Identity{Name: name, Kind: KindOAuth, Claims: claims}
	}
	for _, c := range []struct {
		id   Identity
		want string
	}{
		{FromAPIKey("ci-bot"), "ci"},
		{oauth("ci-bot", nil), ""}, // kind-qualified: a token subject is not the API key
		{FromAPIKey("carol"), "named"},
		{oauth("carol", nil), "named"}, // a bare name matches either kind
		{oauth("dave", map[string]any{"role": "admin", "tenant": "acme"}), "admins"},
		{oauth("dave", map[string]any{"role": []any{"dev", "admin"}, "tenant": "acme"}), "admins"},
		{oauth("dave", map[string]any{"role": "admin"}), ""}, // every listed claim must hold
		{oauth("dave", map[string]any{"role": "dev", "tenant": "acme"}), ""},
		{Anonymous(), "guests"},
		{Identity{}, "guests"}, // the zero Identity is anonymous
		{FromAPIKey("unknown"), ""},
		// An anonymous identity never matches by name or claims.
		{Identity{Name: "carol", Kind: KindAnonymous, Claims: map[string]any{"role": "admin", "tenant": "acme"}}, "guests"},
	} {
		got, ok := p.PersonaOf(c.id)
		if got != c.want || ok != (c.want != "") {
			t.Errorf("PersonaOf(%s %v) = %q, %v; want %q", c.id, c.id.Claims, got, ok, c.want)
		}
	}

	noAnon := mustPolicy(t, Persona{Name: "x", Match: Match{Identities: []string{"a"}}})
	if _, ok := noAnon.PersonaOf(Anonymous()); ok {
		t.Error("anonymous got a persona nobody granted it")
	}
}

func TestOverlappingPersonasFirstWins(t *testing.T) {
	// alice is both listed by name and an admin by claim: the first
	// persona in config order decides, and rights do not add up.
	p := mustPolicy(t,
		Persona{Name: "alice-readonly", Match: Match{Identities: []string{"alice"}}, Tools: Rules{Allow: []string{"read_*"}}},
		Persona{Name: "admins", Match: Match{Claims: map[string]string{"role": "admin"}}, Tools: Rules{Allow: []string{"*"}}},
	)
	alice := Identity{Name: "alice", Kind: KindOAuth, Claims: map[string]any{"role": "admin"}}
	bob := Identity{Name: "bob", Kind: KindOAuth, Claims: map[string]any{"role": "admin"}}
	if d := p.Decide(alice, Tools, "delete_repo"); d.Allowed || d.Persona != "alice-readonly" || d.Rule != NoRule {
		t.Errorf("alice delete_repo = %+v", d)
	}
	if d := p.Decide(alice, Tools, "read_file"); !d.Allowed || d.Persona != "alice-readonly" {
		t.Errorf("alice read_file = %+v", d)
	}
	if d := p.Decide(bob, Tools, "delete_repo"); !d.Allowed || d.Persona != "admins" || d.Rule != "*" {
		t.Errorf("bob delete_repo = %+v", d)
	}
	// Reversed order: the broad persona now shadows the narrow one.
	q := mustPolicy(t,
		Persona{Name: "admins", Match: Match{Claims: map[string]string{"role": "admin"}}, Tools: Rules{Allow: []string{"*"}}},
		Persona{Name: "alice-readonly", Match: Match{Identities: []string{"alice"}}, Tools: Rules{Allow: []string{"read_*"}}},
	)
	if d := q.Decide(alice, Tools, "delete_repo"); !d.Allowed || d.Persona != "admins" {
		t.Errorf("reversed: alice delete_repo = %+v", d)
	}
}

func TestNewErrors(t *testing.T) {
	id := Match{Identities: []string{"a"}}
	for _, c := range []struct {
		ps   []Persona
		want []string
	}{
		{[]Persona{{Match: id}}, []string{"personas[0] has no name"}},
		{[]Persona{{Name: "p", Match: id}, {Name: "p", Match: id}}, []string{`persona "p" is defined twice`}},
		{[]Persona{{Name: "p"}}, []string{`persona "p"`, "no caller can have this persona"}},
		{[]Persona{{Name: "p", Match: Match{Identities: []string{""}}}}, []string{`persona "p": match.identities[0] is empty`}},
		{[]Persona{{Name: "p", Match: Match{Identities: []string{"anonymous"}}}}, []string{"match.anonymous"}},
		{[]Persona{{Name: "p", Match: Match{Identities: []string{"jwt:x"}}}}, []string{`kind "jwt"`}},
		{[]Persona{{Name: "p", Match: Match{Identities: []string{"oauth:"}}}}, []string{"empty name"}},
		{[]Persona{{Name: "p", Match: Match{Claims: map[string]string{"": "x"}}}}, []string{"empty claim name"}},
		{[]Persona{{Name: "p", Match: id, Tools: Rules{Deny: []string{"ok", "bad["}}}}, []string{`persona "p": tools.deny[1]`, `"bad["`}},
		{[]Persona{{Name: "p", Match: id, Prompts: Rules{Allow: []string{""}}}}, []string{`persona "p": prompts.allow[0]: empty pattern`}},
		{[]Persona{{Name: "p", Match: id, Resources: Rules{Allow: []string{"{a}"}}}, {Name: "q", Match: id, Tools: Rules{Allow: []string{`\`}}}},
			[]string{`persona "p": resources.allow[0]`, `persona "q": tools.allow[0]`}},
	} {
		p, err := New(c.ps)
		if err == nil {
			t.Errorf("New(%+v) = %v, want an error", c.ps, p)
			continue
		}
		for _, w := range c.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("New(%+v) = %v; want it to say %q", c.ps, err, w)
			}
		}
	}
	if p, err := New(nil); err != nil || p == nil {
		t.Errorf("New(nil) = %v, %v", p, err)
	}
}

// A kind-qualified entry matches only a caller of that kind with that
// exact name: a token subject that reads like a qualified identity is a
// subject, never an API key or another subject.
func TestQualifiedIdentityNeverMatchesASubjectSpellingIt(t *testing.T) {
	p := mustPolicy(t,
		Persona{Name: "alice-key", Match: Match{Identities: []string{"api_key:alice"}}, Tools: Rules{Allow: []string{"*"}}},
		Persona{Name: "carol-token", Match: Match{Identities: []string{"oauth:carol"}}, Tools: Rules{Allow: []string{"*"}}},
		Persona{Name: "urn-subject", Match: Match{Identities: []string{"oauth:urn:example:dave"}}, Tools: Rules{Allow: []string{"*"}}},
		Persona{Name: "erin-either", Match: Match{Identities: []string{"erin"}}, Tools: Rules{Allow: []string{"*"}}},
	)
	oauth := func(name string) Identity { return Identity{Name: name, Kind: KindOAuth} }
	for _, c := range []struct {
		id   Identity
		want string
	}{
		{FromAPIKey("alice"), "alice-key"},
		{oauth("api_key:alice"), ""},
		{oauth("alice"), ""},
		{oauth("carol"), "carol-token"},
		{oauth("oauth:carol"), ""},
		{FromAPIKey("carol"), ""},
		{oauth("urn:example:dave"), "urn-subject"},
		{oauth("oauth:urn:example:dave"), ""},
		{FromAPIKey("erin"), "erin-either"},
		{oauth("erin"), "erin-either"},
		// A bare name has no colon, so no subject with one matches it.
		{oauth("api_key:erin"), ""},
		{oauth("oauth:erin"), ""},
	} {
		got, ok := p.PersonaOf(c.id)
		if got != c.want || ok != (c.want != "") {
			t.Errorf("PersonaOf(%s, name %q) = %q, %v; want %q", c.id, c.id.Name, got, ok, c.want)
		}
		if d := p.Decide(c.id, Tools, "get-env"); d.Allowed != (c.want != "") {
			t.Errorf("Decide(%s, name %q, get-env) = %+v", c.id, c.id.Name, d)
		}
	}
	if got := p.Describe(); !slices.Equal(got, []string{"alice-key: identities api_key:alice", "carol-token: identities oauth:carol",
		"urn-subject: identities oauth:urn:example:dave", "erin-either: identities erin"}) {
		t.Errorf("Describe = %q", got)
	}
}
