package flow

import (
	"fmt"
	"regexp"
	"sort"
	"strings"

	"github.com/goccy/go-yaml/ast"

	"github.com/toolwire/toolwire/internal/suggest"
)

// meant is the key of known a misspelt key stands for, "" when none is a
// typo away: the parser then takes the mistake as that key, so that a
// typo is one message, not also "needs <key>:".
func meant(key string, known ...string) string {
	best, _ := suggest.Nearest(key, known)
	return best
}

// kindless reports a step without a kind key with one message per
// mistake: a key a typo away from a kind is that kind misspelt ("did you
// mean"), any other unknown key is reported once, and "no kind key" only
// when nothing else explains it. The step keeps its name, with no kind,
// so that references to it do not add "unknown step" to the same mistake;
// the file fails its check and never runs.
func (p *parser) kindless(s *Step, entries []entry) *Step {
	known := append(append([]string{}, kindKeys...), commonKeys...)
	reported := false
	for _, e := range entries {
		if isCommonOrAux(e.key) {
			continue
		}
		reported = true
		if best, ok := suggest.Nearest(e.key, kindKeys); ok {
			p.Errorf(e.k, "%s: unknown step kind %q (did you mean %q?)", s.Path, e.key, best)
			continue
		}
		p.unknown(e, "a step (it has no kind key: want one of "+strings.Join(kindKeys, ", ")+")", known...)
	}
	if !reported {
		p.errAt(s.Pos, "%s: no kind key (want one of %s)", s.Path, strings.Join(kindKeys, ", "))
	}
	for _, e := range entries {
		if e.key != "name" {
			continue
		}
		if name, ok := e.v.(*ast.StringNode); ok && identRE.MatchString(name.Value) {
			s.Name = name.Value
		}
	}
	return s
}

// unknownName matches the messages for a step, input or env name that is
// not declared.
var unknownName = regexp.MustCompile(`^(unknown step|unknown input|env) "([^"]*)"`)

// didYouMean adds the declared name a typo away to a message about an
// undeclared one.
func (c *checker) didYouMean(msg string) string {
	m := unknownName.FindStringSubmatch(msg)
	if m == nil {
		return msg
	}
	var names []string
	switch m[1] {
	case "unknown step":
		for n := range c.named {
			names = append(names, n)
		}
	case "unknown input":
		for _, in := range c.fl.Inputs {
			names = append(names, in.Name)
		}
	case "env":
		names = append(names, c.fl.Env...)
	}
	sort.Strings(names)
	if best := meant(m[2], names...); best != "" {
		return msg + fmt.Sprintf(" (did you mean %q?)", best)
	}
	return msg
}
