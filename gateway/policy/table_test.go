package policy

import (
	"slices"
	"strings"
	"testing"
)

func TestPersonasAndDecideAs(t *testing.T) {
	p := mustPolicy(t,
		Persona{Name: "ops", Match: Match{Identities: []string{"ops-key"}},
			Tools: Rules{Allow: []string{"*"}, Deny: []string{"*delete*"}}},
		Persona{Name: "viewer", Match: Match{Anonymous: true},
			Tools: Rules{Allow: []string{"*.read*"}}, Prompts: Rules{Allow: []string{"greet"}}},
	)
	if got, want := p.Personas(), []string{"ops", "viewer"}; !slices.Equal(got, want) {
		t.Fatalf("Personas() = %v, want %v", got, want)
	}
	for _, c := range []struct {
		persona string
		feature Feature
		name    string
		allowed bool
		rule    string
		reason  string
	}{
		{"ops", Tools, "db.delete_row", false, "*delete*", `denied by persona "ops"`},
		{"ops", Tools, "db.read_row", true, "*", `allowed by persona "ops"`},
		{"viewer", Tools, "db.read_row", true, "*.read*", `allowed by persona "viewer"`},
		{"viewer", Tools, "db.write_row", false, NoRule, `no tools rule of persona "viewer"`},
		{"viewer", Prompts, "greet", true, "greet", ""},
		{"ops", Prompts, "greet", false, NoRule, ""},
		{"ghost", Tools, "db.read_row", false, NoRule, `there is no persona "ghost"`},
	} {
		d := p.DecideAs(c.persona, c.feature, c.name)
		if d.Allowed != c.allowed || d.Rule != c.rule || d.Name != c.name || d.Feature != c.feature ||
			!strings.Contains(d.Reason, c.reason) {
			t.Errorf("DecideAs(%q, %s, %q) = %+v, want allowed=%v rule=%q reason ~ %q",
				c.persona, c.feature, c.name, d, c.allowed, c.rule, c.reason)
		}
		if c.persona != "ghost" && d.Persona != c.persona {
			t.Errorf("DecideAs(%q, ...).Persona = %q", c.persona, d.Persona)
		}
	}
	// DecideAs agrees with Decide for a caller of that persona.
	for _, name := range []string{"db.delete_row", "db.read_row", "x"} {
		if a, b := p.DecideAs("ops", Tools, name), p.Decide(FromAPIKey("ops-key"), Tools, name); a != b {
			t.Errorf("DecideAs(ops, %q) = %+v, Decide = %+v", name, a, b)
		}
	}
}

func TestNilPolicyTable(t *testing.T) {
	var p *Policy
	if got := p.Personas(); got != nil {
		t.Errorf("nil Personas() = %v", got)
	}
	if d := p.DecideAs("ops", Tools, "x"); d.Allowed || d.Rule != NoRule {
		t.Errorf("nil DecideAs = %+v", d)
	}
}
