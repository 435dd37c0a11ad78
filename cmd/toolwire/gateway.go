package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	"go.opentelemetry.io/contrib/exporters/autoexport"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/toolwire/toolwire/gateway"
	"github.com/toolwire/toolwire/gateway/config"
	"github.com/toolwire/toolwire/gateway/policy"
	"github.com/toolwire/toolwire/internal/httpguard"
	"github.com/toolwire/toolwire/internal/units"
	"github.com/toolwire/toolwire/reference"
	"github.com/toolwire/toolwire/server"
	"github.com/toolwire/toolwire/transport/streamable"
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
}

// defaultReloadSettle is how long the config file must stay the same
// before a reload applies it (--reload-settle).
const defaultReloadSettle = 500 * time.Millisecond

// maxSettleReads bounds the reads of a file that keeps changing: a reload
// gives up after them, and the next change or SIGHUP tries again.
const maxSettleReads = 20

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
127.0.0.1:8090/mcp, with /healthz, /readyz and /metrics on 127.0.0.1:8091.

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
OTEL_EXPORTER_OTLP_TRACES_ENDPOINT); OTEL_SDK_DISABLED=true keeps them off. A SERVER span per
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
	fl.Var(units.Duration(&f.shutdownTimeout, 10*time.Second), "shutdown-timeout", "on SIGINT or SIGTERM, how long calls in flight may take to finish")
	fl.Var(units.Duration(&f.watchInterval, 2*time.Second), "watch-interval", "how often the config file is checked for changes, which reload it like SIGHUP (0: only on SIGHUP)")
	fl.Var(units.Duration(&f.reloadSettle, defaultReloadSettle), "reload-settle", "a reload applies the config file only once two reads this far apart agree, so that a file being written is never applied half-written")
	fl.Var(units.Duration(&f.startTimeout, 10*time.Second), "start-timeout", "how long the first connection to each upstream may take before the gateway serves without it")
	fl.StringVar(&f.debugAddr, "debug-addr", "", "serve Go runtime profiles (/debug/pprof/) on this address, loopback only (default: off)")
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
	if data, err = readConfigFile(f.config); err != nil {
		return nil, nil, err
	}
	if file, err = parseGatewayConfig(f.config, data); err != nil {
		return nil, nil, err
	}
	return file, data, nil
}

// parseGatewayConfig decodes the content of the config file at path,
// relative paths in it relative to the file's directory.
func parseGatewayConfig(path string, data []byte) (*config.File, error) {
	return config.Parse(data, path, config.WithBaseDir(filepath.Dir(path)))
}

// defaultGatewayConfig is the gateway a fresh machine can run: the
// reference tools in process and this binary's own `serve --stdio`.
func defaultGatewayConfig(ctx context.Context) (*config.File, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("finding this program for the stdio upstream: %w", err)
	}
	ref := server.New(reference.Info())
	if err := reference.Register(ref, reference.WithLifetime(ctx)); err != nil {
		return nil, err
	}
	return &config.File{
		Listen:      config.DefaultListen,
		AdminListen: config.DefaultAdminListen,
		Gateway: gateway.Config{
			Upstreams: []gateway.Upstream{
				{Name: "reference", Server: ref},
				{Name: "serve", Command: []string{exe, "serve", "--stdio", "--data-dir", ""}},
			},
			Naming: gateway.Naming{Separator: config.DefaultSeparator},
		},
	}, nil
}

