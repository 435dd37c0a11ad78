package postgres

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/toolwire/toolwire/gateway/audit"
	"github.com/toolwire/toolwire/gateway/audit/storetest"
	"github.com/toolwire/toolwire/internal/testenv"
	"github.com/toolwire/toolwire/internal/testwait"
)

var pgDBs atomic.Int64

// pgDatabase creates a fresh database on srv and returns its DSN.
func pgDatabase(t testing.TB, srv *testenv.PostgresServer) string {
	t.Helper()
	return srv.CreateDatabase(fmt.Sprintf("audit_%d", pgDBs.Add(1)))
}

// pgExec runs sql on dsn behind the store's back, as someone editing the
// database by hand would.
func pgExec(t *testing.T, dsn, sql string, args ...any) int64 {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	tag, err := conn.Exec(ctx, sql, args...)
	if err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	return tag.RowsAffected()
}

func openPG(t testing.TB, dsn string, opts ...audit.Option) *Store {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	s, err := Open(ctx, dsn, opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// TestPostgres runs the Store suite and the PostgreSQL-specific tests on
// one server, each on a database of its own.
func TestPostgres(t *testing.T) {
	srv := testenv.Postgres(t)
	dsns := map[audit.Store]string{}
	var mu sync.Mutex
	kind := storetest.Kind{
		Open: func(t *testing.T, opts ...audit.Option) audit.Store {
			dsn := pgDatabase(t, srv)
			s := openPG(t, dsn, opts...)
			mu.Lock()
			dsns[s] = dsn
			mu.Unlock()
			return s
		},
		Reopen: func(t *testing.T, s audit.Store, opts ...audit.Option) audit.Store {
			mu.Lock()
			dsn := dsns[s]
			mu.Unlock()
			return openPG(t, dsn, opts...)
		},
		Group: func(s audit.Store) *audit.GroupCommit { return s.(*Store).gc },
	}
	t.Run("Store", func(t *testing.T) { storetest.Run(t, kind) })
	t.Run("VerifyNamesEditedRow", func(t *testing.T) { testPGEdited(t, srv) })
	t.Run("VerifyNamesDeletedRows", func(t *testing.T) { testPGDeleted(t, srv) })
	t.Run("TwoStoresOneChain", func(t *testing.T) { testPGTwoStores(t, srv) })
	t.Run("Schema", func(t *testing.T) { testPGSchema(t, srv) })
	t.Run("Keyed", func(t *testing.T) { testPGKeyed(t, srv) })
}

// testPGKeyed: two stores sharing one key (as replicas would) append to
// one keyed chain, which an old keyless trail leads into; the newest
// records deleted with the head moved back verify alone but not against
// the anchored head; a record edited and rehashed without the key is
// named; a store without the key cannot append.
func testPGKeyed(t *testing.T, srv *testenv.PostgresServer) {
	ctx := context.Background()
	dsn := pgDatabase(t, srv)
	old := openPG(t, dsn)
	storetest.AppendN(t, old, 2, nil)
	old.Close()
	k := storetest.Key(t, 9)
	a, b := openPG(t, dsn, audit.WithKey(k)), openPG(t, dsn, audit.WithKey(k))
	storetest.AppendN(t, a, 3, nil)
	storetest.AppendN(t, b, 3, nil)
	if rep := storetest.MustVerify(t, b); rep.Checked != 8 || rep.KeyedFrom != 3 {
		t.Fatalf("keyed from the third record: %+v", rep)
	}
	storetest.AppendN(t, b, 2, nil)
	later, err := a.Head(ctx)
	if err != nil || later.Seq != 10 {
		t.Fatalf("head %+v %v", later, err)
	}
	pgExec(t, dsn, `DELETE FROM toolwire_audit_records WHERE seq > 8`)
	pgExec(t, dsn, `UPDATE toolwire_audit_head SET head_seq = 8, head_hash = (SELECT hash FROM toolwire_audit_records WHERE seq = 8)`)
	storetest.MustVerify(t, a)
	rep, err := a.VerifyAnchored(ctx, later)
	if err != nil || rep.OK || rep.Break.Kind != audit.BreakAnchored || rep.Break.Seq != 9 {
		t.Errorf("against the anchored head %d: %+v %v", later.Seq, rep, err)
	}

	r := storetest.Collect(t, a, audit.Filter{AfterSeq: 4, Limit: 1})[0]
	r.Identity = "mallory"
	r.Hash = r.ComputeHash() // SHA-256: all one can do without the key
	pgExec(t, dsn, `UPDATE toolwire_audit_records SET identity = $1, hash = $2 WHERE seq = 5`, []byte(r.Identity), r.Hash[:])
	storetest.WantBreak(t, a, 5, audit.BreakEdited)

	keyless := openPG(t, dsn)
	if err := keyless.Append(ctx, storetest.Sample(1)); !errors.Is(err, audit.ErrKeyRequired) {
		t.Errorf("append without the key: %v", err)
	}
	storetest.WantBreak(t, keyless, 3, audit.BreakKey)
}

// testPGEdited: editing any column of a record through SQL makes Verify
// name that record.
func testPGEdited(t *testing.T, srv *testenv.PostgresServer) {
	for _, set := range []string{
		`arguments = convert_to('{"table":"salaries"}', 'UTF8')`,
		`identity = convert_to('mallory', 'UTF8')`,
		`outcome = 'denied'`,
		`time_ns = time_ns + 1`,
		`hash = decode(repeat('00', 32), 'hex')`,
	} {
		dsn := pgDatabase(t, srv)
		s := openPG(t, dsn)
		storetest.AppendN(t, s, 10, nil)
		if n := pgExec(t, dsn, `UPDATE toolwire_audit_records SET `+set+` WHERE seq = 6`); n != 1 {
			t.Fatalf("%s: %d rows", set, n)
		}
		storetest.WantBreak(t, s, 6, audit.BreakEdited)
	}
	// A hash of the wrong size is reported, not an error.
	dsn := pgDatabase(t, srv)
	s := openPG(t, dsn)
	storetest.AppendN(t, s, 3, nil)
	pgExec(t, dsn, `UPDATE toolwire_audit_records SET prev_hash = '\x00'::bytea WHERE seq = 3`)
	storetest.WantBreak(t, s, 3, audit.BreakInvalid)
}

// testPGDeleted: deleting a middle record, the newest, or the oldest left
// after a sweep, through SQL, makes Verify name it.
func testPGDeleted(t *testing.T, srv *testenv.PostgresServer) {
	dsn := pgDatabase(t, srv)
	s := openPG(t, dsn)
	storetest.AppendN(t, s, 10, nil)
	pgExec(t, dsn, `DELETE FROM toolwire_audit_records WHERE seq IN (4, 5)`)
	storetest.WantBreak(t, s, 4, audit.BreakMissing)

	dsn = pgDatabase(t, srv)
	s = openPG(t, dsn)
	storetest.AppendN(t, s, 5, nil)
	pgExec(t, dsn, `DELETE FROM toolwire_audit_records WHERE seq = 5`)
	storetest.WantBreak(t, s, 5, audit.BreakMissing)

	dsn = pgDatabase(t, srv)
	s = openPG(t, dsn)
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	storetest.AppendN(t, s, 6, func(i int, r *audit.Record) { r.Time = t0.Add(time.Duration(i) * time.Hour) })
	if n, err := s.Sweep(context.Background(), t0.Add(3*time.Hour)); err != nil || n != 3 {
		t.Fatalf("sweep: %d, %v", n, err)
	}
	pgExec(t, dsn, `DELETE FROM toolwire_audit_records WHERE seq = 4`)
	storetest.WantBreak(t, s, 4, audit.BreakMissing)
}

// testPGTwoStores: two stores (as two gateway processes would) opened at
// once on one new database, appending concurrently, form one valid chain.
func testPGTwoStores(t *testing.T, srv *testenv.PostgresServer) {
	dsn := pgDatabase(t, srv)
	var stores [2]*Store
	var wg sync.WaitGroup
	for i := range stores {
		wg.Go(func() {
			s, err := Open(context.Background(), dsn)
			if err != nil {
				t.Error(err)
				return
			}
			stores[i] = s
		})
	}
	wg.Wait()
	if t.Failed() {
		t.FailNow()
	}
	for _, s := range stores {
		t.Cleanup(func() { s.Close() })
	}
	const workers, each = 10, 20
	var mu sync.Mutex
	hashes := map[int64]audit.Digest{}
	for w := range 2 * workers {
		s := stores[w%2]
		wg.Go(func() {
			for i := range each {
				r := storetest.Sample(w*each + i)
				r.Identity = fmt.Sprintf("store%d", w%2)
				if err := s.Append(context.Background(), r); err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				if _, dup := hashes[r.Seq]; dup {
					t.Errorf("seq %d acknowledged twice", r.Seq)
				}
				hashes[r.Seq] = r.Hash
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	const n = 2 * workers * each
	for _, s := range stores {
		rep := storetest.MustVerify(t, s)
		if rep.Checked != n || rep.Last != n {
			t.Errorf("report %+v", rep)
		}
	}
	stored := storetest.Collect(t, stores[0], audit.Filter{})
	if len(stored) != n {
		t.Fatalf("%d stored, want %d", len(stored), n)
	}
	for _, r := range stored {
		if hashes[r.Seq] != r.Hash {
			t.Fatalf("seq %d is not the record acknowledged", r.Seq)
		}
	}
	for i := range 2 {
		if got := len(storetest.Collect(t, stores[1], audit.Filter{Identity: fmt.Sprintf("store%d", i)})); got != n/2 {
			t.Errorf("store%d appended %d, want %d", i, got, n/2)
		}
	}
}

// testPGSchema: the schema is versioned; reopening is a no-op and a newer
// schema is refused.
func testPGSchema(t *testing.T, srv *testenv.PostgresServer) {
	dsn := pgDatabase(t, srv)
	openPG(t, dsn)
	openPG(t, dsn)
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var v string
	if err := conn.QueryRow(ctx, `SELECT value FROM toolwire_audit_meta WHERE key = 'schema_version'`).Scan(&v); err != nil {
		t.Fatal(err)
	}
	if v != fmt.Sprint(postgresSchemaVersion) {
		t.Errorf("schema version %s, want %d", v, postgresSchemaVersion)
	}
	if _, err := conn.Exec(ctx, `UPDATE toolwire_audit_meta SET value = '99' WHERE key = 'schema_version'`); err != nil {
		t.Fatal(err)
	}
	if s, err := Open(ctx, dsn); err == nil || !strings.Contains(err.Error(), "newer") {
		if s != nil {
			s.Close()
		}
		t.Errorf("newer schema: %v", err)
	}
}

// pgWithIdleConns opens a store on a fresh database of its own server,
// appends n records and leaves some idle connections in its pool, all of
// them to die with the server; it returns the server, the store and the
// server's port.
func pgWithIdleConns(t *testing.T, n int) (*testenv.PostgresServer, *Store, int) {
	t.Helper()
	srv := testenv.Postgres(t)
	s := openPG(t, pgDatabase(t, srv))
	storetest.AppendN(t, s, n, nil)
	var wg sync.WaitGroup
	for range 3 {
		wg.Go(func() { storetest.MustVerify(t, s) })
	}
	wg.Wait()
	return srv, s, srv.Port()
}

// TestPostgresRestart: records appended before a server restart are kept,
// and an Append after it reconnects; the chain verifies.
func TestPostgresRestart(t *testing.T) {
	srv, s, port := pgWithIdleConns(t, 5)
	srv.Restart()
	if srv.Port() != port {
		t.Skipf("the server moved from port %d to %d", port, srv.Port())
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	r := storetest.Sample(5)
	if err := s.Append(ctx, r); err != nil {
		t.Fatalf("append after restart: %v", err)
	}
	if r.Seq != 6 {
		t.Errorf("seq %d after restart", r.Seq)
	}
	if rep := storetest.MustVerify(t, s); rep.Checked != 6 {
		t.Errorf("checked %d", rep.Checked)
	}
	if rs := storetest.Collect(t, s, audit.Filter{}); len(rs) != 6 || rs[5].Hash != r.Hash {
		t.Errorf("query after restart: %d records", len(rs))
	}
}

// TestPostgresKill: with the server killed (every process of it gone),
// Append fails, promptly and leaving r unsealed, as do Verify and Query;
// once the server is back the chain is intact and goes on from the last
// record acknowledged.
func TestPostgresKill(t *testing.T) {
	srv, s, port := pgWithIdleConns(t, 3)
	srv.Kill()
	pgServerGone(t, srv, port)
	ctx, cancel := context.WithTimeout(context.Background(), testwait.Limit)
	defer cancel()
	r := storetest.Sample(3)
	err := s.Append(ctx, r)
	if err == nil {
		t.Fatal("append with the server gone: no error")
	}
	t.Log(err)
	if ctx.Err() != nil {
		t.Errorf("append failed only at its deadline: %v", err)
	}
	if r.Seq != 0 || r.Hash != (audit.Digest{}) {
		t.Errorf("failed append sealed the record as %d", r.Seq)
	}
	if _, err := s.Verify(ctx); err == nil {
		t.Error("verify with the server gone: no error")
	}
	var qerr error
	for _, err := range s.Query(ctx, audit.Filter{}) {
		qerr = err
	}
	if qerr == nil || ctx.Err() != nil {
		t.Errorf("query with the server gone: %v (context: %v)", qerr, ctx.Err())
	}
	srv.Start()
	if srv.Port() != port {
		t.Skipf("the server moved from port %d to %d", port, srv.Port())
	}
	rs := storetest.AppendN(t, s, 1, nil)
	if rs[0].Seq != 4 {
		t.Errorf("seq %d after recovery", rs[0].Seq)
	}
	if rep := storetest.MustVerify(t, s); rep.Checked != 4 {
		t.Errorf("checked %d after recovery", rep.Checked)
	}
}

// pgServerGone waits until no process of srv, which was killed, is left,
// and its port refuses connections. Killing the postmaster does not end
// its backends at once (each leads a process group of its own, and exits
// when it notices the postmaster gone): until then a connection already
// open to one still commits.
func pgServerGone(t *testing.T, srv *testenv.PostgresServer, port int) {
	t.Helper()
	dir, err := filepath.EvalSymlinks(srv.DataDir())
	if err != nil {
		t.Fatal(err)
	}
	var left []string
	defer func() {
		if t.Failed() {
			t.Logf("processes of the killed server left: %v", left)
		}
	}()
	testwait.WaitFor(t, "the killed server's processes to exit", func() bool {
		left = processesIn(dir)
		return len(left) == 0
	})
	if conn, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", port)); err == nil {
		conn.Close()
		t.Skipf("another process took port %d of the killed server", port)
	}
}

// processesIn lists the live processes whose working directory is dir, as
// "pid (name)" (a PostgreSQL server's run in its data directory).
func processesIn(dir string) []string {
	ents, _ := os.ReadDir("/proc")
	var out []string
	for _, e := range ents {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		if cwd, err := os.Readlink(filepath.Join("/proc", e.Name(), "cwd")); err != nil || cwd != dir {
			continue
		}
		comm, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "comm"))
		out = append(out, fmt.Sprintf("%s (%s)", e.Name(), strings.TrimSpace(string(comm))))
	}
	return out
}

// TestPostgresDSNPassword: the DSN's password is in no error, whether the
// DSN does not parse or the server cannot be reached.
func TestPostgresDSNPassword(t *testing.T) {
	const pw = "s3cret-pw"
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for _, dsn := range []string{
		"postgres://auditor:" + pw + "@127.0.0.1:1/audit?sslmode=disable&connect_timeout=5",
		"host=127.0.0.1 port=1 user=auditor password=" + pw + " dbname=audit sslmode=disable connect_timeout=5",
		"host=127.0.0.1 port=1 user=auditor password='" + pw + "' sslmode=disable connect_timeout=5",
		"postgres://auditor:" + pw + "@127.0.0.1:notaport/audit",
		"postgres://auditor:" + pw + "@127.0.0.1:1/audit?sslmode=bogus",
		"host=127.0.0.1 password=" + pw + " sslmode=bogus",
	} {
		s, err := Open(ctx, dsn)
		if err == nil {
			s.Close()
			t.Errorf("%s: opened", dsn)
			continue
		}
		if strings.Contains(err.Error(), pw) {
			t.Errorf("error shows the password: %v", err)
		}
		t.Log(err)
	}
	if got := dsnPassword("postgres://u:p%40ss@h/db"); got != "p@ss" {
		t.Errorf("URL password %q", got)
	}
	if err := scrub("x", "p@ss", fmt.Errorf("dial postgres://u:p%%40ss@h: p@ss")); strings.Contains(err.Error(), "ss") {
		t.Errorf("scrubbed: %v", err)
	}
}
