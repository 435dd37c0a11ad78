package storetest

import (
	"database/sql"
	"path/filepath"
	"testing"

	_ "modernc.org/sqlite" // the database the stores' glob SQL is tried in

	"github.com/toolwire/toolwire/gateway/policy"
)

// GlobSQL tries a store's SQL for Filter.Tool globs on every pattern and
// name of GlobCases, in a fresh SQLite database that setup (statements,
// or "") prepares: query selects one boolean from its two parameters, a
// name and the pattern as toSQL writes it. check gets the pattern, the
// name, the glob policy.CompileGlob made of the pattern, and what the
// query selected; a pattern that does not compile, or a query that fails,
// fails t.
func GlobSQL(t *testing.T, setup, query string, toSQL func(pattern string) string, check func(pattern, name string, g *policy.Glob, selected bool)) {
	t.Helper()
	db, err := sql.Open("sqlite", filepath.Join(t.TempDir(), "g.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if setup != "" {
		if _, err := db.Exec(setup); err != nil {
			t.Fatal(err)
		}
	}
	patterns, names := GlobCases()
	for _, p := range patterns {
		g, err := policy.CompileGlob(p)
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range names {
			var selected bool
			if err := db.QueryRow(query, n, toSQL(p)).Scan(&selected); err != nil {
				t.Fatal(err)
			}
			check(p, n, g, selected)
		}
	}
}
