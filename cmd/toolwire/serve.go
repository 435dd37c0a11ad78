package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/toolwire/toolwire/internal/httpguard"
	"github.com/toolwire/toolwire/internal/units"
	"github.com/toolwire/toolwire/reference"
	"github.com/toolwire/toolwire/server"
	"github.com/toolwire/toolwire/transport"
	"github.com/toolwire/toolwire/transport/stdio"
	"github.com/toolwire/toolwire/transport/streamable"
)

type serveFlags struct {
	stdio          bool
	redisURL       string // --redis: state shared with other replicas
	redisPrefix    string
	shared         *sharedStore // opened from --redis, or the data directory's sessions
	pageSize       int
	toolTimeout    time.Duration
	maxMessageSize int
	maxConcurrency int
	maxQueued      int
	memoryBudget   int64
	logLevel       string

	// Streamable HTTP
	addr              string
	path              string
	maxBodySize       int64
	sessionTTL        time.Duration
	maxSessions       int
	maxInFlight       int
	maxPerSession     int
	eventStoreBytes   int
	maxHeaderBytes    int
	allowedHosts      []string
	allowedOrigins    []string
	readHeaderTimeout time.Duration
	readTimeout       time.Duration
	writeTimeout      time.Duration
	idleTimeout       time.Duration
	shutdownTimeout   time.Duration

	debugAddr string

	// Tasks
	dataDir string

	// Reference tools
	envAllow     []string
	files        string
	gzipMaxBytes int64

	otc otcServeFlags

	auth   authFlags // --auth-*: OAuth resource server (serve_auth.go)
	authOn bool
}

