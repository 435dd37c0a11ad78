package audit

import (
	"context"
	"database/sql"
	"path/filepath"
	"testing"
)

// TestGlobMatchesSQLite: globMatch agrees with SQLite's own GLOB on patterns
// and names of every kind (sets, ranges, inversion, multibyte characters,
// unterminated sets).
func TestGlobMatchesSQLite(t *testing.T) {
	db, err := sql.Open("sqlite", filepath.Join(t.TempDir(), "g.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	patterns := []string{
		"", "*", "?", "a*", "*a", "a?c", "a*c", "*b*", "**", "a**b", "?*?", "query_*", "query_[v]iew",
		"[abc]*", "[^abc]*", "[a-c]x", "[^a-c]x", "[]]x", "[^]]x", "[a-]x", "[-a]x", "[z-a]x",
		"[", "[abc", "a[", "x[]", "é?", "?é", "[é]", "[à-ê]", "file:///etc/*", "%", "_", "a\\b", "*[*]*",
	}
	names := []string{
		"", "a", "b", "c", "x", "ab", "abc", "ac", "aXc", "abbc", "bx", "ax", "cx", "dx", "]x", "-x", "zx",
		"query_table", "query_view", "é", "éa", "aé", "ê", "ë", "file:///etc/b/c", "%", "_", "a\\b", "*", "a*b",
		"[", "[abc", "a[", "x[]",
	}
	for _, p := range patterns {
		for _, n := range names {
			var want bool
			if err := db.QueryRowContext(context.Background(), `SELECT ? GLOB ?`, n, p).Scan(&want); err != nil {
				t.Fatal(err)
			}
			if got := globMatch(p, n); got != want {
				t.Errorf("globMatch(%q, %q) = %v, SQLite says %v", p, n, got, want)
			}
		}
	}
}

// TestGlobLike: the LIKE pattern escapes LIKE's own wildcards and turns
// every glob construct into %.
func TestGlobLike(t *testing.T) {
	cases := map[string]string{
		"query_*":       `query\_%`,
		"a?c":           "a%c",
		"**x":           "%x",
		"*[ab]?":        "%",
		"50%_off\\":     `50\%\_off\\`,
		"file:///etc/*": "file:///etc/%",
		"x[":            "x%",
		`\%*`:           `\\\%%`,
	}
	for in, want := range cases {
		if got := globLike(in); got != want {
			t.Errorf("globLike(%q) = %q, want %q", in, got, want)
		}
	}
}
