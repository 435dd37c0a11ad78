package sqlitedb

import (
	"database/sql"
	"path/filepath"
	"testing"
)

var testSchema = Schema{VersionTable: "v", Migrations: []string{`CREATE TABLE t (x INTEGER)`}}

// TestSynchronous: the writer runs with the synchronous level asked for,
// FULL unless told otherwise, and an unknown level is refused.
func TestSynchronous(t *testing.T) {
	cases := []struct {
		name string
		opts []Option
		want int
	}{
		{"default", nil, 2},
		{"nil option", []Option{nil}, 2},
		{"full", []Option{WithSynchronous(SyncFull)}, 2},
		{"normal", []Option{WithSynchronous(SyncNormal)}, 1},
		{"last wins", []Option{WithSynchronous(SyncNormal), WithSynchronous(SyncFull)}, 2},
	}
	for _, c := range cases {
		db, err := Open(filepath.Join(t.TempDir(), "x.db"), "test", testSchema, c.opts...)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		var level int
		var mode string
		if err := db.W.QueryRow(`PRAGMA synchronous`).Scan(&level); err != nil {
			t.Fatal(err)
		}
		if err := db.W.QueryRow(`PRAGMA journal_mode`).Scan(&mode); err != nil {
			t.Fatal(err)
		}
		if level != c.want || mode != "wal" {
			t.Errorf("%s: synchronous %d, journal %s; want %d, wal", c.name, level, mode, c.want)
		}
		if _, err := db.W.Exec(`INSERT INTO t VALUES (1)`); err != nil {
			t.Errorf("%s: migrated table: %v", c.name, err)
		}
		if err := db.Close(); err != nil {
			t.Error(err)
		}
	}
	if _, err := Open(filepath.Join(t.TempDir(), "x.db"), "test", testSchema, WithSynchronous(Synchronous(7))); err == nil {
		t.Error("unknown synchronous level accepted")
	}
}

// TestCacheSize: the writer and the readers run with a CacheKiB page
// cache, and a schema's own cache_size pragma overrides it.
func TestCacheSize(t *testing.T) {
	for _, c := range []struct {
		name    string
		pragmas []string
		want    int
	}{
		{"default", nil, -CacheKiB},
		{"schema's own", []string{"cache_size(-4096)"}, -4096},
	} {
		s := testSchema
		s.Pragmas = c.pragmas
		db, err := Open(filepath.Join(t.TempDir(), "x.db"), "test", s)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		for _, conn := range []struct {
			role string
			db   *sql.DB
		}{{"writer", db.W}, {"reader", db.R}} {
			var got int
			if err := conn.db.QueryRow(`PRAGMA cache_size`).Scan(&got); err != nil {
				t.Fatal(err)
			}
			if got != c.want {
				t.Errorf("%s: %s cache_size %d, want %d", c.name, conn.role, got, c.want)
			}
		}
		if err := db.Close(); err != nil {
			t.Error(err)
		}
	}
}
