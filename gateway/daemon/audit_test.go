package daemon

import (
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/toolwire/toolwire/gateway/audit"
	"github.com/toolwire/toolwire/gateway/audit/sqlite"
	"github.com/toolwire/toolwire/gateway/audit/storetest"
	"github.com/toolwire/toolwire/gateway/config"
	"github.com/toolwire/toolwire/internal/testenv"
	"github.com/toolwire/toolwire/internal/testwait"
)

// TestGatewayAuditHeadMetrics: the head's collector reports the chain's
// head as a gauge and an info metric whose labels are what verify --head
// takes.
func TestGatewayAuditHeadMetrics(t *testing.T) {
	k, err := audit.NewKeyFile(filepath.Join(t.TempDir(), "k"))
	if err != nil {
		t.Fatal(err)
	}
	s, err := sqlite.Open(filepath.Join(t.TempDir(), AuditFile), audit.WithKey(k), audit.WithFsync(false))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	log := &auditLog{AuditLog: s, head: &auditHead{store: s}}
	reg := prometheus.NewRegistry()
	reg.MustRegister(log)
	var r *audit.Record
	for range 3 {
		r = &audit.Record{Identity: "anonymous", Method: "tools/call", Outcome: audit.OutcomeOK}
		if err := log.Append(t.Context(), r); err != nil {
			t.Fatal(err)
		}
	}
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, mf := range mfs {
		for _, m := range mf.GetMetric() {
			var labels []string
			for _, l := range m.GetLabel() {
				labels = append(labels, l.GetName()+"="+l.GetValue())
			}
			got[mf.GetName()] = fmt.Sprintf("%v %v", labels, m.GetGauge().GetValue())
		}
	}
	want := map[string]string{
		"toolwire_gateway_audit_head_sequence": "[] 3",
		"toolwire_gateway_audit_head_info":     fmt.Sprintf("[hash=%s seq=3] 1", r.Hash),
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("metrics %v, want %v", got, want)
	}
	if log.Dropped() != 0 {
		t.Error("drops without a queue")
	}
}

// TestGatewayAuditKey: where the gateway's key comes from: made once in
// data_dir (store sqlite), read from audit.key_file (which must exist),
// none for store postgres without key_file (a warning), and a warning for
// a key file others may read.
func TestGatewayAuditKey(t *testing.T) {
	var logs testenv.SyncBuffer
	logger := slog.New(slog.NewTextHandler(&logs, nil))
	dir := t.TempDir()
	file := &config.File{DataDir: filepath.Join(dir, "state"), Audit: config.Audit{Store: "sqlite"}}
	k, err := auditKey(file, logger)
	if err != nil || k == nil || !strings.Contains(logs.String(), "a key for the trail's chain was made") {
		t.Fatalf("first start: %v\n%s", err, logs.String())
	}
	again, err := auditKey(file, logger)
	if err != nil || again.ID() != k.ID() {
		t.Fatalf("second start: %v", err)
	}

	file.Audit.KeyFile = filepath.Join(dir, "missing.key")
	if _, err := auditKey(file, logger); err == nil || !strings.Contains(err.Error(), "toolwire audit keygen "+file.Audit.KeyFile) {
		t.Errorf("a key_file that is not there: %v", err)
	}
	if _, err := audit.NewKeyFile(file.Audit.KeyFile); err != nil {
		t.Fatal(err)
	}
	os.Chmod(file.Audit.KeyFile, 0o644)
	if k, err := auditKey(file, logger); err != nil || k == nil || !strings.Contains(logs.String(), "can be read by others") {
		t.Errorf("a key file others may read: %v\n%s", err, logs.String())
	}

	pg := &config.File{Audit: config.Audit{Store: "postgres"}}
	if k, err := auditKey(pg, logger); err != nil || k != nil || !strings.Contains(logs.String(), "the trail is keyless") {
		t.Errorf("postgres without key_file: %v %v", k, err)
	}
	if k, err := auditKey(&config.File{Audit: config.Audit{Store: "off"}}, logger); err != nil || k != nil {
		t.Errorf("store off: %v %v", k, err)
	}
}

// TestAuditHeadLogged: the head is logged at each interval it moved.
func TestAuditHeadLogged(t *testing.T) {
	s, err := sqlite.Open(filepath.Join(t.TempDir(), AuditFile), audit.WithFsync(false))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var logs testenv.SyncBuffer
	h := &auditHead{store: s, logger: slog.New(slog.NewTextHandler(&logs, nil))}
	h.log(t.Context(), "start")
	stop := h.every(t.Context(), 5*time.Millisecond)
	defer stop()
	r := &audit.Record{Identity: "anonymous", Method: "tools/call", Outcome: audit.OutcomeOK}
	if err := s.Append(t.Context(), r); err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf(`msg="audit chain head" at=interval head=1:%s`, r.Hash)
	testwait.WaitFor(t, "the moved head logged", func() bool { return strings.Contains(logs.String(), want) })
	if !strings.Contains(logs.String(), `at=start head=0:`+strings.Repeat("0", 64)) {
		t.Errorf("the head at start:\n%s", logs.String())
	}
	if n := strings.Count(logs.String(), "head=1:"); n != 1 {
		t.Errorf("an unmoved head logged %d times", n)
	}
}

// TestAuditRetentionSweep: the gateway's sweeper deletes records past the
// retention at start, and the chain still verifies.
func TestAuditRetentionSweep(t *testing.T) {
	s, err := sqlite.Open(filepath.Join(t.TempDir(), AuditFile))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	start := time.Now().Add(-48 * time.Hour) // one record an hour, from 48 hours ago
	for i := range 12 {
		r := &audit.Record{Time: start.Add(time.Duration(i) * time.Hour), Identity: "api_key:alice", Method: "tools/call", Outcome: audit.OutcomeOK}
		if err := s.Append(t.Context(), r); err != nil {
			t.Fatal(err)
		}
	}
	stop := sweepAudit(t.Context(), s, 40*time.Hour, slog.New(slog.DiscardHandler))
	defer stop()
	count := func() int { return len(storetest.Collect(t, s, audit.Filter{})) }
	// 37, 38 and 39 hours old stay.
	testwait.WaitFor(t, "the sweep down to 3 records", func() bool { return count() == 3 })
	rep, err := s.Verify(t.Context())
	if err != nil || !rep.OK || rep.Anchor.Seq != 9 {
		t.Errorf("verify after the sweep: %+v %v", rep, err)
	}
}
