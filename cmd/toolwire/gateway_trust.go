package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/toolwire/toolwire/auth"
	"github.com/toolwire/toolwire/gateway"
	"github.com/toolwire/toolwire/gateway/admin"
	"github.com/toolwire/toolwire/gateway/audit"
	"github.com/toolwire/toolwire/gateway/config"
	"github.com/toolwire/toolwire/gateway/policy"
	"github.com/toolwire/toolwire/transport/streamable"
)

// auditFile is the SQLite audit trail's name in data_dir.
const auditFile = "audit.db"

// sweepInterval is how often records past the retention are swept.
const sweepInterval = time.Hour

// openAuditStore opens the audit store file configures; nil when the
// config turns the audit off.
func openAuditStore(ctx context.Context, file *config.File) (audit.Store, error) {
	switch file.Audit.Store {
	case "off":
		return nil, nil
	case "postgres":
		return audit.OpenPostgres(ctx, file.Audit.Postgres)
	}
	if file.DataDir == "" {
		return nil, nil // the embedded default keeps no state
	}
	if err := os.MkdirAll(file.DataDir, 0o700); err != nil {
		return nil, fmt.Errorf("data_dir: %w", err)
	}
	return audit.OpenSQLite(filepath.Join(file.DataDir, auditFile), audit.WithFsync(file.Audit.Fsync))
}

// errAuditBusy is a gateway finding its audit trail written by another
// process: it would have to withhold every answer, so it does not start.
var errAuditBusy = errors.New("another process is writing this audit trail (is another gateway running with this data_dir?)")

// gatewayAudit is the running gateway's audit trail: its store, the async
// queue in front of it when delivery is async, and the retention sweeper.
type gatewayAudit struct {
	store     audit.Store
	async     *audit.Async
	stopSweep func()
}

// startAudit opens the configured audit trail and returns the gateway
// options that record into it (none when the audit is off).
func startAudit(ctx context.Context, file *config.File, logger *slog.Logger) (*gatewayAudit, []gateway.Option, error) {
	store, err := openAuditStore(ctx, file)
	if err != nil || store == nil {
		return &gatewayAudit{}, nil, err
	}
	if ro, ok := store.(interface{ ReadOnly() bool }); ok && ro.ReadOnly() {
		store.Close()
		return &gatewayAudit{}, nil, fmt.Errorf("%s: %w", filepath.Join(file.DataDir, auditFile), errAuditBusy)
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
	logger.Info("audit trail on", "store", where, "delivery", map[bool]string{false: "sync", true: "async"}[file.Audit.Async],
		"retention", file.Audit.Retention.String())
	return a, []gateway.Option{gateway.WithAudit(into), gateway.WithAuditRedaction(file.Audit.Redact, file.Audit.MaxValueBytes)}, nil
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

// close drains the async queue (up to timeout) and closes the store; run
// it after the gateway has closed, so that every call is recorded.
func (a *gatewayAudit) close(timeout time.Duration, logger *slog.Logger) {
	if a.stopSweep != nil {
		a.stopSweep()
	}
	if a.async != nil {
		ctx, cancel := context.WithTimeout(context.Background(), timeout)
		defer cancel()
		if err := a.async.Close(ctx); err != nil {
			logger.Error("audit: records still queued at shutdown were lost", "error", err)
		}
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
	name, _ := p.PersonaOf(policy.Anonymous)
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
	fl.DurationVar(&startTimeout, "start-timeout", 10*time.Second, "how long to wait for each upstream's first connection")
	return cmd
}

// parseIdentity reads explain's --identity and --claim.
func parseIdentity(s string, claims []string, file *config.File) (policy.Identity, error) {
	var id policy.Identity
	kind, name, found := strings.Cut(s, ":")
	switch {
	case s == "anonymous":
		id = policy.Anonymous
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
	} {
		if !c.same {
			keys = append(keys, c.key)
		}
	}
	return keys
}
