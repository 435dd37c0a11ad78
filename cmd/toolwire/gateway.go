package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/toolwire/toolwire/gateway"
	"github.com/toolwire/toolwire/gateway/config"
	"github.com/toolwire/toolwire/gateway/daemon"
	"github.com/toolwire/toolwire/internal/units"
	"github.com/toolwire/toolwire/reference"
	"github.com/toolwire/toolwire/server"
)

type gatewayFlags struct {
	config          string
	check           bool
	listen          string
	adminListen     string
	logLevel        string
	logFormat       string
	shutdownTimeout time.Duration
	startTimeout    time.Duration
	watchInterval   time.Duration
	reloadSettle    time.Duration
	debugAddr       string
	keepStartup     bool
}

func newGatewayCmd() *cobra.Command {
	var f gatewayFlags
	cmd := &cobra.Command{
		Use:   "gateway",
		Short: "Serve many MCP servers behind one endpoint",
		Long: `gateway serves the tools, prompts and resources of several MCP servers (upstreams:
child processes over stdio, Streamable HTTP endpoints) on one MCP endpoint, both protocol eras,
each upstream's names prefixed with its name and a separator (files__read_file). Every upstream
keeps one session open that all calls share; an upstream that is down is left out of the lists
until it is back, and a call to it gets an isError result naming it.

Without --config it serves an embedded default: the reference tools in process (upstream
"reference") and "toolwire serve --stdio" of this same binary (upstream "serve"), on
127.0.0.1:8090/mcp, with /healthz, /readyz and /metrics on 127.0.0.1:8091. It records every
call in an audit trail, and keeps its tasks and sessions, in toolwire/gateway under the user's
state directory ($XDG_STATE_HOME, else ~/.local/state; macOS: ~/Library/Application Support;
Windows: %LocalAppData%), and says where at start; toolwire audit query, verify and tail read
that trail without flags.

The admin listener serves /healthz (the process is up), /readyz (every upstream's state; 503
while one is not ready) and /metrics (Prometheus: toolwire_gateway_calls_total by upstream,
method, tool and outcome, call durations, calls in flight, upstream states, restarts and tools,
downstream sessions).

--check validates the config, connects every upstream once, prints the merged tool table and
who may use what (with auth configured, callers without credentials are refused with 401 unless a
persona says anonymous: true), and exits: 0 when every upstream answered, 1 otherwise.

SIGHUP, or a change to the config file (checked every --watch-interval), reloads it: upstreams
added, removed or changed, the others and their calls untouched. The file is applied only once it
has stopped changing (the same content in two reads --reload-settle apart) and only whole: an
invalid or empty file is logged and the running config stays. The log names the upstreams,
personas and API keys added, removed or changed (names only).

OpenTelemetry traces are off unless the standard environment asks for them: OTEL_TRACES_EXPORTER
(otlp or console) or an OTLP endpoint (OTEL_EXPORTER_OTLP_ENDPOINT,
OTEL_EXPORTER_OTLP_TRACES_ENDPOINT); OTEL_SDK_DISABLED=true keeps them off. OTLP goes over HTTP
with JSON bodies (OTEL_EXPORTER_OTLP_PROTOCOL=http/json, the collector's port 4318); grpc and
http/protobuf are refused. A SERVER span per
downstream request, a CLIENT span per upstream request, the trace context passed on in _meta and
to HTTP upstreams in the traceparent header.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runGateway(cmd, &f) },
	}
	fl := cmd.Flags()
	fl.StringVar(&f.config, "config", "", "the gateway's YAML config file (default: the embedded default)")
	fl.BoolVar(&f.check, "check", false, "validate the config, connect the upstreams once, print the merged tool table and exit")
	fl.StringVar(&f.listen, "listen", "", "the MCP endpoint's address, overriding the config's listen")
	fl.StringVar(&f.adminListen, "admin-listen", "", `the admin address (/healthz, /readyz, /metrics), overriding the config's admin_listen; "off" disables it`)
	fl.StringVar(&f.logLevel, "log-level", "info", "log level: debug, info, warn or error")
	fl.StringVar(&f.logFormat, "log-format", "", "log format: text or json (default: the config's log_format, else text)")
	fl.Var(units.Duration(&f.shutdownTimeout, daemon.DefaultShutdownTimeout), "shutdown-timeout", "on SIGINT or SIGTERM, how long calls in flight may take to finish")
	fl.Var(units.Duration(&f.watchInterval, 2*time.Second), "watch-interval", "how often the config file is checked for changes, which reload it like SIGHUP (0: only on SIGHUP)")
	fl.Var(units.Duration(&f.reloadSettle, daemon.DefaultReloadSettle), "reload-settle", "a reload applies the config file only once two reads this far apart agree, so that a file being written is never applied half-written")
	fl.Var(units.Duration(&f.startTimeout, daemon.DefaultStartTimeout), "start-timeout", "how long the first connection to each upstream may take before the gateway serves without it")
	fl.StringVar(&f.debugAddr, "debug-addr", "", "serve Go runtime profiles (/debug/pprof/) on this address, loopback only; without it the heap profile is not sampled (default: off)")
	fl.BoolVar(&f.keepStartup, "keep-startup-pages", false, "keep resident the pages of this binary that only start-up touched (by default, on Linux, they are given back to the kernel once the gateway serves)")
	cmd.AddCommand(newHashKeyCmd(), newExplainCmd())
	return cmd
}

// loadGatewayConfig reads --config, or builds the embedded default; data
// is the file's content as read (nil for the default), what a reload
// compares the file with.
func loadGatewayConfig(ctx context.Context, f *gatewayFlags) (file *config.File, data []byte, err error) {
	if f.config == "" {
		file, err = defaultGatewayConfig(ctx)
		return file, nil, err
	}
	return daemon.LoadConfig(f.config)
}

// defaultGatewayDataDir is the embedded default's data directory:
// gateway under toolwire's state directory (where `toolwire serve` keeps
// its tasks), holding its audit trail, tasks and sessions; the default
// `toolwire audit` reads.
func defaultGatewayDataDir() (string, error) {
	dir, err := defaultDataDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(dir, "gateway"), nil
}

// defaultGatewayConfig is the gateway a fresh machine can run: the
// reference tools in process and this binary's own `serve --stdio`, its
// audit trail, tasks and sessions kept in defaultGatewayDataDir.
func defaultGatewayConfig(ctx context.Context) (*config.File, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("finding this program for the stdio upstream: %w", err)
	}
	dir, err := defaultGatewayDataDir()
	if err != nil {
		return nil, fmt.Errorf("finding the state directory for the audit trail: %w", err)
	}
	ref := server.New(reference.Info())
	if err := reference.Register(ref, reference.WithLifetime(ctx)); err != nil {
		return nil, err
	}
	// Both upstreams are the reference server, whose resources and
	// templates have the same URIs: resources are served under the URI
	// their upstream gives them, so the two would collide. The stdio one
	// serves them; the in-process one keeps its tools and prompts.
	for _, r := range ref.Resources() {
		ref.RemoveResource(r.URI)
	}
	for _, t := range ref.ResourceTemplates() {
		ref.RemoveResourceTemplate(t.URITemplate)
	}
	return &config.File{
		Listen:      config.DefaultListen,
		AdminListen: config.DefaultAdminListen,
		DataDir:     dir,
		Audit: config.Audit{
			Store:           config.DefaultAuditStore,
			Retention:       config.DefaultAuditRetention,
			Redact:          config.DefaultAuditRedact(),
			MaxValueBytes:   gateway.DefaultAuditMaxValue,
			HeadLogInterval: config.DefaultAuditHeadLogInterval,
		},
		Gateway: gateway.Config{
			Upstreams: []gateway.Upstream{
				{Name: "reference", Server: ref},
				{Name: "serve", Command: []string{exe, "serve", "--stdio", "--data-dir", ""}},
			},
			Naming: gateway.Naming{Separator: config.DefaultSeparator},
		},
	}, nil
}

