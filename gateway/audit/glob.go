package audit

import (
	"strings"

	"github.com/toolwire/toolwire/gateway/policy"
)

// Filter.Tool globs are the gateway's one glob syntax (policy.CompileGlob):
// * any run of characters, ? one character, everything else itself, and
// [ ] { } \ reserved. The SQLite store hands them to GLOB, which reads
// such a pattern the same way; the PostgreSQL store narrows with LIKE and
// matches exactly with Filter.Matcher, as the SQLite store does the
// journal's records.

// IsGlob reports whether a Filter.Tool pattern is a glob (it holds * or ?)
// rather than a tool name.
func IsGlob(pattern string) bool { return strings.ContainsAny(pattern, "*?") }

// toolGlob compiles f.Tool when it is a glob; nil for a name. A glob with
// a reserved character is refused.
func (f *Filter) toolGlob() (*policy.Glob, error) {
	if !IsGlob(f.Tool) {
		return nil, nil
	}
	return policy.CompileGlob(f.Tool)
}

// Matcher returns the test of f's conditions on a record's fields (Since,
// Until, Identity, Tool, Outcome; not AfterSeq or Limit), as the stores'
// queries apply them: for a store that filters records outside its
// database (journaled ones), or narrows in SQL and matches exactly after.
// A Tool glob with a reserved character is an error.
func (f Filter) Matcher() (func(*Record) bool, error) {
	glob, err := f.toolGlob()
	if err != nil {
		return nil, err
	}
	return func(r *Record) bool { return f.match(r, glob) }, nil
}

// match reports whether r passes f's conditions on its fields.
func (f *Filter) match(r *Record, glob *policy.Glob) bool {
	t := r.Time.UnixNano()
	switch {
	case !f.Since.IsZero() && t < f.Since.UnixNano(),
		!f.Until.IsZero() && t >= f.Until.UnixNano(),
		f.Identity != "" && r.Identity != f.Identity,
		f.Outcome != "" && r.Outcome != f.Outcome:
		return false
	case f.Tool == "":
		return true
	case glob != nil:
		return glob.Match(r.Tool)
	}
	return r.Tool == f.Tool
}
