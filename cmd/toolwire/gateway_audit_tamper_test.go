package main

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"

	"github.com/toolwire/toolwire/gateway/audit"
	"github.com/toolwire/toolwire/gateway/audit/sqlite"
	"github.com/toolwire/toolwire/internal/testenv"
	"github.com/toolwire/toolwire/internal/testwait"
	"github.com/toolwire/toolwire/mcp"
)

// auditGateway writes a config of a gateway with the default audit (in
// dir/state) and one upstream, with extra lines under audit:.
func auditGateway(t *testing.T, dir, auditYAML string) string {
	t.Helper()
	return writeConfig(t, dir, fmt.Sprintf(`
data_dir: state
audit:
  store: sqlite
%s
%s`, auditYAML, stdioUpstreams(testenv.Toolwire(t), "local")))
}

// echoCalls makes n calls of local__echo through the gateway at url,
// messages prefix-0, prefix-1...
func echoCalls(t *testing.T, url, prefix string, n int) {
	t.Helper()
	c := connectAs(t, url, "", mcp.EraModern)
	defer c.Close()
	for i := range n {
		ctx, cancel := context.WithTimeout(t.Context(), durableDeadline)
		res, err := c.CallTool(ctx, "local__echo", map[string]any{"message": fmt.Sprintf("%s-%d", prefix, i)})
		cancel()
		if err != nil || res.IsError {
			t.Fatalf("call %s-%d: %+v %v", prefix, i, res, err)
		}
	}
}

// signalGateway stops g with SIGTERM (a clean shutdown) or SIGKILL, and
// waits until it has exited and its log is read.
func signalGateway(t *testing.T, g *gatewayProc, sig syscall.Signal) {
	t.Helper()
	if err := g.cmd.Process.Signal(sig); err != nil {
		t.Fatal(err)
	}
	<-g.done
	_ = g.cmd.Wait()
}

// loggedHead returns the head the gateway logged last at the point named
// (start, interval, shutdown), as SEQ:HASH.
func loggedHead(t *testing.T, g *gatewayProc, at string) string {
	t.Helper()
	m := regexp.MustCompile(`msg="audit chain head" at=`+at+` head=(\d+:[0-9a-f]{64})`).FindAllStringSubmatch(g.log.String(), -1)
	if len(m) == 0 {
		t.Fatalf("no audit chain head logged at %s:\n%s", at, g.log.String())
	}
	return m[len(m)-1][1]
}

// journalEntries returns where each entry of the journal b starts (an
// entry: a 4-byte length, the record's encoding, its 32-byte hash).
func journalEntries(b []byte) []int {
	var starts []int
	for off := 0; off+4 <= len(b); {
		starts = append(starts, off)
		off += 4 + int(binary.BigEndian.Uint32(b[off:])) + sha256.Size
	}
	return starts
}