// runGateway is the gateway command: the flags applied to the config,
// then daemon.Run (or, with --check, daemon.Build and the report).
func runGateway(cmd *cobra.Command, f *gatewayFlags) error {
	sampleHeap(f.debugAddr)
	ctx := cmd.Context()
	file, data, err := loadGatewayConfig(ctx, f)
	if err != nil {
		return err
	}
	if f.logFormat == "" {
		f.logFormat = file.LogFormat
	}
	logger, err := newGatewayLogger(f.logLevel, f.logFormat, cmd.ErrOrStderr())
	if err != nil {
		return err
	}
	if f.listen != "" {
		file.Listen = f.listen
	}
	if f.adminListen == "off" {
		file.AdminListen = ""
	} else if f.adminListen != "" {
		file.AdminListen = f.adminListen
	}
	if f.shutdownTimeout <= 0 || f.startTimeout <= 0 || f.reloadSettle <= 0 {
		return usageError{"--shutdown-timeout, --start-timeout and --reload-settle must be positive"}
	}
	if f.config != "" && f.watchInterval < 0 {
		return usageError{"--watch-interval must be 0 (off) or more"}
	}
	opts := []daemon.Option{daemon.WithLogger(logger), daemon.WithStartupPagesReleased(!f.keepStartup),
		daemon.WithLimits(daemon.Limits{ShutdownTimeout: f.shutdownTimeout, StartTimeout: f.startTimeout})}
	tp, err := daemon.TracerProviderFromEnv(ctx, logger)
	if err != nil {
		return usageError{err.Error()}
	}
	if tp != nil {
		opts = append(opts, daemon.WithTracerProvider(tp))
		defer shutdownTracing(tp, logger) // after the gateway's close: its last spans are sent
	}
	if f.check {
		g, err := daemon.Build(ctx, file, opts...)
		if err != nil {
			return err
		}
		defer closeGateway(g, f.shutdownTimeout, logger)
		return printGatewayCheck(cmd.OutOrStdout(), g, file, f.config)
	}
	if f.debugAddr != "" {
		stopDebug, err := serveDebug(ctx, f.debugAddr, logger)
		if err != nil {
			return err
		}
		defer stopDebug()
	}
	if f.config != "" {
		opts = append(opts, daemon.WithReload(daemon.Reload{Path: f.config, Interval: f.watchInterval, Settle: f.reloadSettle, Data: data}))
	}
	return daemon.Run(ctx, file, opts...)
}

