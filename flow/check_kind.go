package flow

import (
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