// TestGatewayAuditJournalDamage: acknowledged calls held in the journal
// (an SQLite write lock keeps the background writer out), the gateway
// SIGKILLed, one byte flipped in one of their entries: every other
// acknowledged call is in the trail, `toolwire audit verify` exits 1
// naming the record lost and where the damaged journal was kept, and the
// restarted gateway's chain goes on after the gap.
func TestGatewayAuditJournalDamage(t *testing.T) {
	dir := t.TempDir()
	cfg := auditGateway(t, dir, "")
	g := startGateway(t, "--config", cfg)
	echoCalls(t, g.url, "stored", 10)

	db, err := sql.Open("sqlite", auditDB(dir)+"?_pragma=busy_timeout(10000)")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	testwait.WaitFor(t, "the first 10 records stored in the database", func() bool {
		var n int
		return db.QueryRow(`SELECT count(*) FROM audit`).Scan(&n) == nil && n == 10
	})
	conn, err := db.Conn(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := conn.ExecContext(t.Context(), `BEGIN IMMEDIATE`); err != nil {
		t.Fatal(err)
	}
	echoCalls(t, g.url, "journaled", 30) // answered: each is in the journal
	signalGateway(t, g, syscall.SIGKILL)
	conn.ExecContext(t.Context(), `ROLLBACK`)
	conn.Close()

	journal := auditDB(dir) + ".journal"
	b, err := os.ReadFile(journal)
	if err != nil {
		t.Fatal(err)
	}
	starts := journalEntries(b)
	if len(starts) != 40 {
		t.Fatalf("the journal holds %d entries, want 40 (10 stored, 30 not)", len(starts))
	}
	b[starts[19]+60] ^= 0x20 // record 20, the call journaled-9
	if err := os.WriteFile(journal, b, 0o600); err != nil {
		t.Fatal(err)
	}

	out, stderr, code := runToolwire(t, "audit", "verify", "--config", cfg)
	t.Logf("verify after the damage: exit %d\n%s", code, out)
	kept := regexp.MustCompile(`(?m)^gap: record 20 lost to a damaged journal entry \(kept at (\S+)\)$`).FindStringSubmatch(out)
	if code != 1 || kept == nil || !strings.Contains(out, "40 records, 1 to 40") || !strings.Contains(stderr, "records of the audit trail were lost") {
		t.Fatalf("verify after the damage: exit %d\n%s%s", code, out, stderr)
	}
	if k, err := os.ReadFile(kept[1]); err != nil || len(k) != len(b) || filepath.Dir(kept[1]) != filepath.Dir(journal) {
		t.Errorf("the damaged journal kept at %s: %v", kept[1], err)
	}
	recs := auditJSONL(t, "--config", cfg)
	messages := map[string]bool{}
	for _, r := range recs {
		messages[string(r.Arguments)] = true
	}
	for i := range 30 {
		msg := fmt.Sprintf(`{"message":"journaled-%d"}`, i)
		if messages[msg] == (i == 9) {
			t.Errorf("journaled-%d: in the trail %v", i, messages[msg])
		}
	}
	if r := recs[19]; len(recs) != 40 || r.Seq != 20 || r.Method != audit.MethodGap || r.Outcome != audit.OutcomeLost {
		t.Fatalf("%d records, the 20th %+v", len(recs), r)
	}

	// The chain goes on after the gap, which stays reported.
	g = startGateway(t, "--config", cfg)
	if head := loggedHead(t, g, "start"); !strings.HasPrefix(head, "40:") {
		t.Errorf("head at start %s", head)
	}
	echoCalls(t, g.url, "after", 1)
	signalGateway(t, g, syscall.SIGTERM)
	out, _, code = runToolwire(t, "audit", "verify", "--config", cfg)
	if code != 1 || !strings.Contains(out, "gap: record 20 lost") || !strings.Contains(out, "41 records, 1 to 41") {
		t.Errorf("verify after the restart: exit %d\n%s", code, out)
	}
}

// TestGatewayAuditKeyedChain: a trail written before keys goes on keyed
// (the gateway makes data_dir/audit.key, 0600) and verifies whole; the
// newest records deleted with the stored head moved back verify alone but
// not against the head the gateway logged at shutdown; records edited and
// rehashed without the key are named; without the key verify says it is
// needed.
func TestGatewayAuditKeyedChain(t *testing.T) {
	dir := t.TempDir()
	cfg := auditGateway(t, dir, "  head_log_interval: off")
	if err := os.MkdirAll(filepath.Dir(auditDB(dir)), 0o700); err != nil {
		t.Fatal(err)
	}
	old, err := sqlite.Open(auditDB(dir))
	if err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		if err := old.Append(t.Context(), &audit.Record{Identity: "anonymous", Method: "tools/call", Tool: fmt.Sprint("old-", i), Outcome: audit.OutcomeOK}); err != nil {
			t.Fatal(err)
		}
	}
	old.Close()

	g := startGateway(t, "--config", cfg)
	keyFile := filepath.Join(dir, "state", "audit.key")
	if st, err := os.Stat(keyFile); err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("the key file: %v %v", st, err)
	}
	if head := loggedHead(t, g, "start"); !strings.HasPrefix(head, "3:") {
		t.Errorf("head at start %s", head)
	}
	echoCalls(t, g.url, "first", 3)
	signalGateway(t, g, syscall.SIGTERM)
	early := loggedHead(t, g, "shutdown")
	out, _, code := runToolwire(t, "audit", "verify", "--config", cfg)
	if code != 0 || !strings.HasPrefix(out, "ok: 6 records, 1 to 6, unbroken") || !strings.Contains(out, "keyed: HMAC-SHA-256 from record 4 on") {
		t.Fatalf("verify of the keyed trail: exit %d\n%s", code, out)
	}

	g = startGateway(t, "--config", cfg)
	echoCalls(t, g.url, "second", 2)
	signalGateway(t, g, syscall.SIGTERM)
	later := loggedHead(t, g, "shutdown")
	if !strings.HasPrefix(early, "6:") || !strings.HasPrefix(later, "8:") {
		t.Fatalf("heads logged at shutdown: %s, %s", early, later)
	}

	// The newest two deleted and the head moved back to record 6.
	db, err := sql.Open("sqlite", auditDB(dir)+"?_pragma=busy_timeout(10000)")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	exec := func(q string, args ...any) {
		t.Helper()
		if _, err := db.Exec(q, args...); err != nil {
			t.Fatal(err)
		}
	}
	exec(`DELETE FROM audit WHERE seq > 6`)
	exec(`UPDATE audit_chain SET head_seq = 6, head_hash = (SELECT hash FROM audit WHERE seq = 6)`)
	out, _, code = runToolwire(t, "audit", "verify", "--config", cfg)
	if code != 0 || !strings.HasPrefix(out, "ok: 6 records") {
		t.Fatalf("verify alone after the newest were deleted: exit %d\n%s", code, out)
	}
	out, _, code = runToolwire(t, "audit", "verify", "--config", cfg, "--head", later)
	t.Logf("verify --head %s: exit %d\n%s", later, code, out)
	if code != 1 || !strings.Contains(out, "BROKEN at record 7 (anchored)") {
		t.Fatalf("verify against the later head: exit %d\n%s", code, out)
	}
	out, _, code = runToolwire(t, "audit", "verify", "--config", cfg, "--head", early)
	if code != 0 || !strings.Contains(out, "anchored head "+early+": matches") {
		t.Fatalf("verify against the earlier head: exit %d\n%s", code, out)
	}

	// Record 5 edited, and it and record 6 rehashed as anyone can, keyless.
	recs := auditJSONL(t, "--config", cfg)
	prev := audit.Anchor{Seq: 4, Hash: recs[3].Hash}
	for _, r := range recs[4:6] {
		if r.Seq == 5 {
			r.Identity = "mallory"
		}
		audit.Seal(&r, prev)
		prev = audit.Anchor{Seq: r.Seq, Hash: r.Hash}
		exec(`UPDATE audit SET v = ?, identity = ?, prev_hash = ?, hash = ? WHERE seq = ?`, int(r.Scheme), r.Identity, r.PrevHash[:], r.Hash[:], r.Seq)
	}
	exec(`UPDATE audit_chain SET head_hash = ?`, prev.Hash[:])
	out, _, code = runToolwire(t, "audit", "verify", "--config", cfg)
	t.Logf("verify after records 5 and 6 were rehashed without the key: exit %d\n%s", code, out)
	if code != 1 || !strings.Contains(out, "BROKEN at record 5 (keyless)") {
		t.Fatalf("verify of a forged trail: exit %d\n%s", code, out)
	}

	if err := os.Rename(keyFile, keyFile+".elsewhere"); err != nil {
		t.Fatal(err)
	}
	out, _, code = runToolwire(t, "audit", "verify", "--config", cfg)
	if code != 1 || !strings.Contains(out, "BROKEN at record 4 (key)") || !strings.Contains(out, "--key-file") {
		t.Errorf("verify without the key: exit %d\n%s", code, out)
	}
	out, _, code = runToolwire(t, "audit", "verify", "--data-dir", filepath.Join(dir, "state"), "--key-file", keyFile+".elsewhere")
	if code != 1 || !strings.Contains(out, "BROKEN at record 5 (keyless)") {
		t.Errorf("verify with --key-file: exit %d\n%s", code, out)
	}
}

// TestAuditKeygen: keygen makes a key file once and never replaces it;
// verify refuses a --head that is not SEQ:HASH.
func TestAuditKeygen(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.key")
	out, _, err := runInProcess(t, nil, "audit", "keygen", path)
	if err != nil || !strings.HasPrefix(out, "key ") {
		t.Fatalf("keygen: %v %s", err, out)
	}
	if _, _, err := runInProcess(t, nil, "audit", "keygen", path); err == nil {
		t.Error("keygen replaced a key file")
	}
	if _, err := audit.ReadKeyFile(path); err != nil {
		t.Errorf("the key file keygen made: %v", err)
	}
	if _, _, err := runInProcess(t, nil, "audit", "verify", "--data-dir", t.TempDir(), "--head", "12:abc"); exitStatus(err) != 2 {
		t.Errorf("--head 12:abc: %v (want a usage error)", err)
	}
}
