package daemon

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/toolwire/toolwire/gateway"
	"github.com/toolwire/toolwire/gateway/audit"
	"github.com/toolwire/toolwire/gateway/audit/postgres"
	"github.com/toolwire/toolwire/gateway/audit/sqlite"
	"github.com/toolwire/toolwire/gateway/config"
)

// AuditFile is the SQLite audit trail's name in data_dir.
const AuditFile = "audit.db"

// sweepInterval is how often records past the retention are swept.
const sweepInterval = time.Hour

// OpenAuditStore opens the audit store file configures (audit.store:
// AuditFile in data_dir, created with it, or PostgreSQL), keyed with key
// (nil: keyless); nil when the config turns the audit off or has no
// data_dir for it. It is the store Run records into, for a program that
// reads or verifies the trail (toolwire audit --config).
func OpenAuditStore(ctx context.Context, file *config.File, key *audit.Key) (audit.Store, error) {
	switch file.Audit.Store {
	case "off":
		return nil, nil
	case "postgres":
		return postgres.Open(ctx, file.Audit.Postgres, audit.WithKey(key))
	}
	if file.DataDir == "" {
		return nil, nil // the embedded default keeps no state
	}
	if err := os.MkdirAll(file.DataDir, 0o700); err != nil {
		return nil, fmt.Errorf("data_dir: %w", err)
	}
	return sqlite.Open(filepath.Join(file.DataDir, AuditFile), audit.WithFsync(file.Audit.Fsync), audit.WithKey(key))
}

// auditKey returns the key the gateway seals its audit trail with:
// audit.key_file's, or with store sqlite <data_dir>/audit.key, made at the
// first start. Without one (store postgres without key_file) the trail is
// keyless, and the gateway says so at every start.
func auditKey(file *config.File, logger *slog.Logger) (*audit.Key, error) {
	path := file.Audit.KeyFile
	switch {
	case file.Audit.Store == "off" || path == "" && file.Audit.Store != "postgres" && file.DataDir == "":
		return nil, nil
	case path == "" && file.Audit.Store == "postgres":
		logger.Warn("audit: no audit.key_file: the trail is keyless, so write access to the database is enough to forge it; give every replica the same key file (toolwire audit keygen)")
		return nil, nil
	case path != "":
		k, err := audit.ReadKeyFile(path)
		if errors.Is(err, fs.ErrNotExist) {
			err = fmt.Errorf("%w (make one with: toolwire audit keygen %s)", err, path)
		}
		if err != nil {
			return nil, err
		}
		warnKeyMode(path, logger)
		return k, nil
	}
	path = filepath.Join(file.DataDir, AuditKeyFile)
	if err := os.MkdirAll(file.DataDir, 0o700); err != nil {
		return nil, fmt.Errorf("data_dir: %w", err)
	}
	k, created, err := audit.KeyFileIn(path)
	if err != nil {
		return nil, err
	}
	if created {
		logger.Info("audit: a key for the trail's chain was made: keep a copy apart from the database; verifying the trail needs it", "key_file", path, "key_id", k.ID())
	} else {
		warnKeyMode(path, logger)
	}
	return k, nil
}

// warnKeyMode warns when others than the owner may read the key file.
func warnKeyMode(path string, logger *slog.Logger) {
	if st, err := os.Stat(path); err == nil && st.Mode().Perm()&0o077 != 0 {
		logger.Warn("audit: the key file can be read by others than its owner (want mode 0600)", "key_file", path, "mode", st.Mode().Perm().String())
	}
}

// errAuditBusy is a gateway finding its audit trail written by another
// process: it would have to withhold every answer, so it does not start.
var errAuditBusy = errors.New("another process is writing this audit trail (is another gateway running with this data_dir?)")

// gatewayAudit is the running gateway's audit trail: its store, the async
// queue in front of it when delivery is async, the retention sweeper and
// the head's logger.
type gatewayAudit struct {
	store     audit.Store
	async     *audit.Async
	stopSweep func()
	stopHead  func()
}

