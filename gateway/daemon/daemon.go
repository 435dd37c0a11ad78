// Package daemon runs a toolwire gateway as its config file describes it:
// the gateway and its upstreams, the MCP endpoint with the config's
// authentication and limits, the audit trail, the admin listener
// (/healthz, /readyz, /metrics and the admin page), the Open Tool Calling
// listener, the state kept in data_dir or shared with other replicas
// through Redis, and reloads of the config file. It is what `toolwire
// gateway` runs, for a program that embeds the gateway:
//
//	file, data, err := daemon.LoadConfig("gateway.yaml")
//	if err != nil {
//		return err
//	}
//	return daemon.Run(ctx, file, daemon.WithLogger(logger),
//		daemon.WithReload(daemon.Reload{Path: "gateway.yaml", Interval: 2 * time.Second, Data: data}))
//
// Run returns once ctx is done and the gateway has shut down (calls in
// flight finished, up to Limits.ShutdownTimeout; every call audited).
package daemon

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/url"
	"slices"
	"sync"
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/toolwire/toolwire/gateway"
	"github.com/toolwire/toolwire/gateway/config"
	"github.com/toolwire/toolwire/internal/datadir"
	"github.com/toolwire/toolwire/internal/httpguard"
	"github.com/toolwire/toolwire/internal/limits"
	"github.com/toolwire/toolwire/transport/streamable"
)

// Defaults of Limits.
const (
	// DefaultShutdownTimeout is how long calls in flight may take to
	// finish once Run's context is done.
	DefaultShutdownTimeout = 10 * time.Second
	// DefaultStartTimeout is how long the first connection to each
	// upstream may take before the gateway serves without it.
	DefaultStartTimeout = 10 * time.Second
	// DefaultReloadSettle is how long the config file must stay the same
	// before a reload applies it (Reload.Settle).
	DefaultReloadSettle = 500 * time.Millisecond
)

// Limits are the daemon's timeouts. Zero fields take the defaults.
type Limits struct {
	// ShutdownTimeout bounds the graceful shutdown: calls in flight, then
	// the audit queue's drain (DefaultShutdownTimeout).
	ShutdownTimeout time.Duration
	// StartTimeout bounds each upstream's first connection
	// (DefaultStartTimeout); a slower upstream joins when it is up.
	StartTimeout time.Duration
}

func (l Limits) withDefaults() Limits {
	d := Limits{ShutdownTimeout: DefaultShutdownTimeout, StartTimeout: DefaultStartTimeout}
	limits.SetPositive(&d.ShutdownTimeout, l.ShutdownTimeout)
	limits.SetPositive(&d.StartTimeout, l.StartTimeout)
	return d
}

// Reload makes Run apply the config file's changes while it serves:
// upstreams added, removed or changed, personas, rate limits and
// enrichment, the others and their calls untouched. The file is read every
// Interval, and at once on SIGHUP; it is applied only once it has stopped
// changing (two reads Settle apart agree) and only whole: an invalid or
// empty file is logged and the running config stays.
type Reload struct {
	// Path is the config file Run's config was loaded from.
	Path string
	// Interval is how often the file is read for changes; 0: only on
	// SIGHUP.
	Interval time.Duration
	// Settle is how far apart two reads must agree (DefaultReloadSettle
	// when 0).
	Settle time.Duration
	// Data is the content Run's config was parsed from (LoadConfig's),
	// so that a change made since is applied; nil: the file as Run
	// first reads it.
	Data []byte
}

// Addrs are where a running daemon listens, reported once every listener
// is bound (WithOnReady): with port 0 in the config, the ports chosen.
type Addrs struct {
	// MCP is the MCP endpoint's URL (http://host:port/mcp).
	MCP string
	// Admin is the admin listener's base URL; "" when it is off.
	Admin string
	// OTC is the Open Tool Calling listener's base URL; "" when off.
	OTC string
}

// Option configures Run and Build.
type Option interface{ applyDaemon(*settings) }

type option func(*settings)

func (f option) applyDaemon(s *settings) { f(s) }

type settings struct {
	logger  *slog.Logger
	limits  Limits
	reload  *Reload
	tracer  trace.TracerProvider
	onReady func(Addrs)
	keepExe bool // WithStartupPagesReleased(false)
}

func resolve(opts []Option) *settings {
	s := &settings{logger: slog.Default()}
	for _, o := range opts {
		if o != nil {
			o.applyDaemon(s)
		}
	}
	s.limits = s.limits.withDefaults()
	return s
}

// WithLogger sets the logger of the daemon and of the gateway it runs
// (default slog.Default()).
func WithLogger(l *slog.Logger) Option {
	return option(func(s *settings) {
		if l != nil {
			s.logger = l
		}
	})
}

// WithLimits sets the daemon's timeouts (zero fields keep the defaults).
func WithLimits(l Limits) Option { return option(func(s *settings) { s.limits = l }) }