func runGateway(cmd *cobra.Command, f *gatewayFlags) error {
	ctx := cmd.Context()
	file, data, err := loadGatewayConfig(ctx, f)
	if err != nil {
		return err
	}
	loaded := *file // as the file says, before the flags override it
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
	tp, err := gatewayTracerProvider(ctx, logger)
	if err != nil {
		return err
	}
	limitHandler, limitServe, limitGateway := limitOptions(file.Limits)
	gopts := append([]gateway.Option{gateway.WithLogger(logger), gateway.WithStartTimeout(f.startTimeout)}, limitGateway...)
	var shared *sharedStore
	if r := file.Store.Redis; r != nil && !f.check {
		if shared, err = openSharedStore(ctx, r.URL, r.Prefix, logger); err != nil {
			return err
		}
		defer shared.close() // last: the gateway and its tasks use it until they close
		if err := shared.shareLimits(file.RateLimits, &file.Gateway); err != nil {
			return err
		}
	}
	if (file.DataDir != "" || shared != nil) && !f.check {
		// The gateway's own tasks (a task call of an upstream's tool) are
		// kept in data_dir, or in the shared store with the other
		// replicas: a finished one's result survives a restart.
		var tasks *taskStore
		if shared != nil {
			tasks, err = shared.taskStore()
		} else if tasks, err = openTaskStoreIn(file.DataDir, logger); err != nil {
			err = fmt.Errorf("data_dir: %w", err)
		}
		if err != nil {
			return err
		}
		defer tasks.close(nil, 0, logger) // after the gateway's close, which stops the tasks
		gopts = append(gopts, gateway.WithServerOptions(tasks.serverOptions()...))
		if shared == nil { // without Redis, 2025-era sessions are kept in data_dir too
			if shared, err = openDataDirSessions(tasks, logger); err != nil {
				return fmt.Errorf("data_dir: %w", err)
			}
			defer shared.close() // before data_dir is unlocked
		}
	}
	if tp != nil {
		gopts = append(gopts, gateway.WithTracerProvider(tp))
		defer shutdownTracing(tp, logger) // after the gateway's close: its last spans are sent
	}
	var aud *gatewayAudit
	if !f.check {
		var aopts []gateway.Option
		if aud, aopts, err = startAudit(ctx, file, logger); err != nil {
			return fmt.Errorf("audit: %w", err)
		}
		defer aud.close(f.shutdownTimeout, logger) // after the gateway's close: every call is recorded
		gopts = append(gopts, aopts...)
	}
	g, err := gateway.New(file.Gateway, gopts...)
	if err != nil {
		return err
	}
	// Whether callers without credentials are let in is asked of the
	// personas running at the time, so that a reload counts.
	serveOpts, authenticate, err := endpointAuth(file, func() bool { return g.Policy().AdmitsAnonymous() }, logger)
	if err != nil {
		closeGateway(g, f.shutdownTimeout, logger)
		return err
	}
	if f.check {
		defer closeGateway(g, f.shutdownTimeout, logger)
		return printGatewayCheck(cmd.OutOrStdout(), g, file)
	}

	ln, err := net.Listen("tcp", file.Listen)
	if err != nil {
		closeGateway(g, f.shutdownTimeout, logger)
		return err
	}
	if f.debugAddr != "" {
		stopDebug, err := serveDebug(ctx, f.debugAddr, logger)
		if err != nil {
			ln.Close()
			closeGateway(g, f.shutdownTimeout, logger)
			return err
		}
		defer stopDebug()
	}
	if file.AdminListen != "" {
		page, err := adminHandler(file, g, aud.store, logger)
		if err != nil {
			ln.Close()
			closeGateway(g, f.shutdownTimeout, logger)
			return err
		}
		stopAdmin, err := serveAdmin(ctx, file.AdminListen, g, page, logger)
		if err != nil {
			ln.Close()
			closeGateway(g, f.shutdownTimeout, logger)
			return err
		}
		defer stopAdmin()
	}
	if f.config != "" {
		if f.watchInterval < 0 {
			return usageError{"--watch-interval must be 0 (off) or more"}
		}
		w := &reloader{path: f.config, settle: f.reloadSettle, g: g, started: &loaded, applied: &loaded,
			seen: sha256.Sum256(data), shared: shared, logger: logger}
		stopReload := w.run(ctx, f.watchInterval)
		defer stopReload()
	}
	if file.OTCListen != "" {
		// The merged tools over Open Tool Calling 1.0 as well; the OTC
		// listener answers to the same Host policy as the MCP endpoint,
		// and to the same authentication: with auth configured, a caller
		// without credentials gets 401 there too unless a persona admits it.
		otcFlags := &otcServeFlags{addr: file.OTCListen, allowedHosts: defaultAllowedHosts(file.OTCListen, logger),
			authenticate: authenticate, maxConns: file.Limits.MaxConns}
		otcCtx, stopOTC := context.WithCancel(ctx)
		defer stopOTC()
		if _, err := serveOTC(otcCtx, g.Server(), otcFlags, logger); err != nil {
			ln.Close()
			closeGateway(g, f.shutdownTimeout, logger)
			return err
		}
	}
	h := streamable.NewHandler(g.Server(), append([]streamable.HandlerOption{streamable.WithLogger(logger),
		streamable.WithAllowedHosts(defaultAllowedHosts(file.Listen, logger)...),
		streamable.WithSessionAdmission(g.AdmitSession)}, append(limitHandler, shared.handlerOptions()...)...)...)
	err = streamable.Serve(ctx, ln, h, append(append(serveOpts, limitServe...),
		streamable.WithLimits(streamable.Limits{ShutdownTimeout: f.shutdownTimeout}),
		streamable.WithLogger(logger),
		streamable.WithOnListen(func(url string) {
			ups := g.Upstreams()
			names := make([]string, len(ups))
			for i, u := range ups {
				names[i] = u.Name + "=" + string(u.State)
			}
			logger.Info("gateway serving", "url", url, "tools", len(g.Server().Tools()), "upstreams", names)
		}))...)
	closeGateway(g, f.shutdownTimeout, logger)
	return err
}

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
// who may use what; an upstream that did not answer makes the check fail.
func printGatewayCheck(w io.Writer, g *gateway.Gateway, file *config.File) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "TOOL\tUPSTREAM\tAS THE UPSTREAM NAMES IT")
	for _, t := range g.Tools() {
		fmt.Fprintf(tw, "%s\t%s\t%s\n", t.Name, t.Upstream, t.Original)
	}
	tw.Flush()
	fmt.Fprintln(w)
	var down []error
	tw = tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "UPSTREAM\tSTATE\tTOOLS\tLAST ERROR")
	for _, u := range g.Upstreams() {
		fmt.Fprintf(tw, "%s\t%s\t%d\t%s\n", u.Name, u.State, u.Tools, u.LastError)
		if u.State != gateway.StateReady {
			down = append(down, fmt.Errorf("upstream %s is %s: %s", u.Name, u.State, u.LastError))
		}
	}
	tw.Flush()
	fmt.Fprintf(w, "\naccess: %s\n", accessSummary(file, g.Policy()))
	return errors.Join(down...)
}

