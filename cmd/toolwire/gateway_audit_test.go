package main

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	_ "modernc.org/sqlite"

	"github.com/toolwire/toolwire/gateway/audit"
	"github.com/toolwire/toolwire/gateway/daemon"
	"github.com/toolwire/toolwire/internal/testenv"
	"github.com/toolwire/toolwire/mcp"
)

// regexpLine reports whether some line of out matches pattern.
func regexpLine(out, pattern string) bool {
	return regexp.MustCompile(`(?m)^` + pattern).MatchString(out)
}

// auditLoad calls local__echo from callers goroutines, each message
// unique, until stop is closed or a call fails; it returns the messages
// whose calls were answered.
func auditLoad(t *testing.T, url string, callers int, stop <-chan struct{}) <-chan []string {
	out := make(chan []string, 1)
	var mu sync.Mutex
	var answered []string
	var wg sync.WaitGroup
	for i := range callers {
		c := connectAs(t, url, "", mcp.EraLegacy)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for n := 0; ; n++ {
				select {
				case <-stop:
					return
				default:
				}
				msg := fmt.Sprintf("call-%d-%d", i, n)
				ctx, cancel := context.WithTimeout(context.Background(), durableDeadline)
				res, err := c.CallTool(ctx, "local__echo", map[string]any{"message": msg})
				cancel()
				if err != nil || res.IsError {
					return // the gateway is gone
				}
				mu.Lock()
				answered = append(answered, msg)
				mu.Unlock()
			}
		}()
	}
	go func() {
		wg.Wait()
		out <- answered
	}()
	return out
}

// testAuditSurvivesKill: calls under load, SIGKILL of the gateway: every
// call a client saw answered is in the audit trail, which verifies; after
// a restart the chain goes on; then one record edited by hand (tamper)
// makes `toolwire audit verify` fail naming it.
func testAuditSurvivesKill(t *testing.T, auditYAML string, tamper func(dir string, seq int64)) {
	bin := testenv.Toolwire(t)
	dir := t.TempDir()
	cfg := writeConfig(t, dir, fmt.Sprintf(`
data_dir: state
%s
%s`, auditYAML, stdioUpstreams(bin, "local")))
	g := startGateway(t, "--config", cfg)
	stop := make(chan struct{})
	done := auditLoad(t, g.url, 8, stop)
	// Load runs until a good number of calls were answered, then the
	// gateway is killed in the middle of it.
	deadline := time.Now().Add(durableDeadline)
	for len(auditJSONL(t, "--config", cfg)) < 200 && time.Now().Before(deadline) {
		time.Sleep(100 * time.Millisecond)
	}
	if err := g.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	<-g.done
	_ = g.cmd.Wait()
	close(stop)
	answered := <-done
	if len(answered) < 100 {
		t.Fatalf("only %d calls answered before the kill", len(answered))
	}

	recs := auditJSONL(t, "--config", cfg)
	audited := map[string]bool{}
	for _, r := range recs {
		var args struct {
			Message string `json:"message"`
		}
		if r.Outcome == audit.OutcomeOK && json.Unmarshal(r.Arguments, &args) == nil {
			audited[args.Message] = true
		}
	}
	missing := 0
	for _, m := range answered {
		if !audited[m] {
			missing++
		}
	}
	t.Logf("%d calls answered before SIGKILL, %d audit records", len(answered), len(recs))
	if missing > 0 {
		t.Fatalf("%d of %d answered calls are missing from the audit trail", missing, len(answered))
	}
	out, _, code := runToolwire(t, "audit", "verify", "--config", cfg)
	if code != 0 || !strings.HasPrefix(out, fmt.Sprintf("ok: %d records", len(recs))) {
		t.Fatalf("verify after SIGKILL: exit %d\n%s", code, out)
	}

	// After a restart the chain goes on from where it was.
	g = startGateway(t, "--config", cfg)
	c := connectAs(t, g.url, "", mcp.EraModern)
	if _, err := c.CallTool(t.Context(), "local__echo", map[string]any{"message": "after the restart"}); err != nil {
		t.Fatal(err)
	}
	c.Close()
	if err := g.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	<-g.done
	_ = g.cmd.Wait()
	out, _, code = runToolwire(t, "audit", "verify", "--config", cfg)
	if code != 0 || !strings.HasPrefix(out, fmt.Sprintf("ok: %d records", len(recs)+1)) {
		t.Fatalf("verify after the restart: exit %d\n%s", code, out)
	}

	// One record edited by hand is found and named.
	victim := recs[len(recs)/2].Seq
	tamper(dir, victim)
	out, _, code = runToolwire(t, "audit", "verify", "--config", cfg)
	if code != 1 || !strings.Contains(out, fmt.Sprintf("BROKEN at record %d", victim)) {
		t.Fatalf("verify after editing record %d: exit %d\n%s", victim, code, out)
	}
}

// With fsync every record is committed and synced to the database before
// its answer leaves.
func TestGatewayAuditSurvivesKillSQLite(t *testing.T) {
	testAuditSurvivesKill(t, "audit: {store: sqlite, fsync: true}", editSQLiteRecord(t, `UPDATE audit SET arguments = ? WHERE seq = ?`, []byte(`{"message":"forged"}`)))
}

// Without fsync (the default) the records go through the journal: the next
// open (here, toolwire audit) stores what the killed gateway journaled.
func TestGatewayAuditSurvivesKillSQLiteNoFsync(t *testing.T) {
	testAuditSurvivesKill(t, "audit: {store: sqlite}", editSQLiteRecord(t, `UPDATE audit SET identity = 'someone else' WHERE seq = ?`))
}

