package main

import (
	"context"
	"encoding/csv"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/toolwire/toolwire/gateway/audit"
	"github.com/toolwire/toolwire/gateway/audit/sqlite"
)

// auditDir makes a data directory whose audit trail holds n records, the
// i-th by identity ids[i%len(ids)], tool "t<i>", outcome denied for every
// third.
func auditDir(t *testing.T, n int, ids ...string) string {
	t.Helper()
	dir := t.TempDir()
	s, err := sqlite.Open(filepath.Join(dir, auditFile))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	start := time.Now().Add(-48 * time.Hour)
	for i := range n {
		r := &audit.Record{Time: start.Add(time.Duration(i) * time.Hour), Identity: ids[i%len(ids)], Method: "tools/call",
			Tool: "t" + string(rune('a'+i)), Outcome: audit.OutcomeOK, Arguments: []byte(`{"i":1}`)}
		if i%3 == 2 {
			r.Outcome, r.Error = audit.OutcomeDenied, "denied by persona \"p\""
		}
		if err := s.Append(context.Background(), r); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestAuditCLI(t *testing.T) {
	dir := auditDir(t, 12, "api_key:alice", "oauth:bob")

	out, _, err := runInProcess(t, nil, "audit", "query", "--data-dir", dir, "--identity", "oauth:bob", "--outcome", "denied")
	if err != nil {
		t.Fatal(err)
	}
	// bob has records 1, 3, 5, 7, 9, 11; denied are 2, 5, 8, 11: bob's denied are 5 and 11 (seq 6 and 12).
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 3 || !strings.HasPrefix(lines[0], "SEQ") || !strings.HasPrefix(lines[1], "6 ") || !strings.HasPrefix(lines[2], "12 ") {
		t.Errorf("query table:\n%s", out)
	}

	out, _, err = runInProcess(t, nil, "audit", "query", "--data-dir", dir, "--since", "38h", "--format", "jsonl")
	if err != nil || strings.Count(out, "\n") != 1 || !strings.Contains(out, `"seq":12`) {
		t.Errorf("--since 38h: %v\n%s", err, out)
	}

	out, _, err = runInProcess(t, nil, "audit", "tail", "--data-dir", dir, "-n", "2")
	if lines := strings.Split(strings.TrimSpace(out), "\n"); err != nil || len(lines) != 3 || !strings.HasPrefix(lines[1], "11 ") || !strings.HasPrefix(lines[2], "12 ") {
		t.Errorf("tail -n 2: %v\n%s", err, out)
	}

	file := filepath.Join(t.TempDir(), "audit.csv")
	if _, _, err = runInProcess(t, nil, "audit", "export", "--data-dir", dir, "--format", "csv", "--tool", "t?", "--outcome", "ok", "-o", file); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(f).ReadAll()
	f.Close()
	if err != nil || len(rows) != 9 || rows[0][0] != audit.CSVColumns()[0] { // the header and 8 of 12: the denied are left out
		t.Errorf("export csv: %v %v", rows, err)
	}
	if st, err := os.Stat(file); err != nil || st.Mode().Perm() != 0o600 {
		t.Errorf("the export file's mode: %v %v", st, err)
	}
	if _, _, err = runInProcess(t, nil, "audit", "export", "--data-dir", dir, "-o", file); err == nil {
		t.Error("export overwrote a file")
	}

	out, _, err = runInProcess(t, nil, "audit", "verify", "--data-dir", dir)
	if err != nil || !strings.HasPrefix(out, "ok: 12 records, 1 to 12") {
		t.Errorf("verify: %v\n%s", err, out)
	}

	for _, bad := range [][]string{
		{"audit", "query", "--data-dir", dir, "--outcome", "fine"},
		{"audit", "query", "--data-dir", dir, "--since", "yesterday"},
		{"audit", "export", "--data-dir", dir, "--format", "xml"},
		{"audit", "tail", "--data-dir", dir, "-f", "--format", "csv"},
		{"audit", "query", "--data-dir", dir, "--postgres", "postgres://x"},
	} {
		if _, _, err := runInProcess(t, nil, bad...); exitStatus(err) != 2 {
			t.Errorf("%v: %v (want a usage error)", bad, err)
		}
	}
	if _, _, err := runInProcess(t, nil, "audit", "verify", "--data-dir", t.TempDir()); err == nil || !strings.Contains(err.Error(), "no audit trail") {
		t.Errorf("verify of an empty directory: %v", err)
	}
}

// TestAuditRetentionSweep: the gateway's sweeper deletes records past the
// retention at start, and the chain still verifies.
func TestAuditRetentionSweep(t *testing.T) {
	dir := auditDir(t, 12, "api_key:alice") // one record an hour, from 48 hours ago
	s, err := sqlite.Open(filepath.Join(dir, auditFile))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	stop := sweepAudit(t.Context(), s, 40*time.Hour, slog.New(slog.DiscardHandler))
	defer stop()
	count := func() (n int) {
		for _, err := range s.Query(t.Context(), audit.Filter{}) {
			if err != nil {
				t.Fatal(err)
			}
			n++
		}
		return n
	}
	deadline := time.Now().Add(durableDeadline)
	for count() != 3 && time.Now().Before(deadline) { // 37, 38 and 39 hours old stay
		time.Sleep(10 * time.Millisecond)
	}
	if n := count(); n != 3 {
		t.Fatalf("%d records left after the sweep, want 3", n)
	}
	rep, err := s.Verify(t.Context())
	if err != nil || !rep.OK || rep.Anchor.Seq != 9 {
		t.Errorf("verify after the sweep: %+v %v", rep, err)
	}
}