// closeGateway closes a gateway built for --check or explain.
func closeGateway(g *gateway.Gateway, timeout time.Duration, logger *slog.Logger) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	if err := g.Close(ctx); err != nil {
		logger.Warn("gateway: closing", "error", err)
	}
}

func newGatewayLogger(level, format string, w io.Writer) (*slog.Logger, error) {
	var l slog.Level
	if err := l.UnmarshalText([]byte(level)); err != nil {
		return nil, usageError{"invalid --log-level " + level + ": want debug, info, warn or error"}
	}
	opts := &slog.HandlerOptions{Level: l}
	switch format {
	case "", "text":
		return slog.New(slog.NewTextHandler(w, opts)), nil
	case "json":
		return slog.New(slog.NewJSONHandler(w, opts)), nil
	}
	return nil, usageError{"invalid --log-format " + format + ": want text or json"}
}

// printGatewayCheck prints the merged tools, each upstream's state and
// transport (for a URL, the one its session runs over: http, or sse after
// falling back to the 2024-11-05 transport) and who may use what; an upstream that did not answer makes the check fail.
func printGatewayCheck(w io.Writer, g *gateway.Gateway, file *config.File, configPath string) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "TOOL\tUPSTREAM\tAS THE UPSTREAM NAMES IT")
	for _, t := range g.Tools() {
		fmt.Fprintf(tw, "%s\t%s\t%s\n", t.Name, t.Upstream, t.Original)
	}
	tw.Flush()
	fmt.Fprintln(w)
	var down []error
	tw = tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "UPSTREAM\tSTATE\tTRANSPORT\tTOOLS\tSESSIONS\tLAST ERROR")
	for _, u := range g.Upstreams() {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s\t%s\n", u.Name, u.State, u.Transport, u.Tools, sessionsOf(file, u.Name), u.LastError)
		if u.State != gateway.StateReady {
			down = append(down, fmt.Errorf("upstream %s is %s: %s", u.Name, u.State, u.LastError))
		}
	}
	tw.Flush()
	printUpstreamOverrides(w, file)
	fmt.Fprintf(w, "\naccess: %s\n", accessSummary(file, g.Policy()))
	fmt.Fprintf(w, "audit: %s\n", auditSummary(file, configPath))
	return errors.Join(down...)
}

// auditSummary says where the gateway of file records its calls, and how
// to read them (configPath "" for the embedded default, which the audit
// commands read without flags).
func auditSummary(file *config.File, configPath string) string {
	read := "toolwire audit query --config " + configPath
	if configPath == "" {
		read = "toolwire audit query"
	}
	switch {
	case file.Audit.Store == "off":
		return "off (audit.store: off): calls are not recorded"
	case file.Audit.Store == "postgres":
		return "every call recorded in PostgreSQL (audit.postgres); read them with " + read
	case file.DataDir == "":
		return "off (no data_dir): calls are not recorded"
	}
	path := filepath.Join(file.DataDir, daemon.AuditFile)
	if abs, err := filepath.Abs(path); err == nil {
		path = abs
	}
	return "every call recorded in " + path + "; read them with " + read
}

// sessionsOf is how the upstream name of file shares its sessions, for
// --check: shared, or per_client with its bounds (defaults filled in).
func sessionsOf(file *config.File, name string) string {
	for _, u := range file.Gateway.Upstreams {
		if u.Name != name || u.Sessions != gateway.SessionsPerClient {
			continue
		}
		maxSessions, idle := u.MaxSessions, u.IdleTimeout
		if maxSessions <= 0 {
			maxSessions = gateway.DefaultMaxSessions
		}
		if idle <= 0 {
			idle = gateway.DefaultIdleTimeout
		}
		return fmt.Sprintf("per_client (max_sessions %d, idle_timeout %v)", maxSessions, idle)
	}
	return string(gateway.SessionsShared)
}

// shutdownTracing sends the spans still buffered and stops the exporter.
func shutdownTracing(tp *sdktrace.TracerProvider, logger *slog.Logger) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := tp.Shutdown(ctx); err != nil {
		logger.Warn("OpenTelemetry: sending the last spans", "error", err)
	}
}
