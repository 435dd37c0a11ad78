package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"log/slog"
	"net/http"
	"os"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/toolwire/toolwire/client"
	"github.com/toolwire/toolwire/internal/backoff"
	"github.com/toolwire/toolwire/internal/limits"
	"github.com/toolwire/toolwire/mcp"
	"github.com/toolwire/toolwire/transport/memory"
)

// State is where an upstream's supervision stands.
type State string

// The states of an upstream.
const (
	// StateStarting: connecting, or waiting to reconnect after a failure.
	StateStarting State = "starting"
	// StateReady: a session is open; its tools are served.
	StateReady State = "ready"
	// StateDown: it failed the crash-loop limit (Limits.MaxCrashes) times in a
	// row within the window, or one of its lists went past ListLimits; it
	// is still retried, at the maximum backoff.
	StateDown State = "down"
)

// UpstreamStatus is one upstream as Upstreams reports it, for a readiness
// endpoint.
type UpstreamStatus struct {
	Name      string
	State     State
	LastError string    // why the last connection failed or ended; "" if none
	Since     time.Time // when State was entered
	Tools     int       // tools listed by the current session
	Transport string    // "stdio", "http", "sse" (set, or detected by the current session) or "in-process"
	Restarts  uint64    // failures followed by a reconnection
}

// listing is what one session of an upstream lists, in its own names.
type listing struct {
	tools     []*mcp.Tool
	prompts   []*mcp.Prompt
	resources []*mcp.Resource
	templates []*mcp.ResourceTemplate
}

// upstream supervises the session to one Upstream: it connects, watches
// the session, and reconnects with backoff when it is lost.
type upstream struct {
	g    *Gateway
	spec Upstream
	log  *slog.Logger

	ctx    context.Context // ends when the upstream is removed or the gateway closes
	cancel context.CancelFunc
	exited chan struct{} // closed when run returns
	first  chan struct{} // closed after the first connection attempt

	refreshCh chan struct{} // a list_changed arrived
	checkCh   chan struct{} // a call failed in transport: check the session
	restarts  atomic.Uint64 // failures followed by a reconnection (metrics.go)
	hc        *http.Client  // HTTP upstreams: one connection pool for every session
	pool      *clientPool   // per-client sessions (sessions.go); nil when shared

	mu       sync.Mutex
	state    State
	lastErr  error
	since    time.Time
	c        *client.Client // nil unless ready
	readyCh  chan struct{}  // closed, and replaced, when a session becomes ready
	list     listing
	nextTry  time.Time // when the supervisor connects next (zero: now)
	inflight callCount
	active   map[uint64]*forwarded // downstream tools/call requests in flight (input.go)
	seq      uint64
}

func newUpstream(g *Gateway, spec Upstream) *upstream {
	ctx, cancel := context.WithCancel(context.Background())
	u := &upstream{
		g: g, spec: spec, log: g.opts.logger.With("upstream", spec.Name),
		ctx: ctx, cancel: cancel, exited: make(chan struct{}), first: make(chan struct{}),
		refreshCh: make(chan struct{}, 1), checkCh: make(chan struct{}, 1),
		state: StateStarting, since: time.Now(), readyCh: make(chan struct{}),
	}
	if spec.URL != "" {
		u.hc = upstreamHTTPClient(g.opts.limits.MaxIdleConns)
	}
	if spec.Sessions == SessionsPerClient {
		u.pool = newClientPool(u)
	}
	return u
}

// upstreamHTTPClient is the client of one HTTP upstream: HTTP/1.1 on the
// caller's goroutine (h1Transport), connections kept for reuse up to conns
// idle ones, since every call in flight needs its own.
func upstreamHTTPClient(conns int) *http.Client {
	return &http.Client{Transport: newH1Transport(conns)}
}

func (u *upstream) timeout() time.Duration {
	if u.spec.Timeout > 0 {
		return u.spec.Timeout
	}
	return u.g.opts.limits.CallTimeout
}