// WithReload makes Run apply the changes of the config file r.Path (see
// Reload); without it, the config given to Run is the one served until
// Run returns.
func WithReload(r Reload) Option { return option(func(s *settings) { s.reload = &r }) }

// WithTracerProvider traces the gateway's requests with tp: a SERVER span
// per downstream request, a CLIENT span per upstream request, the trace
// context passed on to upstreams (default: none). The caller shuts tp
// down after Run returns, so that the last spans are sent;
// TracerProviderFromEnv builds the one the OTEL_* environment asks for.
func WithTracerProvider(tp trace.TracerProvider) Option {
	return option(func(s *settings) { s.tracer = tp })
}

// WithStartupPagesReleased says whether Run, once it serves, gives back
// to the kernel the pages of the program's binary that only start-up
// touched (default true, on Linux 5.4 or later): a long-running gateway
// then keeps resident the code it runs, not all that package init and
// config parsing went through. The binary's pages that the page cache
// holds but no process maps (start-up's read-ahead) are dropped as well,
// so that a fault does not map them in as neighbours of the page it
// needs. Pages needed later are read back one at a time as they are first
// touched.
func WithStartupPagesReleased(on bool) Option {
	return option(func(s *settings) { s.keepExe = !on })
}

// WithOnReady calls f once every listener is bound and the gateway
// serves, with their addresses: a program embedding the gateway waits for
// it before sending requests.
func WithOnReady(f func(Addrs)) Option { return option(func(s *settings) { s.onReady = f }) }

// Build makes the gateway file describes, as Run would, and checks its
// authentication settings, without listening, auditing or opening any
// state: for a dry run that connects every upstream once (toolwire gateway
// --check) or asks the personas what a caller may do (toolwire gateway
// explain). The caller closes the gateway.
func Build(ctx context.Context, file *config.File, opts ...Option) (*gateway.Gateway, error) {
	s := resolve(opts)
	g, err := newGateway(file, s)
	if err != nil {
		return nil, err
	}
	if _, _, err := endpointAuth(file, func() bool { return g.Policy().AdmitsAnonymous() }, s.logger); err != nil {
		closeGateway(g, s.limits.ShutdownTimeout, s.logger)
		return nil, err
	}
	return g, nil
}

// newGateway makes the gateway of file with the options every use shares
// (logger, start timeout, limits, tracing) and extra.
func newGateway(file *config.File, s *settings, extra ...gateway.Option) (*gateway.Gateway, error) {
	_, _, limits := limitOptions(file.Limits)
	gopts := append([]gateway.Option{gateway.WithLogger(s.logger), gateway.WithLimits(gateway.Limits{StartTimeout: s.limits.StartTimeout})}, limits...)
	if s.tracer != nil {
		gopts = append(gopts, gateway.WithTracerProvider(s.tracer))
	}
	return gateway.New(file.Gateway, append(gopts, extra...)...)
}

// Run serves the gateway file describes until ctx is done, then shuts it
// down gracefully and returns: nil after a shutdown ctx asked for, or the
// error that kept it from starting or serving. file is not changed; a
// reload (WithReload) reads the file again.
func Run(ctx context.Context, file *config.File, opts ...Option) (err error) {
	s := resolve(opts)
	logger := s.logger
	f := *file // shareLimits may set the rate limiter of this copy
	file = &f
	if s.reload != nil && s.reload.Path == "" {
		return errors.New("daemon: Reload needs the config file's Path")
	}

	var extra []gateway.Option
	var shared *datadir.Shared
	if r := file.Store.Redis; r != nil {
		if shared, err = datadir.OpenRedis(ctx, r.URL, r.Prefix, logger); err != nil {
			return err
		}
		defer shared.Close() // last: the gateway and its tasks use it until they close
		if err := shareLimits(shared, file); err != nil {
			return err
		}
	}
	if file.DataDir != "" || shared != nil {
		// The gateway's own tasks (a task call of an upstream's tool) are
		// kept in data_dir, or in the shared store with the other
		// replicas: a finished one's result survives a restart.
		var tasks *datadir.Tasks
		if shared != nil {
			tasks, err = shared.Tasks()
		} else if tasks, err = datadir.OpenTasks(file.DataDir, logger); err != nil {
			err = fmt.Errorf("data_dir: %w", err)
		}
		if err != nil {
			return err
		}
		defer tasks.Close(logger) // after the gateway's close, which stops the tasks
		extra = append(extra, gateway.WithServerOptions(tasks.ServerOptions()...))
		if shared == nil { // without Redis, 2025-era sessions are kept in data_dir too
			if shared, err = datadir.OpenSessions(tasks.Dir, logger); err != nil {
				return fmt.Errorf("data_dir: %w", err)
			}
			defer shared.Close() // before data_dir is unlocked
		}
	}
	aud, aopts, err := startAudit(ctx, file, logger)
	if err != nil {
		return fmt.Errorf("audit: %w", err)
	}
	defer aud.close(s.limits.ShutdownTimeout, logger) // after the gateway's close: every call is recorded
	g, err := newGateway(file, s, append(extra, aopts...)...)
	if err != nil {
		return err
	}
	return serve(ctx, file, s, g, aud, shared)
}