// serveAdmin serves /healthz (the process is up), /readyz (every
// upstream's state; 503 while one is not ready), /metrics (the gateway's
// Prometheus metrics) and, when page is not nil, the admin page under
// /admin/ on addr.
func serveAdmin(ctx context.Context, addr string, g *gateway.Gateway, page http.Handler, logger *slog.Logger) (stop func(), err error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("admin listener: %w", err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		_, _ = io.WriteString(w, "ok\n")
	})
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, _ *http.Request) {
		type state struct {
			Name      string    `json:"name"`
			State     string    `json:"state"`
			Since     time.Time `json:"since"`
			Tools     int       `json:"tools"`
			LastError string    `json:"lastError,omitempty"`
		}
		ready := true
		var out []state
		for _, u := range g.Upstreams() {
			out = append(out, state{u.Name, string(u.State), u.Since.UTC(), u.Tools, u.LastError})
			ready = ready && u.State == gateway.StateReady
		}
		w.Header().Set("Content-Type", "application/json")
		if !ready {
			w.WriteHeader(http.StatusServiceUnavailable)
		}
		_ = json.NewEncoder(w).Encode(map[string]any{"ready": ready, "upstreams": out})
	})
	mux.Handle("GET /metrics", g.MetricsHandler())
	paths := "/healthz /readyz /metrics"
	if page != nil {
		mux.Handle("/admin/", page)
		paths += " /admin/"
	}
	// Bounded in connections and time (httpguard.AuxLimits), so that
	// whoever reaches the admin port can never take the descriptors or
	// the memory the MCP listener needs.
	stop = httpguard.AuxLimits.Serve(ln, mux, slog.NewLogLogger(logger.Handler(), slog.LevelWarn),
		func(err error) { logger.Error("admin listener", "error", err) })
	logger.Info("admin endpoints", "url", "http://"+ln.Addr().String(), "paths", paths, "max_conns", httpguard.AuxLimits.MaxConns)
	return stop, nil
}

// reloader reloads the config file on SIGHUP and when its content
// changes. It applies a file only once it has stopped changing (two reads
// settle apart agree: a file caught in the middle of a write is never
// applied) and only whole (parsed and validated; an invalid or empty file
// is logged and the running config stays), then logs what changed.
type reloader struct {
	path    string
	settle  time.Duration
	g       *gateway.Gateway
	started *config.File // as loaded at start: what only a restart changes
	applied *config.File // the config last applied
	seen    [sha256.Size]byte
	shared  *sharedStore
	logger  *slog.Logger
}

