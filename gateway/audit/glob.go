package audit

import (
	"strings"

	"github.com/toolwire/toolwire/gateway/policy"
)

// Filter.Tool globs are the gateway's one glob syntax (policy.CompileGlob):
// * any run of characters, ? one character, everything else itself, and
// [ ] { } \ reserved. The SQLite store hands them to GLOB, which reads
// such a pattern the same way; the PostgreSQL store narrows with LIKE
// (globLike) and matches with the compiled glob, as it does the journal's
// records.

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

// globLike is a LIKE pattern (escape character \) that matches every name
// the glob pattern matches, and maybe more: * and ? are % (the PostgreSQL
// store compares bytes, where one character may be several), and LIKE's
// own % _ \ are escaped. The caller keeps only what the glob matches.
func globLike(pattern string) string {
	var b strings.Builder
	pct := false // b ends with an unescaped %
	for i := 0; i < len(pattern); i++ {
		switch c := pattern[i]; c {
		case '*', '?':
			if !pct {
				b.WriteByte('%')
				pct = true
			}
			continue
		case '%', '_', '\\':
			b.WriteByte('\\')
		}
		b.WriteByte(pattern[i])
		pct = false
	}
	return b.String()
}
