package postgres

import (
	"database/sql"
	"path/filepath"
	"testing"

	_ "modernc.org/sqlite" // its LIKE stands in for PostgreSQL's

	"github.com/toolwire/toolwire/gateway/audit/storetest"
	"github.com/toolwire/toolwire/gateway/policy"
)

// The PostgreSQL store's LIKE pattern, compared case-sensitively as
// PostgreSQL does, selects every name the glob matches (never fewer; the
// store keeps only the glob's matches). SQLite's LIKE stands in for it.
func TestGlobLikeSelectsEveryMatch(t *testing.T) {
	db, err := sql.Open("sqlite", filepath.Join(t.TempDir(), "g.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec(`PRAGMA case_sensitive_like = ON`); err != nil {
		t.Fatal(err)
	}
	patterns, names := storetest.GlobCases()
	for _, p := range patterns {
		g, _ := policy.CompileGlob(p)
		like := globLike(p)
		for _, n := range names {
			var selected bool
			if err := db.QueryRow(`SELECT ? LIKE ? ESCAPE '\'`, n, like).Scan(&selected); err != nil {
				t.Fatal(err)
			}
			if g.Match(n) && !selected {
				t.Errorf("LIKE %q (from %q) misses %q, which the glob matches", like, p, n)
			}
		}
	}
	for in, want := range map[string]string{
		"query_*": `query\_%`, "a?c": "a%c", "**x": "%x", "?*?": "%",
		"50%_off": `50\%\_off`, "file:///etc/*": "file:///etc/%",
	} {
		if got := globLike(in); got != want {
			t.Errorf("globLike(%q) = %q, want %q", in, got, want)
		}
	}
}
