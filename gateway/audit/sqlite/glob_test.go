package sqlite

import (
	"testing"

	"github.com/toolwire/toolwire/gateway/audit/storetest"
	"github.com/toolwire/toolwire/gateway/policy"
)

// The SQLite store's GLOB reads every valid glob as the compiled glob
// does: the records it selects are the ones the journal's matching keeps.
func TestGlobAgreesWithSQLite(t *testing.T) {
	storetest.GlobSQL(t, "", `SELECT ? GLOB ?`, func(p string) string { return p },
		func(p, n string, g *policy.Glob, selected bool) {
			if got := g.Match(n); got != selected {
				t.Errorf("glob %q on %q: %v, SQLite GLOB says %v", p, n, got, selected)
			}
		})
}