func newServeCmd() *cobra.Command {
	var f serveFlags
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Serve the reference tools over Streamable HTTP or stdio",
		Long: "Serve the reference tools (echo, get-sum, get-env, get-structured-content, weather, get-tiny-image,\n" +
			"get-annotated-message, get-resource-links, get-resource-reference, gzip-file-as-resource, gallery,\n" +
			"safe_divide, toggle-simulated-logging, toggle-subscriber-updates, trigger-long-running-operation,\n" +
			"simulate-research-query, get-version, get-roots-list), the demo:// resources and templates, and the\n" +
			"prompts simple-prompt, args-prompt, resource-prompt and completable-prompt, with completions.\n\n" +
			"get-env shows only non-secret variables (locale, shell, PATH, ...); --env-allow NAME,PREFIX* widens\n" +
			"that (repeatable or comma-separated), and values of secret-looking names (TOKEN, SECRET, KEY, ...)\n" +
			"are redacted even then. gzip-file-as-resource compresses data: URIs only, unless --files DIR names\n" +
			"a directory whose regular files it may read (nothing outside it, symlinks included); it never\n" +
			"fetches network URLs and reads at most --gzip-max-bytes.\n\n" +
			"By default the server speaks Streamable HTTP at http://127.0.0.1:8080/mcp (--addr, --path),\n" +
			"to 2025-era clients (initialize, sessions, resumable SSE) and 2026-07-28 clients (stateless)\n" +
			"alike. It binds to loopback and accepts only loopback Host and Origin headers unless told\n" +
			"otherwise (--allowed-host, --allowed-origin); so does the OTC endpoint of --otc-addr.\n" +
			"With --stdio it speaks newline-delimited JSON-RPC on stdin and stdout instead.\n\n" +
			"trigger-long-running-operation and simulate-research-query may run as MCP tasks. Tasks are kept\n" +
			"in an SQLite database, tasks.db in --data-dir (default: toolwire under the user's state directory,\n" +
			"$XDG_STATE_HOME or ~/.local/state), so a client can still fetch a finished task's result after a\n" +
			"restart; tasks that were running when the server stopped are marked failed. --data-dir \"\" keeps\n" +
			"them in memory. On SIGINT/SIGTERM running tasks are stopped and marked failed before it exits.\n" +
			"Logs go to stderr.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			sampleHeap(f.debugAddr)
			logger, err := newLogger(f.logLevel)
			if err != nil {
				return err
			}
			if f.authOn = f.auth.enabled(cmd); f.authOn {
				if err := f.auth.check(f.stdio); err != nil {
					return err
				}
			}
			refOpts, err := f.referenceOptions(cmd.Context())
			if err != nil {
				return err
			}
			if f.redisURL != "" && f.stdio {
				return usageError{"--redis shares HTTP sessions between replicas; it does not apply to --stdio"}
			}
			var shared *sharedStore
			if f.redisURL != "" {
				if shared, err = openSharedStore(cmd.Context(), f.redisURL, f.redisPrefix, logger); err != nil {
					return err
				}
				defer shared.close() // last: the server and its tasks use it until they stop
				f.shared = shared
			}
			var tasks *taskStore
			if shared != nil {
				tasks, err = shared.taskStore() // with the other replicas, not in --data-dir
			} else {
				tasks, err = f.openTaskStore(cmd.Flags().Changed("data-dir"), logger)
			}
			if err != nil {
				return err
			}
			srvOpts := append([]server.Option{server.WithLimits(server.Limits{PageSize: f.pageSize}), server.WithTimeout(f.toolTimeout), server.WithLogger(logger)},
				tasks.serverOptions()...)
			srv := server.New(reference.Info(), srvOpts...)
			// Deferred first, so it runs last: once the transports have
			// stopped, running tasks are stopped and recorded as failed, then
			// the store is closed.
			defer tasks.close(srv, f.shutdownTimeout, logger)
			if shared == nil && !f.stdio {
				// Without Redis, sessions are kept in the data directory
				// with the tasks (closed before it is unlocked).
				if shared, err = openDataDirSessions(tasks, logger); err != nil {
					return fmt.Errorf("--data-dir: %w", err)
				}
				defer shared.close()
				f.shared = shared
			}
			// A signal stops the tasks at once, so that tasks/result
			// requests waiting on them end before the HTTP server's graceful
			// shutdown waits for them.
			stopTasks := context.AfterFunc(cmd.Context(), func() { tasks.stopTasks(srv, f.shutdownTimeout, logger) })
			defer stopTasks()
			if err := reference.Register(srv, refOpts...); err != nil {
				return err
			}
			if f.debugAddr != "" {
				stopDebug, err := serveDebug(cmd.Context(), f.debugAddr, logger)
				if err != nil {
					return err
				}
				defer stopDebug()
			}
			if f.otc.addr != "" {
				f.otc.guard(&f, logger)
				otcCtx, stopOTC := context.WithCancel(cmd.Context())
				errc, err := serveOTC(otcCtx, srv, &f.otc, logger)
				if err != nil {
					stopOTC()
					return err
				}
				defer func() {
					stopOTC()
					if err := <-errc; err != nil {
						logger.Error("OTC server failed", "error", err)
					}
				}()
			}
			if f.stdio {
				logger.Info("serving reference tools on stdio", "tools", len(srv.Tools()))
				if f.maxMessageSize <= 0 || f.maxConcurrency <= 0 || f.memoryBudget < 0 {
					return usageError{"--max-message-size and --max-concurrency must be positive, --memory-budget 0 or more"}
				}
				return stdio.ServeStdio(cmd.Context(), srv,
					transport.WithLimits(transport.Limits{
						MaxMessageBytes: f.maxMessageSize,
						MaxConcurrency:  f.maxConcurrency,
						MaxQueued:       f.maxQueued,
					}),
					memoryBudgetOption(f.memoryBudget),
					transport.WithLogger(logger))
			}
			return serveHTTP(cmd, srv, &f, logger)
		},
	}
	fl := cmd.Flags()
	fl.BoolVar(&f.stdio, "stdio", false, "serve on stdin/stdout instead of HTTP")
	fl.StringVar(&f.redisURL, "redis", "", "HTTP: share sessions, stream events and tasks with the other replicas of this endpoint through Redis at this\n"+
		"redis:// or rediss:// URL (every replica serves every session; see SCALING.md); default: this process only")
	fl.StringVar(&f.redisPrefix, "redis-prefix", "toolwire:", "with --redis: the prefix of every key, so that several deployments can share one Redis")
	fl.IntVar(&f.pageSize, "page-size", server.DefaultPageSize, "tools per tools/list page")
	fl.Var(units.Duration(&f.toolTimeout, server.DefaultToolTimeout), "tool-timeout", "longest a tool call may run (0: no limit)")
	fl.Var(units.Size(&f.maxMessageSize, stdio.DefaultMaxMessageSize, units.MaxSize), "max-message-size", "stdio: largest incoming message in bytes")
	fl.IntVar(&f.maxConcurrency, "max-concurrency", transport.DefaultMaxConcurrency, "stdio: requests served at once")
	fl.IntVar(&f.maxQueued, "max-queued", transport.DefaultMaxQueued, "stdio: requests that may wait for a slot past --max-concurrency (negative: none)")
	fl.Var(units.Size(&f.memoryBudget, transport.DefaultMemoryBudget, units.MaxSize), "memory-budget", "bytes of request bodies in flight, stdio and HTTP together (past it: -32005, HTTP 503); 0 turns the budget off")
	fl.StringVar(&f.logLevel, "log-level", "info", "log level on stderr: debug, info, warn, error")

	fl.StringVar(&f.addr, "addr", streamable.DefaultAddr, "HTTP: address to listen on (host:port; port 0 picks a free one)")
	fl.StringVar(&f.path, "path", streamable.DefaultPath, "HTTP: path of the MCP endpoint")
	fl.Var(units.Size(&f.maxBodySize, streamable.DefaultMaxBodyBytes, units.MaxSize), "max-body-size", "HTTP: largest request body in bytes (413 past it)")
	fl.Var(units.Duration(&f.sessionTTL, streamable.DefaultSessionIdleTimeout), "session-ttl", "HTTP: a 2025-era session idle this long is ended")
	fl.IntVar(&f.maxSessions, "max-sessions", streamable.DefaultMaxSessions, "HTTP: most 2025-era sessions open at once (503 past it)")
	fl.IntVar(&f.maxInFlight, "max-in-flight", streamable.DefaultMaxInFlight, "HTTP: most requests served at once (503 past it)")
	fl.IntVar(&f.maxPerSession, "max-in-flight-per-session", streamable.DefaultMaxInFlightPerSession, "HTTP: most requests one 2025-era session may have running (429 past it)")
	fl.Var(units.Size(&f.eventStoreBytes, streamable.DefaultMaxBytes, units.MaxSize), "event-store-bytes", "HTTP: bytes of SSE events kept for resumption, all sessions together (oldest evicted)")
	fl.Var(units.Size(&f.maxHeaderBytes, streamable.DefaultMaxHeaderBytes, units.MaxSize), "max-header-bytes", "HTTP: largest request header block in bytes (431 past it)")
	fl.StringSliceVar(&f.allowedHosts, "allowed-host", nil, "HTTP and OTC: Host header value to accept, as name or name:port; repeatable; \"*\" for any (default: loopback names, plus the --addr or --otc-addr host)")
	fl.StringSliceVar(&f.allowedOrigins, "allowed-origin", nil, "HTTP and OTC: Origin to accept, e.g. https://app.example.com; repeatable; \"*\" for any (default: loopback origins)")
	fl.Var(units.Duration(&f.readHeaderTimeout, streamable.DefaultReadHeaderTimeout), "read-header-timeout", "HTTP: longest wait for a request's headers")
	fl.Var(units.Duration(&f.readTimeout, streamable.DefaultReadTimeout), "read-timeout", "HTTP: longest wait for a request's body")
	fl.Var(units.Duration(&f.writeTimeout, streamable.DefaultWriteTimeout), "write-timeout", "HTTP and OTC: longest a client may take to accept one write")
	fl.Var(units.Duration(&f.idleTimeout, streamable.DefaultIdleTimeout), "idle-timeout", "HTTP: how long a keep-alive connection waits for its next request")
	fl.Var(units.Duration(&f.shutdownTimeout, streamable.DefaultShutdownTimeout), "shutdown-timeout", "HTTP: on SIGINT/SIGTERM, how long calls in flight may finish")
	defDataDir, _ := defaultDataDir()
	fl.StringVar(&f.dataDir, "data-dir", defDataDir, dataDirHelp)
	fl.StringVar(&f.debugAddr, "debug-addr", "", "serve Go runtime profiles (/debug/pprof/) on this address, loopback only; without it the heap profile is not sampled (default: off)")
	fl.StringSliceVar(&f.envAllow, "env-allow", nil, "get-env: also show these variables, by NAME or PREFIX*; repeatable or comma-separated (secret-looking names stay redacted)")
	fl.StringVar(&f.files, "files", "", "gzip-file-as-resource: directory whose regular files it may read (default: none, data: URIs only)")
	fl.Var(units.Size(&f.gzipMaxBytes, reference.DefaultGzipMaxBytes, units.MaxSize), "gzip-max-bytes", "gzip-file-as-resource: most bytes of input it reads")
	f.otc.register(cmd)
	f.auth.register(cmd)
	return cmd
}