// editSQLiteRecord returns a tamper for testAuditSurvivesKill that runs
// update with args and, last, the record's seq on the SQLite audit trail
// of the config in dir, failing unless it changes that one record.
func editSQLiteRecord(t *testing.T, update string, args ...any) func(dir string, seq int64) {
	return func(dir string, seq int64) {
		db, err := sql.Open("sqlite", auditDB(dir))
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		r, err := db.Exec(update, append(args, seq)...)
		if n, _ := r.RowsAffected(); err != nil || n != 1 {
			t.Fatalf("editing record %d: %v", seq, err)
		}
	}
}

func TestGatewayAuditSurvivesKillPostgres(t *testing.T) {
	pg := testenv.Postgres(t)
	testAuditSurvivesKill(t, fmt.Sprintf("audit: {store: postgres, postgres: %q}", pg.DSN()), func(_ string, seq int64) {
		ctx, cancel := context.WithTimeout(context.Background(), durableDeadline)
		defer cancel()
		conn, err := pgx.Connect(ctx, pg.DSN())
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close(ctx)
		tag, err := conn.Exec(ctx, `UPDATE toolwire_audit_records SET arguments = $1 WHERE seq = $2`, []byte(`{"message":"forged"}`), seq)
		if err != nil || tag.RowsAffected() != 1 {
			t.Fatalf("editing record %d: %v", seq, err)
		}
	})
}

// auditDB is where the SQLite audit trail of a config in dir lives.
func auditDB(dir string) string { return filepath.Join(dir, "state", daemon.AuditFile) }

// TestGatewaySecondOnOneAuditTrailRefuses: a second gateway on the data_dir
// of a running one (no fsync: the first holds the journal) does not start,
// rather than withhold every answer.
func TestGatewaySecondOnOneAuditTrailRefuses(t *testing.T) {
	bin := testenv.Toolwire(t)
	cfg := writeConfig(t, t.TempDir(), "data_dir: state\naudit: {fsync: false}\n"+stdioUpstreams(bin, "local"))
	startGateway(t, "--config", cfg)
	_, stderr, code := runToolwire(t, "gateway", "--config", cfg, "--listen", "127.0.0.1:0", "--admin-listen", "off")
	if code == 0 || !strings.Contains(stderr, "another process is writing this audit trail") {
		t.Fatalf("a second gateway on one audit trail: exit %d\n%s", code, stderr)
	}
	out, _, code := runToolwire(t, "audit", "verify", "--config", cfg)
	if code != 0 || !strings.HasPrefix(out, "ok") {
		t.Errorf("the trail is still readable beside its writer: exit %d\n%s", code, out)
	}
}

// TestGatewayAuditReadersSeeEveryAnsweredCall: while the gateway runs with
// the default audit (no fsync: a record is acknowledged once journaled,
// and stored in the database later), `toolwire audit query`, `tail`,
// `export` and `verify` run right after a call's answer see that call's
// record, every time.
func TestGatewayAuditReadersSeeEveryAnsweredCall(t *testing.T) {
	bin := testenv.Toolwire(t)
	cfg := writeConfig(t, t.TempDir(), "data_dir: state\n"+stdioUpstreams(bin, "local"))
	g := startGateway(t, "--config", cfg)
	c := connectAs(t, g.url, "", mcp.EraModern)
	// last returns the newest record of the JSON Lines a reader printed.
	last := func(what, out string) audit.Record {
		t.Helper()
		var r audit.Record
		lines := strings.Split(strings.TrimSpace(out), "\n")
		if err := json.Unmarshal([]byte(lines[len(lines)-1]), &r); err != nil {
			t.Fatalf("%s printed %q: %v", what, out, err)
		}
		return r
	}
	const calls = 50
	for i := range calls {
		msg := fmt.Sprintf("call-%d", i)
		ctx, cancel := context.WithTimeout(t.Context(), durableDeadline)
		res, err := c.CallTool(ctx, "local__echo", map[string]any{"message": msg})
		cancel()
		if err != nil || res.IsError {
			t.Fatalf("call %d: %+v %v", i, res, err)
		}
		// The answer is in: its record is the newest, record i+1.
		want := fmt.Sprintf(`{"message":%q}`, msg)
		recs := auditJSONL(t, "--config", cfg)
		if n := len(recs); n != i+1 || string(recs[n-1].Arguments) != want {
			t.Fatalf("query right after call %d: %d records, the last %s", i, n, recordArgs(recs))
		}
		var args []string
		switch i % 3 {
		case 0:
			args = []string{"audit", "tail", "--config", cfg, "-n", "1", "--format", "jsonl"}
		case 1:
			args = []string{"audit", "export", "--config", cfg, "--format", "jsonl"}
		case 2:
			out, stderr, code := runToolwire(t, "audit", "verify", "--config", cfg)
			if code != 0 || !strings.HasPrefix(out, fmt.Sprintf("ok: %d records, 1 to %d, unbroken", i+1, i+1)) {
				t.Fatalf("verify right after call %d: exit %d\n%s%s", i, code, out, stderr)
			}
			continue
		}
		out, stderr, code := runToolwire(t, args...)
		if code != 0 {
			t.Fatalf("%s right after call %d: exit %d\n%s", args[1], i, code, stderr)
		}
		if r := last(args[1], out); r.Seq != int64(i+1) || string(r.Arguments) != want {
			t.Fatalf("%s right after call %d: the newest record is %s", args[1], i, recordArgs([]audit.Record{r}))
		}
	}
}

// recordArgs shows the last of recs as its seq and arguments.
func recordArgs(recs []audit.Record) string {
	if len(recs) == 0 {
		return "none"
	}
	r := recs[len(recs)-1]
	return fmt.Sprintf("%d %s", r.Seq, r.Arguments)
}