// run reloads on SIGHUP, and when the file's content differs from the
// last one tried (read every interval; 0: only on SIGHUP), until stop.
func (w *reloader) run(ctx context.Context, interval time.Duration) (stop func()) {
	ctx, cancel := context.WithCancel(ctx)
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	var tick <-chan time.Time
	if interval > 0 {
		t := time.NewTicker(interval)
		context.AfterFunc(ctx, t.Stop)
		tick = t.C
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			select {
			case <-ctx.Done():
				return
			case <-hup:
				w.reload(ctx, "SIGHUP")
			case <-tick:
				// A file that cannot be read (being replaced) is tried
				// again at the next tick.
				data, err := readConfigFile(w.path)
				switch {
				case err != nil:
				case sha256.Sum256(data) != w.seen:
					w.reload(ctx, "file changed")
				default:
					w.logger.Debug("gateway: config file unchanged", "config", w.path)
				}
			}
		}
	}()
	return func() {
		signal.Stop(hup)
		cancel()
		<-done
	}
}

// reload reads the file once it has settled and applies it.
func (w *reloader) reload(ctx context.Context, why string) {
	data, err := settledRead(ctx, w.path, w.settle)
	if ctx.Err() != nil {
		return
	}
	if err != nil {
		// Not remembered as tried: the next tick reads it again.
		w.logger.Error("gateway: reload refused; the running config stays", "config", w.path, "cause", why, "error", err)
		return
	}
	// Tried, valid or not: an invalid file is not retried until it changes.
	w.seen = sha256.Sum256(data)
	file, err := parseGatewayConfig(w.path, data)
	if err == nil {
		err = w.shared.shareLimits(file.RateLimits, &file.Gateway)
	}
	if err == nil {
		err = w.g.Reload(file.Gateway)
	}
	if err != nil {
		w.logger.Error("gateway: reload refused; the running config stays", "config", w.path, "cause", why, "error", err)
		return
	}
	attrs := append([]any{"config", w.path, "cause", why, "upstreams", len(file.Gateway.Upstreams)}, configChanges(w.applied, file)...)
	w.logger.Info("gateway: config reloaded", attrs...)
	w.applied = file
	if keys := restartOnly(w.started, file); len(keys) > 0 {
		w.logger.Warn("gateway: these settings changed and take effect only on a restart", "keys", strings.Join(keys, ", "))
	}
}

// settledRead reads path until two reads settle apart agree and returns
// that content: a writer still at work changes it in between. It gives up
// after maxSettleReads reads of a file that keeps changing.
func settledRead(ctx context.Context, path string, settle time.Duration) ([]byte, error) {
	data, err := readConfigFile(path)
	if err != nil {
		return nil, err
	}
	t := time.NewTimer(settle)
	defer t.Stop()
	for range maxSettleReads {
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-t.C:
		}
		again, err := readConfigFile(path)
		if err != nil {
			return nil, err
		}
		if bytes.Equal(data, again) {
			return data, nil
		}
		data = again
		t.Reset(settle)
	}
	return nil, fmt.Errorf("the file kept changing for %d reads %v apart; it is read again on its next change or SIGHUP", maxSettleReads, settle)
}

// configChanges are the log attributes naming what next changes from
// prev: upstreams, personas and API keys added, removed or changed, by
// name only (never a key's hash or a header's value); personas whose
// order changed (the first that matches decides).
func configChanges(prev, next *config.File) []any {
	var attrs []any
	add := func(key string, names []string) {
		if len(names) > 0 {
			attrs = append(attrs, key, strings.Join(names, ","))
		}
	}
	ups := func(f *config.File) (names []string, by map[string]gateway.Upstream) {
		by = map[string]gateway.Upstream{}
		for _, u := range f.Gateway.Upstreams {
			names, by[u.Name] = append(names, u.Name), u
		}
		return names, by
	}
	pn, pu := ups(prev)
	nn, nu := ups(next)
	added, removed, changed := diffNames(pn, nn, func(n string) bool { return sameUpstream(pu[n], nu[n]) })
	add("upstreams_added", added)
	add("upstreams_removed", removed)
	add("upstreams_changed", changed)

	personas := func(f *config.File) (names []string, by map[string]policy.Persona) {
		by = map[string]policy.Persona{}
		for _, p := range f.Personas {
			names, by[p.Name] = append(names, p.Name), p
		}
		return names, by
	}
	pp, ppBy := personas(prev)
	np, npBy := personas(next)
	added, removed, changed = diffNames(pp, np, func(n string) bool { return reflect.DeepEqual(ppBy[n], npBy[n]) })
	add("personas_added", added)
	add("personas_removed", removed)
	add("personas_changed", changed)
	var keptBefore, keptAfter []string
	for _, n := range pp {
		if _, ok := npBy[n]; ok {
			keptBefore = append(keptBefore, n)
		}
	}
	for _, n := range np {
		if _, ok := ppBy[n]; ok {
			keptAfter = append(keptAfter, n)
		}
	}
	if !slices.Equal(keptBefore, keptAfter) {
		add("personas_order", np)
	}

	added, removed, changed = diffNames(slices.Sorted(maps.Keys(prev.Auth.APIKeys)), slices.Sorted(maps.Keys(next.Auth.APIKeys)),
		func(n string) bool { return prev.Auth.APIKeys[n] == next.Auth.APIKeys[n] })
	add("api_keys_added", added)
	add("api_keys_removed", removed)
	add("api_keys_changed", changed)
	return attrs
}

