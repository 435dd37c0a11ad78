package policy

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/toolwire/toolwire/internal/testwait"
)

func TestDecide(t *testing.T) {
	p := mustPolicy(t,
		Persona{
			Name:  "dev",
			Match: Match{Identities: []string{"dev-key"}},
			Tools: Rules{
				Allow: []string{"github.*", "read_file"},
				Deny:  []string{"github.delete_*", "*admin*"},
			},
			Prompts:   Rules{Allow: []string{"summarize"}},
			Resources: Rules{Allow: []string{"file:///docs/*"}, Deny: []string{"file:///docs/secret/*"}},
		},
		Persona{Name: "nothing", Match: Match{Anonymous: true}},
	)
	dev := FromAPIKey("dev-key")
	for _, c := range []struct {
		id      Identity
		feature Feature
		name    string
		allowed bool
		persona string
		rule    string
		reason  string
	}{
		{dev, Tools, "github.create_issue", true, "dev", "github.*", `allowed by persona "dev": tools.allow "github.*"`},
		// Deny first: allowed by github.* but denied by github.delete_*.
		{dev, Tools, "github.delete_repo", false, "dev", "github.delete_*", `denied by persona "dev": tools.deny "github.delete_*"`},
		// The first matching deny glob is the one reported.
		{dev, Tools, "github.delete_admin", false, "dev", "github.delete_*", ""},
		{dev, Tools, "read_file", true, "dev", "read_file", ""},
		{dev, Tools, "read_file_admin", false, "dev", "*admin*", ""},
		{dev, Tools, "write_file", false, "dev", NoRule, `denied: no tools rule of persona "dev" matches "write_file"`},
		// Rules are per feature: a tool glob grants no prompt.
		{dev, Prompts, "read_file", false, "dev", NoRule, ""},
		{dev, Prompts, "summarize", true, "dev", "summarize", ""},
		{dev, Resources, "file:///docs/a/b.md", true, "dev", "file:///docs/*", ""},
		{dev, Resources, "file:///docs/secret/k", false, "dev", "file:///docs/secret/*", ""},
		{dev, Feature("sampling"), "x", false, "dev", NoRule, `not a feature`},
		// A persona without rules grants nothing.
		{Anonymous(), Tools, "github.create_issue", false, "nothing", NoRule, ""},
		{FromAPIKey("stranger"), Tools, "read_file", false, "", NoRule, "denied: api_key:stranger matches no persona"},
	} {
		d := p.Decide(c.id, c.feature, c.name)
		if d.Allowed != c.allowed || d.Persona != c.persona || d.Rule != c.rule || d.Feature != c.feature || d.Name != c.name {
			t.Errorf("Decide(%s, %s, %q) = %+v; want allowed=%v persona=%q rule=%q", c.id, c.feature, c.name, d, c.allowed, c.persona, c.rule)
		}
		if c.reason != "" && !strings.Contains(d.Reason, c.reason) {
			t.Errorf("Decide(%s, %s, %q).Reason = %q; want %q", c.id, c.feature, c.name, d.Reason, c.reason)
		}
	}
	var nilPolicy *Policy
	if d := nilPolicy.Decide(dev, Tools, "x"); d.Allowed {
		t.Error("a nil policy allowed a call")
	}
}

func TestExplain(t *testing.T) {
	p := mustPolicy(t,
		Persona{Name: "ops", Match: Match{Claims: map[string]string{"role": "ops"}}, Tools: Rules{Allow: []string{"k8s.*"}, Deny: []string{"k8s.delete_*"}}},
		Persona{Name: "ci", Match: Match{Identities: []string{"api_key:ci"}, Anonymous: true}, Tools: Rules{Allow: []string{"build"}}},
	)
	ops := Identity{Name: "olga", Kind: KindOAuth, Claims: map[string]any{"role": "ops"}}
	names := []string{"k8s.get_pods", "k8s.delete_pod", "build"}
	var lines []string
	for _, d := range p.Explain(ops, names) {
		verdict := "denied"
		if d.Allowed {
			verdict = "allowed"
		}
		lines = append(lines, fmt.Sprintf("%s %s persona=%s rule=%s", d.Name, verdict, d.Persona, d.Rule))
	}
	want := []string{
		"k8s.get_pods allowed persona=ops rule=k8s.*",
		"k8s.delete_pod denied persona=ops rule=k8s.delete_*",
		"build denied persona=ops rule=no rule matched",
	}
	if strings.Join(lines, "\n") != strings.Join(want, "\n") {
		t.Errorf("Explain:\n%s\nwant:\n%s", strings.Join(lines, "\n"), strings.Join(want, "\n"))
	}
	if got := p.Explain(FromAPIKey("nobody"), names); len(got) != 3 || got[0].Allowed || got[0].Persona != "" || !strings.Contains(got[0].Reason, "matches no persona") {
		t.Errorf("Explain for an unknown caller = %+v", got)
	}
	if got := p.Describe(); strings.Join(got, "\n") != "ops: claims role=ops\nci: identities api_key:ci; or anonymous" {
		t.Errorf("Describe = %q", got)
	}
}

func TestDecideConcurrent(t *testing.T) {
	p := mustPolicy(t, Persona{Name: "p", Match: Match{Identities: []string{"k"}}, Tools: Rules{Allow: []string{"a*"}, Deny: []string{"ab*"}}})
	id := FromAPIKey("k")
	testwait.Concurrently(t, 8, 1000, func(int, int) error {
		if p.Decide(id, Tools, "ac").Allowed != true || p.Decide(id, Tools, "abc").Allowed != false {
			return errors.New("inconsistent decision")
		}
		return nil
	})
}