func (u *upstream) status() UpstreamStatus {
	u.mu.Lock()
	defer u.mu.Unlock()
	st := UpstreamStatus{Name: u.spec.Name, State: u.state, Since: u.since, Tools: len(u.list.tools),
		Transport: u.spec.Transport(), Restarts: u.restarts.Load()}
	if u.c != nil && u.c.OverSSE() {
		st.Transport = "sse" // auto-detected: the server refused Streamable HTTP
	}
	if u.lastErr != nil {
		st.LastError = u.lastErr.Error()
	}
	return st
}

// NotReadyError is why a request to a configured upstream could not be
// sent: it has no session now (it is starting, reconnecting or down). Its
// items stay listed meanwhile; RetryAfter says when it is next tried.
type NotReadyError struct {
	Upstream   string
	State      State
	RetryAfter time.Duration
	Err        error // why the last connection failed or ended; nil if none
}

func (e *NotReadyError) Error() string {
	why := fmt.Sprintf("upstream %q is not ready (%s; next attempt in %d ms)", e.Upstream, e.State, e.RetryAfter.Milliseconds())
	if e.Err != nil {
		why += ": " + e.Err.Error()
	}
	return why
}

func (e *NotReadyError) Unwrap() error { return e.Err }

// session returns the ready session, or nil and why there is none (a
// *NotReadyError).
func (u *upstream) session() (*client.Client, error) {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.c != nil {
		return u.c, nil
	}
	after := max(time.Until(u.nextTry), u.g.opts.limits.MinBackoff)
	return nil, &NotReadyError{Upstream: u.spec.Name, State: u.state, RetryAfter: after, Err: u.lastErr}
}

// callLog is the option that routes an upstream's log messages sent with
// a call to f: only HTTP says which call a message comes with (elsewhere
// upstreamLog routes it), so only there is it registered per call.
func (u *upstream) callLog(f *forwarded) []client.CallOption {
	if u.spec.URL == "" {
		return nil
	}
	return []client.CallOption{client.WithCallLog(f.log)}
}

// modern says whether u's current session speaks 2026-07-28.
func (u *upstream) modern() bool {
	u.mu.Lock()
	c := u.c
	u.mu.Unlock()
	return c != nil && c.Era() == mcp.EraModern
}

// waitNewSession waits for a ready session other than old, until ctx ends.
func (u *upstream) waitNewSession(ctx context.Context, old *client.Client) (*client.Client, error) {
	for {
		u.mu.Lock()
		c, ready := u.c, u.readyCh
		u.mu.Unlock()
		if c != nil && c != old {
			return c, nil
		}
		select {
		case <-ready:
		case <-u.ctx.Done():
			return nil, fmt.Errorf("upstream %q was removed", u.spec.Name)
		case <-ctx.Done():
			return nil, fmt.Errorf("upstream %q did not reconnect in time: %w", u.spec.Name, ctx.Err())
		}
	}
}

// begin and end count the calls in flight, so that a removed upstream is
// closed only after them (Reload).
func (u *upstream) begin() {
	u.mu.Lock()
	u.inflight.add()
	u.mu.Unlock()
}

func (u *upstream) end() {
	u.mu.Lock()
	u.inflight.done()
	u.mu.Unlock()
}

// drained returns a channel closed once no call is in flight.
func (u *upstream) drained() <-chan struct{} {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.inflight.drained()
}

// suspect asks the supervisor to check the session (a call failed in
// transport: an HTTP upstream shows a lost server only that way).
func (u *upstream) suspect() {
	select {
	case u.checkCh <- struct{}{}:
	default:
	}
}

func (u *upstream) listChanged(method string, _ json.RawMessage) {
	switch method {
	case mcp.NotificationToolsListChanged, mcp.NotificationPromptsListChanged, mcp.NotificationResourcesListChanged:
		select {
		case u.refreshCh <- struct{}{}:
		default:
		}
	}
}

