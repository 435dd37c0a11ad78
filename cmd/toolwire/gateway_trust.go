package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/spf13/cobra"

	"github.com/toolwire/toolwire/auth"
	"github.com/toolwire/toolwire/gateway"
	"github.com/toolwire/toolwire/gateway/admin"
	"github.com/toolwire/toolwire/gateway/audit"
	"github.com/toolwire/toolwire/gateway/audit/postgres"
	"github.com/toolwire/toolwire/gateway/audit/sqlite"
	"github.com/toolwire/toolwire/gateway/config"
	"github.com/toolwire/toolwire/gateway/policy"
	"github.com/toolwire/toolwire/internal/units"
	"github.com/toolwire/toolwire/transport/streamable"
)

// auditFile is the SQLite audit trail's name in data_dir.
const auditFile = "audit.db"

// sweepInterval is how often records past the retention are swept.
const sweepInterval = time.Hour

// openAuditStore opens the audit store file configures, keyed with key
// (nil: keyless); nil when the config turns the audit off.
func openAuditStore(ctx context.Context, file *config.File, key *audit.Key) (audit.Store, error) {
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
	return sqlite.Open(filepath.Join(file.DataDir, auditFile), audit.WithFsync(file.Audit.Fsync), audit.WithKey(key))
}

// gatewayAuditKey returns the key the gateway seals its audit trail with:
// audit.key_file's, or with store sqlite <data_dir>/audit.key, made at the
// first start. Without one (store postgres without key_file) the trail is
// keyless, and the gateway says so at every start.
func gatewayAuditKey(file *config.File, logger *slog.Logger) (*audit.Key, error) {
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
	path = filepath.Join(file.DataDir, auditKeyFile)
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
	key, err := gatewayAuditKey(file, logger)
	if err != nil {
		return &gatewayAudit{}, nil, err
	}
	store, err := openAuditStore(ctx, file, key)
	if err != nil || store == nil {
		return &gatewayAudit{}, nil, err
	}
	if ro, ok := store.(interface{ ReadOnly() bool }); ok && ro.ReadOnly() {
		store.Close()
		return &gatewayAudit{}, nil, fmt.Errorf("%s: %w", filepath.Join(file.DataDir, auditFile), errAuditBusy)
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
		a.async = audit.NewAsync(store, audit.WithQueueSize(file.Audit.QueueSize),
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
		where = filepath.Join(file.DataDir, auditFile)
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

// auditKeyFile is the audit trail's key file in data_dir.
const auditKeyFile = "audit.key"

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
		h.logger.Info("audit chain head", "at", at, "head", anchorText(head))
	}
}

// every logs the head every interval (none when 0) until stopped.
func (h *auditHead) every(ctx context.Context, interval time.Duration) (stop func()) {
	if interval <= 0 {
		return func() {}
	}
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(interval)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				h.log(ctx, "interval")
			}
		}
	}()
	return func() {
		cancel()
		<-done
	}
}

