package postgres

import (
	"testing"

	"github.com/toolwire/toolwire/gateway/audit/storetest"
	"github.com/toolwire/toolwire/gateway/policy"
)

// The PostgreSQL store's LIKE pattern, compared case-sensitively as
// PostgreSQL does, selects every name the glob matches (never fewer; the
// store keeps only the glob's matches). SQLite's LIKE stands in for it.
func TestGlobLikeSelectsEveryMatch(t *testing.T) {
	storetest.GlobSQL(t, `PRAGMA case_sensitive_like = ON`, `SELECT ? LIKE ? ESCAPE '\'`, globLike,
		func(p, n string, g *policy.Glob, selected bool) {
			if g.Match(n) && !selected {
				t.Errorf("LIKE %q (from %q) misses %q, which the glob matches", globLike(p), p, n)
			}
		})
	for in, want := range map[string]string{
		"query_*": `query\_%`, "a?c": "a%c", "**x": "%x", "?*?": "%",
		"50%_off": `50\%\_off`, "file:///etc/*": "file:///etc/%",
	} {
		if got := globLike(in); got != want {
			t.Errorf("globLike(%q) = %q, want %q", in, got, want)
		}
	}
}