// diffNames says which of next's names are not in prev (added), which of
// prev's are not in next (removed), and which are in both but not same.
func diffNames(prev, next []string, same func(string) bool) (added, removed, changed []string) {
	in := func(list []string, n string) bool { return slices.Contains(list, n) }
	for _, n := range next {
		switch {
		case !in(prev, n):
			added = append(added, n)
		case !same(n):
			changed = append(changed, n)
		}
	}
	for _, n := range prev {
		if !in(next, n) {
			removed = append(removed, n)
		}
	}
	return added, removed, changed
}

// sameUpstream reports whether two upstream specs are alike: every field
// equal, the authorizer and in-process server the same ones.
func sameUpstream(a, b gateway.Upstream) bool {
	sameAuth := a.Auth == nil && b.Auth == nil
	if a.Auth != nil && b.Auth != nil && reflect.TypeOf(a.Auth).Comparable() && reflect.TypeOf(a.Auth) == reflect.TypeOf(b.Auth) {
		sameAuth = a.Auth == b.Auth
	}
	sameServer := a.Server == b.Server
	a.Auth, b.Auth, a.Server, b.Server = nil, nil, nil, nil
	return sameAuth && sameServer && reflect.DeepEqual(a, b)
}

// readConfigFile reads path, at most one byte past the largest config
// file accepted (config.Parse refuses a longer one).
func readConfigFile(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(io.LimitReader(f, config.DefaultMaxSize+1))
}

// tracesWanted says whether the OTEL_* environment asks for traces: an
// exporter named in OTEL_TRACES_EXPORTER other than none, or an OTLP
// endpoint; OTEL_SDK_DISABLED=true wins. Nothing set: no traces.
func tracesWanted(getenv func(string) string) bool {
	if strings.EqualFold(strings.TrimSpace(getenv("OTEL_SDK_DISABLED")), "true") {
		return false
	}
	switch strings.TrimSpace(getenv("OTEL_TRACES_EXPORTER")) {
	case "none":
		return false
	case "":
		return getenv("OTEL_EXPORTER_OTLP_ENDPOINT") != "" || getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") != ""
	}
	return true
}

// gatewayTracerProvider builds the tracer provider the environment asks
// for, or nil (tracesWanted). The exporter and its protocol
// (OTEL_EXPORTER_OTLP_PROTOCOL), the sampler (OTEL_TRACES_SAMPLER), the
// batching (OTEL_BSP_*) and the resource (OTEL_SERVICE_NAME, default
// toolwire-gateway; OTEL_RESOURCE_ATTRIBUTES) come from the same
// environment; an exporter it names that does not exist is an error.
func gatewayTracerProvider(ctx context.Context, logger *slog.Logger) (*sdktrace.TracerProvider, error) {
	if !tracesWanted(os.Getenv) {
		return nil, nil
	}
	exp, err := autoexport.NewSpanExporter(ctx)
	if err != nil {
		return nil, usageError{"OpenTelemetry traces: " + err.Error()}
	}
	res, err := resource.New(ctx, resource.WithAttributes(attribute.String("service.name", "toolwire-gateway")),
		resource.WithFromEnv(), resource.WithTelemetrySDK())
	if err != nil {
		logger.Warn("OpenTelemetry resource", "error", err) // res still holds what was read
	}
	otel.SetErrorHandler(otel.ErrorHandlerFunc(func(err error) { logger.Warn("OpenTelemetry", "error", err) }))
	exporter := os.Getenv("OTEL_TRACES_EXPORTER")
	if exporter == "" {
		exporter = "otlp"
	}
	logger.Info("OpenTelemetry traces on", "exporter", exporter)
	return sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp), sdktrace.WithResource(res)), nil
}

// shutdownTracing sends the spans still buffered and stops the exporter.
func shutdownTracing(tp *sdktrace.TracerProvider, logger *slog.Logger) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := tp.Shutdown(ctx); err != nil {
		logger.Warn("OpenTelemetry: sending the last spans", "error", err)
	}
}
