package main

import (
	"context"
	"encoding/csv"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/toolwire/toolwire/gateway/audit"
	"github.com/toolwire/toolwire/gateway/audit/sqlite"
	"github.com/toolwire/toolwire/gateway/daemon"
)

// auditDir makes a data directory whose audit trail holds n records, the
// i-th by identity ids[i%len(ids)], tool "t<i>", outcome denied for every
// third.
func auditDir(t *testing.T, n int, ids ...string) string {
	t.Helper()
	dir := t.TempDir()
	s, err := sqlite.Open(filepath.Join(dir, daemon.AuditFile))
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
