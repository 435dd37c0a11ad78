package policy

import (
	"errors"
	"fmt"
)

// NoRule is the Rule of a decision no glob made: the caller has no
// persona, or its persona's rules do not mention the name.
const NoRule = "no rule matched"

// Decision is the answer to "may this caller use this name", with what
// decided it, as a denied call's isError result, the audit record and
// `toolwire gateway explain` report it.
type Decision struct {
	Allowed bool
	Feature Feature
	Name    string
	// Persona is the persona that decided, "" if the caller has none.
	Persona string
	// Rule is the glob that decided, or NoRule.
	Rule string
	// Reason is the decision in a sentence.
	Reason string
}

// Policy is a compiled, validated list of personas. It is immutable and
// safe for concurrent use.
//
// A caller that matches several personas gets the first one in config
// order, and only that one: rights never add up across personas, so a
// persona's rules alone say everything a caller of it may do, and
// listing a narrow persona before a broad one carves out exceptions.
type Policy struct {
	personas []*compiledPersona
}

// New validates and compiles personas, in config order. Errors name the
// persona and the rule at fault.
func New(personas []Persona) (*Policy, error) {
	p := &Policy{}
	seen := map[string]bool{}
	var errs []error
	for i, per := range personas {
		if per.Name == "" {
			errs = append(errs, fmt.Errorf("personas[%d] has no name", i))
			continue
		}
		if seen[per.Name] {
			errs = append(errs, fmt.Errorf("persona %q is defined twice", per.Name))
			continue
		}
		seen[per.Name] = true
		cp, err := compilePersona(per)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		p.personas = append(p.personas, cp)
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return p, nil
}

// PersonaOf returns the name of the persona that applies to id, the first
// that matches in config order, or "" and false.
func (p *Policy) PersonaOf(id Identity) (string, bool) {
	if cp := p.persona(id); cp != nil {
		return cp.name, true
	}
	return "", false
}

func (p *Policy) persona(id Identity) *compiledPersona {
	if p == nil {
		return nil
	}
	for _, cp := range p.personas {
		if cp.matches(id) {
			return cp
		}
	}
	return nil
}

// Decide says whether id may use the feature's object called name (list
// it, call it, get it, read it): deny globs first, then allow globs, and
// no match is a denial.
func (p *Policy) Decide(id Identity, feature Feature, name string) Decision {
	return decide(p.persona(id), id, feature, name)
}

func decide(cp *compiledPersona, id Identity, feature Feature, name string) Decision {
	d := Decision{Feature: feature, Name: name, Rule: NoRule}
	if cp == nil {
		d.Reason = fmt.Sprintf("denied: %s matches no persona", id)
		return d
	}
	d.Persona = cp.name
	rules, ok := cp.rules[feature]
	if !ok {
		d.Reason = fmt.Sprintf("denied: %q is not a feature personas grant", feature)
		return d
	}
	for _, r := range rules.deny {
		if r.Match(name) {
			d.Rule = r.String()
			d.Reason = fmt.Sprintf("denied by persona %q: %s.deny %q", cp.name, feature, d.Rule)
			return d
		}
	}
	for _, r := range rules.allow {
		if r.Match(name) {
			d.Allowed = true
			d.Rule = r.String()
			d.Reason = fmt.Sprintf("allowed by persona %q: %s.allow %q", cp.name, feature, d.Rule)
			return d
		}
	}
	d.Reason = fmt.Sprintf("denied: no %s rule of persona %q matches %q", feature, cp.name, name)
	return d
}

// Explain decides every tool in names for id, in the order given, for
// `toolwire gateway explain`. The persona is resolved once, so all the
// decisions come from the same persona.
func (p *Policy) Explain(id Identity, names []string) []Decision {
	cp := p.persona(id)
	out := make([]Decision, len(names))
	for i, n := range names {
		out[i] = decide(cp, id, Tools, n)
	}
	return out
}

// Describe is, per persona in config order, who it applies to: the
// header of explain output.
func (p *Policy) Describe() []string {
	out := make([]string, len(p.personas))
	for i, cp := range p.personas {
		out[i] = fmt.Sprintf("%s: %s", cp.name, cp.describe())
	}
	return out
}
