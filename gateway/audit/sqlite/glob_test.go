package sqlite

import (
	"context"
	"database/sql"
	"path/filepath"
	"testing"

	"github.com/toolwire/toolwire/gateway/audit/storetest"
	"github.com/toolwire/toolwire/gateway/policy"
)

// The SQLite store's GLOB reads every valid glob as the compiled glob
// does: the records it selects are the ones the journal's matching keeps.
func TestGlobAgreesWithSQLite(t *testing.T) {
	db, err := sql.Open("sqlite", filepath.Join(t.TempDir(), "g.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	patterns, names := storetest.GlobCases()
	for _, p := range patterns {
		g, err := policy.CompileGlob(p)
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range names {
			var want bool
			if err := db.QueryRowContext(context.Background(), `SELECT ? GLOB ?`, n, p).Scan(&want); err != nil {
				t.Fatal(err)
			}
			if got := g.Match(n); got != want {
				t.Errorf("glob %q on %q: %v, SQLite GLOB says %v", p, n, got, want)
			}
		}
	}
}