// startAudit opens the configured audit trail and returns the gateway
// options that record into it (none when the audit is off).
func startAudit(ctx context.Context, file *config.File, logger *slog.Logger) (*gatewayAudit, []gateway.Option, error) {
	key, err := auditKey(file, logger)
	if err != nil {
		return &gatewayAudit{}, nil, err
	}
	store, err := OpenAuditStore(ctx, file, key)
	if err != nil || store == nil {
		return &gatewayAudit{}, nil, err
	}
	if ro, ok := store.(interface{ ReadOnly() bool }); ok && ro.ReadOnly() {
		store.Close()
		return &gatewayAudit{}, nil, fmt.Errorf("%s: %w", filepath.Join(file.DataDir, AuditFile), errAuditBusy)
	}
	if nk, ok := store.(interface{ NeedsKey() bool }); ok && nk.NeedsKey() {
		store.Close()
		return &gatewayAudit{}, nil, errors.New("the audit trail is keyed, and not with this key (or none was given): audit.key_file must name the trail's key")
	}
	if jg, ok := store.(interface{ JournalGaps() []audit.Gap }); ok {
		for _, g := range jg.JournalGaps() {
			logger.Error("audit: records lost to a damaged journal: a gap record stands for them, and toolwire audit verify reports them",
				"from", g.From, "to", g.To, "kept", g.Kept)
		}
	}
	a := &gatewayAudit{store: store}
	var into gateway.AuditLog = store
	if file.Audit.Async {
		a.async = audit.NewAsync(store, audit.WithLimits(audit.Limits{MaxQueue: file.Audit.QueueSize}),
			audit.WithOnDrop(func(r *audit.Record) {
				logger.Warn("audit record dropped: the async queue is full", "method", r.Method, "tool", r.Tool, "identity", r.Identity)
			}),
			audit.WithOnError(func(r *audit.Record, err error) {
				logger.Error("audit record not written", "method", r.Method, "tool", r.Tool, "identity", r.Identity, "error", err)
			}))
		into = a.async
	}
	if file.Audit.Retention > 0 {
		a.stopSweep = sweepAudit(ctx, store, file.Audit.Retention, logger)
	}
	where := file.Audit.Store
	if where != "postgres" {
		where = filepath.Join(file.DataDir, AuditFile)
	}
	keyID := "none (keyless)"
	if key != nil {
		keyID = key.ID()
	}
	logger.Info("audit trail on", "store", where, "delivery", map[bool]string{false: "sync", true: "async"}[file.Audit.Async],
		"retention", file.Audit.Retention.String(), "key_id", keyID)
	var head *auditHead
	if anchored, ok := store.(audit.Anchored); ok {
		head = &auditHead{store: anchored, logger: logger}
		head.log(ctx, "start")
		a.stopHead = head.every(ctx, file.Audit.HeadLogInterval)
	}
	into = &auditLog{AuditLog: into, async: a.async, head: head}
	return a, []gateway.Option{gateway.WithAudit(into), gateway.WithAuditRedaction(file.Audit.Redact, file.Audit.MaxValueBytes)}, nil
}

// AuditKeyFile is the audit trail's key file in data_dir, made at the
// first start when the config names none (audit.key_file).
const AuditKeyFile = "audit.key"

// auditHead logs the audit chain's head, for a log store to anchor it
// (toolwire audit verify --head), and reports it as metrics.
type auditHead struct {
	store  audit.Anchored
	logger *slog.Logger

	mu     sync.Mutex
	logged audit.Anchor
}

// headTimeout bounds reading the head for a log line or a scrape.
const headTimeout = 2 * time.Second

// log logs the head (at says when: start, interval, shutdown); at interval
// only when it moved since the last line.
func (h *auditHead) log(ctx context.Context, at string) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), headTimeout)
	defer cancel()
	head, err := h.store.Head(ctx)
	if err != nil {
		h.logger.Warn("audit: reading the chain's head", "at", at, "error", err)
		return
	}
	h.mu.Lock()
	moved := head != h.logged
	h.logged = head
	h.mu.Unlock()
	if moved || at != "interval" {
		h.logger.Info("audit chain head", "at", at, "head", head.String())
	}
}

// every logs the head every interval (none when 0) until stopped.
func (h *auditHead) every(ctx context.Context, interval time.Duration) (stop func()) {
	if interval <= 0 {
		return func() {}
	}
	return periodic(ctx, interval, false, func(ctx context.Context) { h.log(ctx, "interval") })
}