// referenceOptions are the reference server's options the flags ask for;
// the toggled simulations end with ctx.
func (f *serveFlags) referenceOptions(ctx context.Context) ([]reference.Option, error) {
	if f.gzipMaxBytes <= 0 {
		return nil, usageError{"--gzip-max-bytes must be positive"}
	}
	opts := []reference.Option{reference.WithLimits(reference.Limits{MaxGzipBytes: f.gzipMaxBytes}), reference.WithLifetime(ctx)}
	var allow []string
	for _, a := range f.envAllow {
		if a = strings.TrimSpace(a); a == "" {
			continue
		}
		if a == "*" || strings.ContainsAny(a, "= ") || strings.Contains(strings.TrimSuffix(a, "*"), "*") {
			return nil, usageError{"invalid --env-allow " + a + ": want a variable NAME or a PREFIX* (a bare * is refused)"}
		}
		allow = append(allow, a)
	}
	if len(allow) > 0 {
		opts = append(opts, reference.WithEnvAllow(allow...))
	}
	if f.files != "" {
		st, err := os.Stat(f.files)
		if err != nil || !st.IsDir() {
			return nil, usageError{"--files " + f.files + ": not a directory"}
		}
		opts = append(opts, reference.WithFileRoot(f.files))
	}
	return opts, nil
}

