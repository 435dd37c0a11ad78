package policy

import "fmt"

// Personas lists the personas' names in config order, for tables that
// show a column per persona (the admin page). A nil Policy has none.
func (p *Policy) Personas() []string {
	if p == nil {
		return nil
	}
	out := make([]string, len(p.personas))
	for i, cp := range p.personas {
		out[i] = cp.name
	}
	return out
}

// DecideAs decides name as the persona called persona would, whoever the
// caller: what a caller of that persona gets, with the rule that decided.
// An unknown persona (or a nil Policy) is a denial by NoRule.
func (p *Policy) DecideAs(persona string, feature Feature, name string) Decision {
	if p != nil {
		for _, cp := range p.personas {
			if cp.name == persona {
				return decide(cp, Identity{}, feature, name)
			}
		}
	}
	return Decision{Feature: feature, Name: name, Rule: NoRule,
		Reason: fmt.Sprintf("denied: there is no persona %q", persona)}
}
