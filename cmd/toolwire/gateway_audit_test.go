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
upstreams:
  local:
    command: [%q, serve, --stdio, --data-dir, ""]
`, auditYAML, bin))
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
	testAuditSurvivesKill(t, "audit: {store: sqlite, fsync: true}", func(dir string, seq int64) {
		db, err := sql.Open("sqlite", auditDB(dir))
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		r, err := db.Exec(`UPDATE audit SET arguments = ? WHERE seq = ?`, []byte(`{"message":"forged"}`), seq)
		if n, _ := r.RowsAffected(); err != nil || n != 1 {
			t.Fatalf("editing record %d: %v", seq, err)
		}
	})
}

// Without fsync (the default) the records go through the journal: the next
// open (here, toolwire audit) stores what the killed gateway journaled.
func TestGatewayAuditSurvivesKillSQLiteNoFsync(t *testing.T) {
	testAuditSurvivesKill(t, "audit: {store: sqlite}", func(dir string, seq int64) {
		db, err := sql.Open("sqlite", auditDB(dir))
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		r, err := db.Exec(`UPDATE audit SET identity = 'someone else' WHERE seq = ?`, seq)
		if n, _ := r.RowsAffected(); err != nil || n != 1 {
			t.Fatalf("editing record %d: %v", seq, err)
		}
	})
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
func auditDB(dir string) string { return filepath.Join(dir, "state", auditFile) }

// TestGatewaySecondOnOneAuditTrailRefuses: a second gateway on the data_dir
// of a running one (no fsync: the first holds the journal) does not start,
// rather than withhold every answer.
func TestGatewaySecondOnOneAuditTrailRefuses(t *testing.T) {
	bin := testenv.Toolwire(t)
	cfg := writeConfig(t, t.TempDir(), fmt.Sprintf(`
data_dir: state
audit: {fsync: false}
upstreams:
  local:
    command: [%q, serve, --stdio, --data-dir, ""]
`, bin))
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