// anchorText writes a head as toolwire audit verify --head reads it.
func anchorText(a audit.Anchor) string { return fmt.Sprintf("%d:%s", a.Seq, a.Hash) }

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
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(sweepInterval)
		defer t.Stop()
		for {
			n, err := s.Sweep(ctx, time.Now().Add(-retention))
			switch {
			case err != nil && ctx.Err() == nil:
				logger.Error("audit retention sweep", "error", err)
			case n > 0:
				logger.Info("audit retention: old records swept", "records", n, "older_than", retention.String())
			}
			select {
			case <-ctx.Done():
				return
			case <-t.C:
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

// endpointAuth returns the MCP endpoint's authentication (API keys and
// OAuth access tokens, as configured) and the Protected Resource Metadata
// routes that tell OAuth clients where to get tokens, and the same
// authentication as a middleware for the OTC listener. Without either
// kind of credential configured every caller is anonymous (and mw is
// nil); with one, a request without a credential gets 401 unless
// anonymous reports true (a persona admits such callers).
func endpointAuth(file *config.File, anonymous func() bool, logger *slog.Logger) (opts []streamable.ServerOption, mw func(http.Handler) http.Handler, err error) {
	keys, err := file.KeySet()
	if err != nil {
		return nil, nil, err
	}
	o := file.Auth.OAuth
	if keys == nil && o == nil {
		return nil, nil, nil
	}
	var tokens auth.TokenVerifier
	var requireOpts []auth.RequireOption
	if o != nil {
		var jopts []auth.JWTOption
		if o.JWKSURL != "" {
			jopts = append(jopts, auth.WithJWKSURL(o.JWKSURL))
		}
		v, err := auth.NewJWTVerifier(o.Issuer, o.Audience, jopts...)
		if err != nil {
			return nil, nil, fmt.Errorf("auth.oauth: %w", err)
		}
		tokens = v
		prm, err := auth.MetadataURL(o.Audience)
		if err != nil {
			return nil, nil, fmt.Errorf("auth.oauth.audience: %w", err)
		}
		requireOpts = append(requireOpts, auth.WithResourceMetadata(prm), auth.WithScopes(o.Scopes...), auth.WithRequireLogger(logger))
		md := auth.MetadataHandler(auth.ResourceMetadata{Resource: o.Audience, AuthorizationServers: []string{o.Issuer},
			ScopesSupported: o.Scopes, ResourceName: "toolwire gateway"})
		opts = append(opts, streamable.WithRoute("GET "+auth.MetadataPath(streamable.DefaultPath), md))
	}
	n := 0
	if keys != nil {
		n = keys.Len()
	}
	logger.Info("callers authenticated", "api_keys", n, "oauth", o != nil)
	mw = policy.Authenticate(keys, tokens, anonymous, requireOpts...)
	return append(opts, streamable.WithHTTPMiddleware(mw)), mw, nil
}

// authConfigured reports whether the file authenticates callers (API keys
// or OAuth): then a request without a credential needs a persona that
// admits anonymous callers.
func authConfigured(file *config.File) bool {
	return len(file.Auth.APIKeys) > 0 || file.Auth.OAuth != nil
}

// accessSummary says in a sentence who may use what under file's auth and
// the personas p, for `gateway --check`.
func accessSummary(file *config.File, p *policy.Policy) string {
	names := strings.Join(p.Personas(), ", ")
	switch {
	case !authConfigured(file) && p == nil:
		return "no auth and no personas: every caller, without credentials, may use everything"
	case !authConfigured(file) && p.AdmitsAnonymous():
		return "no auth: every caller is anonymous, and personas (" + names + ") decide: " + anonymousPersona(p)
	case !authConfigured(file):
		return "no auth: every caller is anonymous, and no persona (" + names + ") says anonymous: true, so callers may use nothing"
	case p == nil:
		return "no personas: every authenticated caller may use everything; callers without credentials are refused (401)"
	case p.AdmitsAnonymous():
		return "personas (" + names + ") decide, the first matching a caller; a caller none matches may use nothing; " + anonymousPersona(p)
	default:
		return "personas (" + names + ") decide, the first matching a caller; a caller none matches may use nothing; callers without credentials are refused (401)"
	}
}

func anonymousPersona(p *policy.Policy) string {
	name, _ := p.PersonaOf(policy.Anonymous())
	return "callers without credentials get persona " + name
}

// adminHandler is the admin page when the config sets its key, else nil.
func adminHandler(file *config.File, g *gateway.Gateway, store audit.Store, logger *slog.Logger) (http.Handler, error) {
	if file.Admin.KeyHash == "" {
		return nil, nil
	}
	return admin.NewHandler(admin.Config{KeyHash: file.Admin.KeyHash, Gateway: g, Policy: g.Policy, Audit: store, Logger: logger})
}

func newHashKeyCmd() *cobra.Command {
	var stdin bool
	cmd := &cobra.Command{
		Use:   "hash-key",
		Short: "Make a new API key and print it with the hash the config holds",
		Long: `hash-key makes a new random API key (256 bits, "twk_" and base64url) and prints it with its
hash. Give the key to the caller and put only the hash in the gateway config:

  auth:
    api_keys:
      ci-bot: "sha256:..."

With --stdin it reads an existing key from standard input instead (one line) and prints its
hash, so that the key never appears in the process list or the shell history.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			w := cmd.OutOrStdout()
			if stdin {
				line, err := bufio.NewReader(io.LimitReader(cmd.InOrStdin(), 4096)).ReadString('\n')
				if err != nil && !errors.Is(err, io.EOF) {
					return err
				}
				key := strings.TrimSpace(line)
				if !policy.IsKeyFormat(key) {
					return usageError{"standard input holds no API key (want one line: twk_ and 43 base64url characters, as hash-key makes)"}
				}
				fmt.Fprintln(w, policy.HashKey(key))
				return nil
			}
			key, err := policy.NewKey()
			if err != nil {
				return err
			}
			fmt.Fprintf(w, "key:  %s\nhash: %s\n", key, policy.HashKey(key))
			fmt.Fprintln(cmd.ErrOrStderr(), "Give the key to its caller (it is not stored anywhere); put the hash in the config under auth.api_keys.")
			return nil
		},
	}
	cmd.Flags().BoolVar(&stdin, "stdin", false, "hash the key read from standard input instead of making one")
	return cmd
}

func newExplainCmd() *cobra.Command {
	var configPath, identity string
	var claims []string
	var startTimeout time.Duration
	cmd := &cobra.Command{
		Use:   "explain",
		Short: "Print, for one caller, which tools and prompts it may use and which rule decided",
		Long: `explain connects the upstreams of a gateway config once (like --check) and prints, for every
tool and prompt, whether the caller may use it, the persona that applies and the rule that decided.

--identity names the caller as the audit trail does: "api_key:NAME", "oauth:SUBJECT" or
"anonymous"; a bare NAME is an API key of the config. --claim KEY=VALUE (repeatable) gives an
OAuth caller's token claims, for personas that match on them.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if configPath == "" || identity == "" {
				return usageError{"explain needs --config and --identity"}
			}
			file, err := config.Load(configPath)
			if err != nil {
				return err
			}
			id, err := parseIdentity(identity, claims, file)
			if err != nil {
				return err
			}
			logger := slog.New(slog.NewTextHandler(cmd.ErrOrStderr(), &slog.HandlerOptions{Level: slog.LevelWarn}))
			g, err := gateway.New(file.Gateway, gateway.WithLogger(logger), gateway.WithStartTimeout(startTimeout))
			if err != nil {
				return err
			}
			defer closeGateway(g, 10*time.Second, logger)
			return printExplain(cmd.OutOrStdout(), g, id, authConfigured(file))
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&configPath, "config", "", "the gateway config file")
	fl.StringVar(&identity, "identity", "", `the caller: "api_key:NAME", "oauth:SUBJECT", "anonymous", or an API key's NAME`)
	fl.StringArrayVar(&claims, "claim", nil, "KEY=VALUE: a token claim of an OAuth caller (repeatable; a claim given twice is a list)")
	fl.Var(units.Duration(&startTimeout, 10*time.Second), "start-timeout", "how long to wait for each upstream's first connection")
	return cmd
}

// parseIdentity reads explain's --identity and --claim.
func parseIdentity(s string, claims []string, file *config.File) (policy.Identity, error) {
	var id policy.Identity
	kind, name, found := strings.Cut(s, ":")
	switch {
	case s == "anonymous":
		id = policy.Anonymous()
	case found && kind == string(policy.KindAPIKey) && name != "":
		id = policy.FromAPIKey(name)
	case found && kind == string(policy.KindOAuth) && name != "":
		id = policy.Identity{Name: name, Kind: policy.KindOAuth, Claims: map[string]any{}}
	case !found && file.Auth.APIKeys[s] != "":
		id = policy.FromAPIKey(s)
	default:
		return id, usageError{fmt.Sprintf("--identity %q: want api_key:NAME, oauth:SUBJECT, anonymous, or the name of an API key in the config", s)}
	}
	if len(claims) > 0 && id.Kind != policy.KindOAuth {
		return id, usageError{"--claim is for an oauth: identity"}
	}
	for _, c := range claims {
		k, v, ok := strings.Cut(c, "=")
		if !ok || k == "" {
			return id, usageError{fmt.Sprintf("--claim %q: want KEY=VALUE", c)}
		}
		switch old := id.Claims[k].(type) {
		case nil:
			id.Claims[k] = v
		case string:
			id.Claims[k] = []any{old, v}
		case []any:
			id.Claims[k] = append(old, v)
		}
	}
	return id, nil
}

// printExplain prints the decision for every tool and prompt served now;
// withAuth says whether the gateway authenticates callers (then one without
// credentials is refused unless a persona admits it).
func printExplain(w io.Writer, g *gateway.Gateway, id policy.Identity, withAuth bool) error {
	p := g.Policy()
	if id.IsAnonymous() && withAuth && !p.AdmitsAnonymous() {
		fmt.Fprintf(w, "caller %s is refused (401): the config authenticates callers, and no persona says anonymous: true\n", id)
		return nil
	}
	if p == nil {
		fmt.Fprintf(w, "no personas are configured: %s may use every tool, prompt and resource\n", id)
		return nil
	}
	persona, ok := p.PersonaOf(id)
	if !ok {
		persona = "(none)"
	}
	fmt.Fprintf(w, "caller %s, persona %s\n\n", id, persona)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "KIND\tNAME\tDECISION\tRULE\tREASON")
	for _, section := range []struct {
		f      policy.Feature
		routes []gateway.Route
	}{{policy.Tools, g.Tools()}, {policy.Prompts, g.Prompts()}} {
		for _, r := range section.routes {
			d := p.Decide(id, section.f, r.Name)
			verdict := "denied"
			if d.Allowed {
				verdict = "allowed"
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", strings.TrimSuffix(string(section.f), "s"), r.Name, verdict, d.Rule, d.Reason)
		}
	}
	return tw.Flush()
}

// restartOnly names the settings that differ between the running config
// and a reloaded one but are applied only at start: listeners, data_dir,
// public_url, auth, audit and admin. (Upstreams, naming, personas, rate
// limits and enrichment are reloaded.)
func restartOnly(running, next *config.File) []string {
	var keys []string
	for _, c := range []struct {
		key  string
		same bool
	}{
		{"listen", running.Listen == next.Listen},
		{"admin_listen", running.AdminListen == next.AdminListen},
		{"otc_listen", running.OTCListen == next.OTCListen},
		{"data_dir", running.DataDir == next.DataDir},
		{"public_url", running.PublicURL == next.PublicURL},
		{"auth", reflect.DeepEqual(running.Auth, next.Auth)},
		{"audit", reflect.DeepEqual(running.Audit, next.Audit)},
		{"admin", running.Admin == next.Admin},
		{"store", reflect.DeepEqual(running.Store, next.Store)},
		{"limits", running.Limits == next.Limits},
	} {
		if !c.same {
			keys = append(keys, c.key)
		}
	}
	return keys
}