// transport builds the client transport for the spec.
func (u *upstream) transport(ctx context.Context) (client.Transport, error) {
	s := u.spec
	switch {
	case len(s.Command) > 0:
		cmd := &client.Command{Path: s.Command[0], Args: s.Command[1:], Dir: s.Dir}
		if len(s.Env) > 0 {
			env := os.Environ()
			keys := make([]string, 0, len(s.Env))
			for k := range s.Env {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			for _, k := range keys {
				env = append(env, k+"="+s.Env[k])
			}
			cmd.Env = env
		}
		return cmd, nil
	case s.URL != "":
		return u.urlTransport(u.httpAuth()), nil
	case s.Server != nil:
		// The in-process session lives until the client closes its end
		// (the supervisor always does): not tied to ctx, so that what the
		// client sends before closing (the cancellation of its
		// subscriptions/listen) is still read.
		return &client.Conn{Conn: memory.Serve(context.WithoutCancel(ctx), s.Server)}, nil
	}
	return nil, errors.New("no Command, URL or Server")
}

// clientOptions are the options every session to u opens with: the
// gateway's client options, then u's message size bound (so that an
// upstream cannot make the gateway buffer without bound), logger and call
// timeout, and no bound on pages (list bounds lists by ListLimits).
func (u *upstream) clientOptions() []client.Option {
	maxMessage := u.spec.MaxMessageSize
	limits.Default(&maxMessage, u.g.opts.limits.MaxMessageBytes)
	opts := append([]client.Option{}, u.g.opts.clientOpts...)
	return append(opts,
		client.WithLimits(client.Limits{MaxMessageBytes: maxMessage}),
		client.WithLogger(u.log),
		client.WithTimeout(u.timeout()),
		client.WithLimits(client.Limits{MaxPages: 1 << 30}),
	)
}

func (u *upstream) connect() (*client.Client, error) {
	ctx, cancel := context.WithTimeout(u.ctx, u.g.opts.limits.StartTimeout)
	defer cancel()
	t, err := u.transport(u.ctx)
	if err != nil {
		return nil, err
	}
	opts := append(u.clientOptions(),
		client.WithNotificationHandler(u.listChanged),
		client.WithLogHandler(u.upstreamLog),
	)
	opts = append(opts, u.inputOptions()...)
	// initialize and notifications/initialized run nothing: a repeated
	// initialize opens a session the server lets expire.
	c, err := client.Connect(withReplaySafe(ctx), t, opts...)
	if err != nil {
		return nil, err
	}
	if lvl := u.g.opts.logLevel; lvl != "" && (c.ServerCapabilities().Logging != nil || c.Era() == mcp.EraModern) {
		if err := c.SetLogLevel(ctx, lvl); err != nil {
			u.log.Debug("the upstream did not take the log level", "level", string(lvl), "error", err)
		}
	}
	return c, nil
}

// slogLevel is the gateway's log level for an upstream's log message of
// level l: notice and info are info, alert and above are error.
func slogLevel(l mcp.LoggingLevel) slog.Level {
	switch l {
	case mcp.LevelDebug:
		return slog.LevelDebug
	case mcp.LevelWarning:
		return slog.LevelWarn
	case mcp.LevelError, mcp.LevelCritical, mcp.LevelAlert, mcp.LevelEmergency:
		return slog.LevelError
	}
	return slog.LevelInfo
}

// upstreamLog passes an upstream's log message to the gateway's logger,
// and to the downstream request when exactly one call to the upstream is
// in flight (input.go explains why only then).
func (u *upstream) upstreamLog(m client.LogMessage) {
	u.log.Log(context.Background(), slogLevel(m.Level), "upstream log", "logger", m.Logger, "data", string(m.Data))
	if u.spec.URL == "" {
		// Over HTTP a message that comes with a call reaches it by
		// client.WithCallLog; over stdio and in process nothing says which
		// call it belongs to, so it goes to the only one in flight.
		if f, ok := u.sole(); ok {
			f.log(m)
		}
	}
}

// Defaults of ListLimits.
const (
	DefaultMaxListPages = 100
	DefaultMaxListItems = 10_000
	DefaultMaxListBytes = 32 << 20
)

// ListLimits bound each list the gateway follows from an upstream, page
// by page (its tools, its prompts, its resources, its resource templates),
// since one upstream's list could otherwise hold the gateway's memory
// without end (the per-message limit, Limits.MaxMessageBytes, bounds one
// page only). An upstream whose list goes past a bound is marked down at
// once (StateDown), with the bound as its last error, its session closed
// and its items served no more; it is tried again every maximum backoff.
// The other upstreams are untouched. A zero field takes its default.
type ListLimits struct {
	// Pages is how many pages one list may take (default
	// DefaultMaxListPages).
	Pages int
	// Items is how many items one list may hold (default
	// DefaultMaxListItems).
	Items int
	// Bytes is how large one list's items may be, in bytes of their JSON
	// encoding (default DefaultMaxListBytes, 32 MiB).
	Bytes int64
}

func (l ListLimits) withDefaults() ListLimits {
	limits.Default(&l.Pages, DefaultMaxListPages)
	limits.Default(&l.Items, DefaultMaxListItems)
	limits.Default(&l.Bytes, DefaultMaxListBytes)
	return l
}

// listBoundError is an upstream's list past ListLimits.
type listBoundError struct {
	method string // tools/list...
	what   string // "more than 100 pages"
}

func (e *listBoundError) Error() string {
	return fmt.Sprintf("%s: %s, past the gateway's bound on a list (ListLimits)", e.method, e.what)
}

// follow appends every item of pages to out, within lim: past a bound it
// stops reading and returns a *listBoundError.
func follow[P, T any](method string, lim ListLimits, pages iter.Seq2[P, error], items func(P) []T, out *[]T) error {
	var size countingWriter
	enc := json.NewEncoder(&size)
	n := 0
	for page, err := range pages {
		if err != nil {
			return fmt.Errorf("%s: %w", method, err)
		}
		if n++; n > lim.Pages {
			return &listBoundError{method, fmt.Sprintf("more than %d pages", lim.Pages)}
		}
		its := items(page)
		if len(*out)+len(its) > lim.Items {
			return &listBoundError{method, fmt.Sprintf("more than %d items", lim.Items)}
		}
		for _, it := range its {
			_ = enc.Encode(it) // what the gateway keeps, as it would send it
		}
		if size.n > lim.Bytes {
			return &listBoundError{method, fmt.Sprintf("more than %d bytes of items", lim.Bytes)}
		}
		*out = append(*out, its...)
	}
	return nil
}

// countingWriter counts what is written to it, and keeps nothing.
type countingWriter struct{ n int64 }

func (w *countingWriter) Write(p []byte) (int, error) {
	w.n += int64(len(p))
	return len(p), nil
}

// list reads everything the session lists, following every page, each
// list within lim.
func list(ctx context.Context, c *client.Client, lim ListLimits) (listing, error) {
	var l listing
	ctx = withReplaySafe(ctx)
	caps := c.ServerCapabilities()
	if caps.Tools != nil {
		if err := follow(mcp.MethodListTools, lim, c.ToolPages(ctx), func(p *mcp.ListToolsResult) []*mcp.Tool { return p.Tools }, &l.tools); err != nil {
			return l, err
		}
		if _, ok := caps.Extensions[mcp.ExtensionTasks]; ok && c.Era() == mcp.EraModern {
			// 2026-07-28 lists no execution: a server with the tasks
			// extension decides per call, so each tool may run as a task.
			for _, t := range l.tools {
				if t.Execution == nil {
					t.Execution = &mcp.ToolExecution{TaskSupport: mcp.TaskOptional}
				}
			}
		}
	}
	if caps.Prompts != nil {
		if err := follow(mcp.MethodListPrompts, lim, c.PromptPages(ctx), func(p *mcp.ListPromptsResult) []*mcp.Prompt { return p.Prompts }, &l.prompts); err != nil {
			return l, err
		}
	}
	if caps.Resources != nil {
		if err := follow(mcp.MethodListResources, lim, c.ResourcePages(ctx), func(p *mcp.ListResourcesResult) []*mcp.Resource { return p.Resources }, &l.resources); err != nil {
			return l, err
		}
		if err := follow(mcp.MethodListResourceTemplates, lim, c.ResourceTemplatePages(ctx), func(p *mcp.ListResourceTemplatesResult) []*mcp.ResourceTemplate { return p.ResourceTemplates }, &l.templates); err != nil {
			return l, err
		}
	}
	return l, nil
}

// refresh lists the session's catalog again and updates the gateway's.
func (u *upstream) refresh(c *client.Client) error {
	ctx, cancel := context.WithTimeout(u.ctx, u.timeout())
	defer cancel()
	l, err := list(ctx, c, u.g.opts.limits.Lists)
	if err != nil {
		return err
	}
	u.mu.Lock()
	if u.c != c {
		u.mu.Unlock()
		return nil
	}
	u.list = l
	u.mu.Unlock()
	u.g.rebuild()
	return nil
}

// healthy checks a session with a request every server answers.
func (u *upstream) healthy(c *client.Client) error {
	if err := c.Err(); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(u.ctx, min(u.timeout(), 10*time.Second))
	defer cancel()
	method := mcp.MethodPing
	if c.Era() == mcp.EraModern {
		method = mcp.MethodDiscover
	}
	_, err := c.Call(ctx, method, nil)
	return err
}

// run is the supervisor: connect, serve, watch, reconnect.
//
// A lost session leaves the upstream's items listed (its last listing
// stays in the catalog while it reconnects; a call gets a NotReadyError).
// Reconnection delays double from the minimum backoff, with jitter, up to
// the maximum, counted from the last ready session. The crash-loop limit
// counts sessions lost after they were established, and, for an upstream
// that has never been ready, every failed attempt: a server restarting
// under a running gateway is never declared down by its own restart, a
// misconfigured one is.
func (u *upstream) run() {
	defer close(u.exited)
	defer u.pool.closeAll()
	var failures []time.Time
	everReady := false
	attempts := 0 // failed attempts since the last ready session
	firstDone := false
	markFirst := func() {
		if !firstDone {
			firstDone = true
			close(u.first)
		}
	}
	defer markFirst()
	for u.ctx.Err() == nil {
		established := false
		c, err := u.connect()
		if err == nil {
			sub := u.listen(c)
			var l listing
			ctx, cancel := context.WithTimeout(u.ctx, u.timeout())
			l, err = list(ctx, c, u.g.opts.limits.Lists)
			cancel()
			if err != nil {
				if sub != nil {
					_ = sub.Close()
				}
				_ = c.Close()
			} else {
				established, everReady, attempts = true, true, 0
				u.mu.Lock()
				u.c, u.list, u.state, u.since = c, l, StateReady, time.Now()
				close(u.readyCh)
				u.readyCh = make(chan struct{})
				u.mu.Unlock()
				u.log.Info("upstream ready", "tools", len(l.tools), "era", c.Era(), "version", c.ProtocolVersion())
				u.g.rebuild()
				markFirst()
				if u.pool != nil {
					err = u.pool.park(c, sub)
				} else {
					err = u.watch(c, sub)
				}
				if sub != nil {
					_ = sub.Close()
				}
				// The listing stays: the items remain served (a call
				// gets a NotReadyError) until a new session lists again.
				u.mu.Lock()
				u.c, u.lastErr, u.nextTry = nil, err, time.Time{}
				if u.ctx.Err() == nil {
					u.state, u.since = StateStarting, time.Now()
				}
				u.mu.Unlock()
				_ = c.Close()
			}
		}
		if u.ctx.Err() != nil {
			return
		}
		u.restarts.Add(1)
		now := time.Now()
		if established || !everReady {
			failures = append(failures, now)
		}
		for len(failures) > 0 && now.Sub(failures[0]) > u.g.opts.limits.CrashWindow {
			failures = failures[1:]
		}
		n := len(failures)
		attempts++
		policy := backoff.Policy{Initial: u.g.opts.limits.MinBackoff, Max: u.g.opts.limits.MaxBackoff, Jitter: backoff.EqualJitter}
		state, delay := StateStarting, policy.Base(attempts)
		if delay <= 0 {
			delay = u.g.opts.limits.MaxBackoff
		}
		overList := bounded(err)
		if n >= u.g.opts.limits.MaxCrashes || overList {
			// A list past its bound is no passing failure: down at once.
			state, delay = StateDown, u.g.opts.limits.MaxBackoff
		}
		delay = policy.Jittered(delay)
		u.mu.Lock()
		u.lastErr, u.nextTry = err, now.Add(delay)
		if u.state != state {
			u.state, u.since = state, now
		}
		if overList {
			// What it listed before is no longer what it lists: unlike a
			// lost session's, its items are not served meanwhile.
			u.list = listing{}
		}
		u.mu.Unlock()
		if overList {
			u.g.rebuild()
		}
		u.log.Warn("upstream failed; reconnecting", "error", err, "state", string(state), "retry_in", delay)
		markFirst()
		t := time.NewTimer(delay)
		select {
		case <-t.C:
		case <-u.ctx.Done():
			t.Stop()
			return
		}
	}
}

// listen opens a 2026-07-28 subscription to the session's list changes
// (a legacy session sends them unasked); nil when there is none. Its
// notifications reach listChanged through the notification handler.
func (u *upstream) listen(c *client.Client) *client.Subscription {
	if c.Era() != mcp.EraModern {
		return nil
	}
	caps := c.ServerCapabilities()
	f := mcp.SubscriptionFilter{ToolsListChanged: caps.Tools != nil, PromptsListChanged: caps.Prompts != nil, ResourcesListChanged: caps.Resources != nil}
	if !f.ToolsListChanged && !f.PromptsListChanged && !f.ResourcesListChanged {
		return nil
	}
	sub, err := c.Listen(u.ctx, f, nil)
	if err != nil {
		u.log.Warn("cannot subscribe to the upstream's list changes", "error", err)
		return nil
	}
	return sub
}

// watch serves a ready session until it is lost or a list goes past its
// bound (the error says why), or the upstream stops (nil).
func (u *upstream) watch(c *client.Client, sub *client.Subscription) error {
	var subDone <-chan struct{}
	if sub != nil {
		subDone = sub.Done()
	}
	for {
		select {
		case <-u.ctx.Done():
			return nil
		case <-c.Done():
			return fmt.Errorf("session lost: %w", c.Err())
		case <-subDone:
			// The subscription ended (a dropped stream): open another and
			// list again, since changes may have been missed.
			t := time.NewTimer(u.g.opts.limits.MinBackoff) // never a tight loop
			select {
			case <-t.C:
			case <-u.ctx.Done():
				t.Stop()
				return nil
			}
			if err := u.healthy(c); err != nil {
				return fmt.Errorf("session lost: %w", err)
			}
			sub = u.listen(c)
			subDone = nil
			if sub != nil {
				defer sub.Close()
				subDone = sub.Done()
			}
			if err := u.refresh(c); err != nil {
				if bounded(err) {
					return err
				}
				u.log.Warn("cannot refresh the upstream's lists", "error", err)
			}
		case <-u.refreshCh:
			if err := u.refresh(c); err != nil {
				if bounded(err) {
					return err
				}
				u.log.Warn("cannot refresh the upstream's lists", "error", err)
				if herr := u.healthy(c); herr != nil {
					return fmt.Errorf("session lost: %w", herr)
				}
			}
		case <-u.checkCh:
			if err := u.healthy(c); err != nil {
				if u.ctx.Err() != nil {
					return nil
				}
				return fmt.Errorf("session lost: %w", err)
			}
		}
	}
}

// bounded says whether err is a list past ListLimits.
func bounded(err error) bool {
	var b *listBoundError
	return errors.As(err, &b)
}

// stop ends supervision and closes the session; it returns once done.
func (u *upstream) stop() {
	u.cancel()
	<-u.exited
	u.forgetExchanged()
	if u.hc != nil {
		u.hc.CloseIdleConnections()
	}
}