// serveHTTP serves srv over Streamable HTTP until the command's context
// ends (SIGINT or SIGTERM), then shuts down gracefully.
func serveHTTP(cmd *cobra.Command, srv *server.Server, f *serveFlags, logger *slog.Logger) error {
	if f.maxBodySize <= 0 || f.maxSessions <= 0 || f.maxInFlight <= 0 || f.sessionTTL <= 0 ||
		f.maxPerSession <= 0 || f.eventStoreBytes <= 0 || f.maxHeaderBytes <= 0 {
		return usageError{"--max-body-size, --max-sessions, --max-in-flight, --max-in-flight-per-session, --event-store-bytes, --max-header-bytes and --session-ttl must be positive"}
	}
	if f.memoryBudget < 0 {
		return usageError{"--memory-budget must be 0 (off) or more"}
	}
	hosts := f.allowedHosts
	if len(hosts) == 0 {
		hosts = defaultAllowedHosts(f.addr, logger)
	}
	logOpt := streamable.WithLogger(logger)
	h := streamable.NewHandler(srv, append([]streamable.HandlerOption{
		streamable.WithAllowedHosts(hosts...),
		streamable.WithAllowedOrigins(f.allowedOrigins...),
		streamable.WithLimits(streamable.Limits{
			MaxBodyBytes:          f.maxBodySize,
			SessionIdleTimeout:    f.sessionTTL,
			MaxSessions:           f.maxSessions,
			MaxInFlight:           f.maxInFlight,
			MaxInFlightPerSession: f.maxPerSession,
		}),
		streamable.WithEventStore(streamable.NewMemoryEventStore(streamable.WithLimits(streamable.Limits{MaxEventBytes: f.eventStoreBytes}))),
		httpBudgetOption(f.memoryBudget),
		streamable.WithLimits(streamable.Limits{
			ReadTimeout:  f.readTimeout,
			WriteTimeout: f.writeTimeout,
		}),
		logOpt}, f.shared.handlerOptions(streamable.WithLimits(streamable.Limits{MaxEventBytes: f.eventStoreBytes}))...)...)
	if f.authOn {
		return serveAuthHTTP(cmd.Context(), srv, f, h, logger)
	}
	return streamable.ListenAndServe(cmd.Context(), f.addr, h,
		streamable.WithPath(f.path),
		streamable.WithLimits(streamable.Limits{
			ReadHeaderTimeout: f.readHeaderTimeout,
			IdleTimeout:       f.idleTimeout,
			MaxHeaderBytes:    f.maxHeaderBytes,
			ShutdownTimeout:   f.shutdownTimeout,
		}),
		logOpt,
		streamable.WithOnListen(func(url string) {
			logger.Info("serving reference tools over Streamable HTTP", "url", url, "tools", len(srv.Tools()))
		}))
}

// defaultAllowedHosts is the Host allow-list for --addr without
// --allowed-host (httpguard.DefaultAllowedHosts), warning when it binds
// every interface.
func defaultAllowedHosts(addr string, logger *slog.Logger) []string {
	hosts, every := httpguard.DefaultAllowedHosts(addr)
	if every {
		logger.Warn("listening on every interface but accepting only loopback Host headers; pass --allowed-host for the names clients use", "addr", addr)
	}
	return hosts
}

func newLogger(level string) (*slog.Logger, error) {
	var l slog.Level
	if err := l.UnmarshalText([]byte(level)); err != nil {
		return nil, usageError{"invalid --log-level " + level + ": want debug, info, warn or error"}
	}
	return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: l})), nil
}

// memoryBudgetOption is the stdio budget --memory-budget asks for: a budget
// of that many bytes, or none for 0.
func memoryBudgetOption(n int64) transport.ServeOption {
	if n == 0 {
		return transport.WithMemoryBudget(nil)
	}
	return transport.WithMemoryBudget(transport.NewMemoryBudget(n))
}

// httpBudgetOption is the HTTP counterpart of memoryBudgetOption.
func httpBudgetOption(n int64) streamable.HandlerOption {
	if n == 0 {
		return streamable.WithMemoryBudget(nil)
	}
	return streamable.WithMemoryBudget(transport.NewMemoryBudget(n))
}