// serve runs the listeners of g until ctx is done, then closes g before
// it stops the listeners beside the MCP endpoint.
func serve(ctx context.Context, file *config.File, s *settings, g *gateway.Gateway, aud *gatewayAudit, shared *datadir.Shared) error {
	logger := s.logger
	closeG := sync.OnceFunc(func() { closeGateway(g, s.limits.ShutdownTimeout, logger) })
	defer closeG()
	// Whether callers without credentials are let in is asked of the
	// personas running at the time, so that a reload counts.
	serveOpts, authenticate, err := endpointAuth(file, func() bool { return g.Policy().AdmitsAnonymous() }, logger)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", file.Listen)
	if err != nil {
		return err
	}
	var addrs Addrs
	if file.AdminListen != "" {
		page, err := adminHandler(file, g, aud.store, logger)
		if err != nil {
			ln.Close()
			return err
		}
		url, stopAdmin, err := serveAdmin(file.AdminListen, g, page, logger)
		if err != nil {
			ln.Close()
			return err
		}
		defer stopAdmin()
		addrs.Admin = url
	}
	if s.reload != nil {
		w, err := newReloader(*s.reload, g, shared, logger)
		if err != nil {
			ln.Close()
			return err
		}
		defer w.run(ctx, s.reload.Interval)()
	}
	if file.OTCListen != "" {
		// The merged tools over Open Tool Calling 1.0 as well; the OTC
		// listener answers to the same Host policy as the MCP endpoint,
		// and to the same authentication: with auth configured, a caller
		// without credentials gets 401 there too unless a persona admits it.
		url, stopOTC, err := serveOTC(ctx, g, file, authenticate, logger)
		if err != nil {
			ln.Close()
			return err
		}
		defer stopOTC()
		addrs.OTC = url
	}
	limitHandler, limitServe, _ := limitOptions(file.Limits)
	h := streamable.NewHandler(g.Server(), append([]streamable.HandlerOption{streamable.WithLogger(logger),
		streamable.WithAllowedHosts(allowedHosts(file.Listen, file, logger)...),
		streamable.WithSessionAdmission(g.AdmitSession)}, append(limitHandler, shared.HandlerOptions()...)...)...)
	serveOpts = append(serveOpts, streamable.WithHTTPMiddleware(admitPersonas(g)))
	err = streamable.Serve(ctx, ln, h, append(append(serveOpts, limitServe...),
		streamable.WithLimits(streamable.Limits{ShutdownTimeout: s.limits.ShutdownTimeout}),
		streamable.WithLogger(logger),
		streamable.WithOnListen(func(url string) {
			ups := g.Upstreams()
			names := make([]string, len(ups))
			for i, u := range ups {
				names[i] = u.Name + "=" + string(u.State)
			}
			logger.Info("gateway serving", "url", url, "tools", len(g.Server().Tools()), "upstreams", names)
			if !s.keepExe {
				releaseStartupPages(logger)
			}
			if s.onReady != nil {
				addrs.MCP = url
				s.onReady(addrs)
			}
		}))...)
	closeG()
	return err
}

// shareLimits replaces the in-process rate limiter of file (when it sets
// rate_limits) with one whose buckets every replica sharing shared shares.
func shareLimits(shared *datadir.Shared, file *config.File) error {
	l, err := shared.Limiter(file.RateLimits)
	if err == nil && l != nil {
		file.Gateway.Limits = l
	}
	return err
}

// closeGateway closes g, waiting up to timeout for its calls in flight.
func closeGateway(g *gateway.Gateway, timeout time.Duration, logger *slog.Logger) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	if err := g.Close(ctx); err != nil {
		logger.Warn("gateway: closing", "error", err)
	}
}

// allowedHosts is the gateway's Host allow-list for a listener on addr:
// httpguard.DefaultAllowedHosts, the config's allowed_hosts and
// public_url's host; it warns when the listener binds every interface
// and no name beyond loopback is allowed.
func allowedHosts(addr string, file *config.File, logger *slog.Logger) []string {
	hosts, every := httpguard.DefaultAllowedHosts(addr)
	named := len(file.AllowedHosts) > 0
	hosts = append(hosts, file.AllowedHosts...)
	if u, err := url.Parse(file.PublicURL); err == nil && u.Host != "" && !slices.Contains(hosts, u.Hostname()) {
		hosts = append(hosts, u.Hostname())
		named = true
	}
	if every && !named {
		logger.Warn("listening on every interface but accepting only loopback Host headers: set allowed_hosts to the names callers use", "addr", addr)
	}
	return hosts
}
