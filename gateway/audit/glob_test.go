package audit

import (
	"context"
	"database/sql"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolwire/toolwire/gateway/policy"
)

var (
	globPatterns = []string{
		"*", "?", "a*", "*a", "a?c", "a*c", "*b*", "**", "a**b", "?*?", "query_*", "é?", "?é",
		"file:///etc/*", "%", "_", "%*", "_?", "50%_off*", "a.b", "x y",
	}
	globNames = []string{
		"", "a", "b", "c", "x", "ab", "abc", "ac", "aXc", "abbc", "query_table", "query_view", "queryXtable",
		"é", "éa", "aé", "ê", "file:///etc/b/c", "%", "_", "%%", "_x", "50%_off now", "50X_off", "a.b", "aXb",
		"x y", "*", "a*b",
	}
)

// The SQLite store's GLOB reads every valid glob as the compiled glob
// does: the records it selects are the ones the journal's matching keeps.
func TestGlobAgreesWithSQLite(t *testing.T) {
	db, err := sql.Open("sqlite", filepath.Join(t.TempDir(), "g.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, p := range globPatterns {
		g, err := policy.CompileGlob(p)
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range globNames {
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
	for _, p := range globPatterns {
		g, _ := policy.CompileGlob(p)
		like := globLike(p)
		for _, n := range globNames {
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

// A Filter.Tool glob with a reserved character fails the query; the same
// characters in a plain name are just characters.
func TestToolGlobReserved(t *testing.T) {
	for _, tool := range []string{"a[bc]*", "x{y}?", `a\*`} {
		f := Filter{Tool: tool}
		if _, err := f.toolGlob(); err == nil || !strings.Contains(err.Error(), "reserved") {
			t.Errorf("Tool %q: %v, want a refusal naming the reserved character", tool, err)
		}
	}
	for _, tool := range []string{"a[b]", "plain", ""} {
		f := Filter{Tool: tool}
		if g, err := f.toolGlob(); err != nil || g != nil {
			t.Errorf("Tool %q: %v, %v; want a name, not a glob", tool, g, err)
		}
	}
}