// The head's metrics.
var (
	auditHeadSeqDesc = prometheus.NewDesc("toolwire_gateway_audit_head_sequence",
		"The Seq of the audit chain's head (the last record written).", nil, nil)
	auditHeadInfoDesc = prometheus.NewDesc("toolwire_gateway_audit_head_info",
		"The audit chain's head: its Seq and hash (an HMAC-SHA-256 when keyed), for a log store to anchor (toolwire audit verify --head SEQ:HASH). Always 1.",
		[]string{"seq", "hash"}, nil)
)

// Describe implements prometheus.Collector.
func (h *auditHead) Describe(ch chan<- *prometheus.Desc) {
	ch <- auditHeadSeqDesc
	ch <- auditHeadInfoDesc
}

// Collect implements prometheus.Collector: the head as of the scrape
// (none when it cannot be read).
func (h *auditHead) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), headTimeout)
	defer cancel()
	head, err := h.store.Head(ctx)
	if err != nil {
		return // left out of this scrape rather than fail it: the log says why
	}
	ch <- prometheus.MustNewConstMetric(auditHeadSeqDesc, prometheus.GaugeValue, float64(head.Seq))
	ch <- prometheus.MustNewConstMetric(auditHeadInfoDesc, prometheus.GaugeValue, 1, strconv.FormatInt(head.Seq, 10), head.Hash.String())
}

// auditLog is what the gateway writes its records into: the store or the
// async queue, which also reports the drops (Dropped) and the head's
// metrics (a prometheus.Collector) to the gateway's metrics.
type auditLog struct {
	gateway.AuditLog
	async *audit.Async
	head  *auditHead
}

// Dropped is the async queue's drops (0 with sync delivery).
func (l *auditLog) Dropped() uint64 {
	if l.async == nil {
		return 0
	}
	return l.async.Dropped()
}

// Describe implements prometheus.Collector.
func (l *auditLog) Describe(ch chan<- *prometheus.Desc) {
	if l.head != nil {
		l.head.Describe(ch)
	}
}

// Collect implements prometheus.Collector.
func (l *auditLog) Collect(ch chan<- prometheus.Metric) {
	if l.head != nil {
		l.head.Collect(ch)
	}
}

// sweepAudit deletes records older than retention now and every
// sweepInterval, until stopped.
func sweepAudit(ctx context.Context, s audit.Store, retention time.Duration, logger *slog.Logger) (stop func()) {
	return periodic(ctx, sweepInterval, true, func(ctx context.Context) {
		n, err := s.Sweep(ctx, time.Now().Add(-retention))
		switch {
		case err != nil && ctx.Err() == nil:
			logger.Error("audit retention sweep", "error", err)
		case n > 0:
			logger.Info("audit retention: old records swept", "records", n, "older_than", retention.String())
		}
	})
}

// periodic runs f every interval, and once at the start when first is
// set, in a goroutine of its own until stopped; stop returns once f has
// ended.
func periodic(ctx context.Context, interval time.Duration, first bool, f func(context.Context)) (stop func()) {
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(interval)
		defer t.Stop()
		if first {
			f(ctx)
		}
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				f(ctx)
			}
		}
	}()
	return func() {
		cancel()
		<-done
	}
}

// close drains the async queue (up to timeout), logs the chain's head and
// closes the store; run it after the gateway has closed, so that every
// call is recorded.
func (a *gatewayAudit) close(timeout time.Duration, logger *slog.Logger) {
	if a.stopSweep != nil {
		a.stopSweep()
	}
	if a.stopHead != nil {
		a.stopHead()
	}
	if a.async != nil {
		ctx, cancel := context.WithTimeout(context.Background(), timeout)
		defer cancel()
		if err := a.async.Close(ctx); err != nil {
			logger.Error("audit: records still queued at shutdown were lost", "error", err)
		}
	}
	if anchored, ok := a.store.(audit.Anchored); ok {
		(&auditHead{store: anchored, logger: logger}).log(context.Background(), "shutdown")
	}
	if a.store != nil {
		if err := a.store.Close(); err != nil {
			logger.Warn("audit: closing the store", "error", err)
		}
	}
}
