package flow

import (
	"fmt"
	"time"
)

// stepExpect is a step's assertion on how it ran, written as assert: next
// to the step's kind key: assert: {duration: {below: 500ms}}. It is
// checked when the step succeeded; failing it fails the step with
// ERR_ASSERTION, data {operator: duration, expected, actual} (durations
// as text, e.g. "below 500ms" and "612ms").
type stepExpect struct {
	below, above time.Duration // 0: no bound
	pos          Pos
}

// expectKeys are the keys of a step's assert: (next to another kind).
var expectKeys = []string{"duration"}

// durationKeys are the bounds of assert: {duration: ...}.
var durationKeys = []string{"below", "above"}

// stepExpect reads a step's own assert: {duration: {below: D, above: D}}.
func (p *parser) stepExpect(e entry, path string) *stepExpect {
	x := &stepExpect{pos: posOf(e.k)}
	fields, _ := p.mapping(e.v, "assert")
	for _, f := range fields {
		if f.key != "duration" {
			p.Unknown(f.k, f.key, "a step's assert (beside its kind "+path+")", expectKeys...)
			continue
		}
		bounds, _ := p.mapping(f.v, "duration")
		for _, b := range bounds {
			switch b.key {
			case "below":
				x.below, _ = p.duration(b.v, "below")
			case "above":
				x.above, _ = p.duration(b.v, "above")
			default:
				p.unknown(b, "duration", durationKeys...)
			}
		}
		if x.below == 0 && x.above == 0 && len(bounds) > 0 {
			p.Errorf(f.v, "%s: assert duration: a bound of zero asserts nothing", path)
		} else if len(bounds) == 0 {
			p.Errorf(f.v, "%s: assert duration needs below: or above:", path)
		}
		if x.below > 0 && x.above >= x.below {
			p.Errorf(f.v, "%s: assert duration: above %v is not below %v", path, x.above, x.below)
		}
	}
	if len(fields) == 0 {
		p.errAt(x.pos, "%s: a step's assert needs duration:", path)
	}
	return x
}

// check fails a step that took d against the bounds.
func (x *stepExpect) check(s *Step, d time.Duration) *Error {
	var want string
	switch {
	case x.below > 0 && d >= x.below:
		want = "below " + x.below.String()
	case x.above > 0 && d <= x.above:
		want = "above " + x.above.String()
	default:
		return nil
	}
	return &Error{Code: CodeAssertion,
		Message: fmt.Sprintf("step %s took %v, want %s", s.describe(), d.Round(time.Microsecond), want),
		Data:    map[string]any{"operator": "duration", "expected": want, "actual": d.Round(time.Microsecond).String()}}
}
