package gateway

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"reflect"
	"regexp"
	"sync"
	"sync/atomic"
	"time"

	"github.com/toolwire/toolwire/client"
	"github.com/toolwire/toolwire/server"
	"github.com/toolwire/toolwire/transport/streamable"
)

// Gateway serves the merged catalog of its upstreams on one MCP server.
// It is safe for concurrent use.
//
// How it works: each upstream has one supervised client session
// (upstream.go), shared by every call. Their lists are merged into a
// catalog (catalog.go) that is registered on the gateway's server with
// AddRawTool, AddPrompt, AddResource and AddResourceTemplate, so that the
// server's own paging, capabilities and coalesced list_changed apply; the
// registered handlers are only a fallback. Each tools/call, prompts/get,
// resources/read and completion/complete is parsed once, strictly
// (target.go), and tracing, personas, rate limits, audit and forwarding all
// use that one value. A receiving middleware (forward.go) answers the
// catalog's names before the server's handlers run, forwarding what was
// parsed and returning the upstream's result bytes as they are (no decoding and re-encoding of content or structuredContent,
// no output validation: the upstream is the authority on its own tools).
// Tasks are not passed through: tools are served without taskSupport and
// a call is forwarded as an ordinary call.
type Gateway struct {
	opts    options
	srv     *server.Server
	metrics *metrics    // metrics.go
	inputs  parkedCalls // calls waiting for a 2026-07-28 client's answer (inputs.go)

	mu      sync.Mutex // guards naming, ups, closing, reloads
	naming  Naming
	ups     []*upstream // config order
	closing bool
	calls   callCount // downstream calls being forwarded
	bg      sync.WaitGroup
	done    chan struct{} // closed by Close: retiring upstreams stop waiting

	reloadMu sync.Mutex // one Reload (or Close) at a time

	catMu sync.Mutex              // serialises rebuilds
	cat   atomic.Pointer[catalog] // what is registered and routed now

	trust atomic.Pointer[trust] // personas, limits, enrichment (trust.go)
}

// upstreamName is the rule for an upstream's name, compiled on first use.
var upstreamName = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[a-z0-9-]{1,32}$`) })

// validate checks a config without connecting anything.
func validate(cfg Config) error {
	seen := map[string]bool{}
	for i, u := range cfg.Upstreams {
		if !upstreamName().MatchString(u.Name) {
			return fmt.Errorf("gateway: upstream %d: name %q must match [a-z0-9-]{1,32}", i, u.Name)
		}
		if seen[u.Name] {
			return fmt.Errorf("gateway: upstream name %q appears twice", u.Name)
		}
		seen[u.Name] = true
		n := 0
		if len(u.Command) > 0 {
			n++
			if u.Command[0] == "" {
				return fmt.Errorf("gateway: upstream %q: empty command", u.Name)
			}
		}
		if u.URL != "" {
			n++
		}
		if u.Server != nil {
			n++
		}
		if n != 1 {
			return fmt.Errorf("gateway: upstream %q: exactly one of Command, URL and Server must be set (%d are)", u.Name, n)
		}
		if u.Timeout < 0 {
			return fmt.Errorf("gateway: upstream %q: negative timeout", u.Name)
		}
		if err := u.URLTransport.check(u.URL != ""); err != nil {
			return fmt.Errorf("gateway: upstream %q: %w", u.Name, err)
		}
		if u.Sessions != "" && u.Sessions != SessionsShared && u.Sessions != SessionsPerClient {
			return fmt.Errorf("gateway: upstream %q: sessions %q: want %q or %q", u.Name, u.Sessions, SessionsShared, SessionsPerClient)
		}
		if err := checkCallerSettings(u); err != nil {
			return fmt.Errorf("gateway: upstream %q: %w", u.Name, err)
		}
	}
	if sep := cfg.Naming.Separator; sep != "" && !mcpNameOK("a"+sep+"b") {
		return fmt.Errorf("gateway: separator %q has characters a tool name may not (A-Za-z0-9_.-)", sep)
	}
	targets := map[string]string{}
	for from, to := range cfg.Naming.Rename {
		if !mcpNameOK(to) {
			return fmt.Errorf("gateway: rename of %q to %q: not a valid MCP tool name (1-128 of A-Za-z0-9_.-)", from, to)
		}
		if other, dup := targets[to]; dup {
			a, b := min(from, other), max(from, other)
			return fmt.Errorf("gateway: %q and %q are both renamed to %q", a, b, to)
		}
		targets[to] = from
	}
	return nil
}

// New starts a gateway for cfg: it connects every upstream (waiting up to
// the start timeout, Limits.StartTimeout, for each first attempt; an upstream
// that cannot be reached does not stop the gateway, it keeps being retried)
// and registers their merged catalog. A name collision among the upstreams
// that are ready is an error naming both sources, and so is an invalid
// config. Close the gateway when done.
func New(cfg Config, opts ...Option) (*Gateway, error) {
	if err := validate(cfg); err != nil {
		return nil, err
	}
	g := &Gateway{opts: newOptions(opts), naming: cfg.Naming, done: make(chan struct{})}
	g.inputs.limits = g.opts.limits.Inputs
	g.cat.Store(newCatalog())
	g.setTrust(cfg)
	// Tools, prompts and resources (with listChanged) are declared from
	// the start, whatever the upstreams serve yet; completions too
	// (complete.go).
	sopts := append([]server.Option{server.WithLogger(g.opts.logger), server.WithListFilter(g.listFilter),
		server.WithCapabilities(server.FeatureTools, server.FeaturePrompts, server.FeatureResources),
		server.WithMiddleware(g.traceMiddleware(), g.trustMiddleware, g.middleware)}, g.opts.serverOpts...)
	g.srv = server.New(g.opts.info, sopts...)
	g.metrics = newMetrics(g)
	if err := g.declareCompletions(); err != nil {
		return nil, fmt.Errorf("gateway: %w", err)
	}
	ups := make([]*upstream, len(cfg.Upstreams))
	for i, spec := range cfg.Upstreams {
		ups[i] = newUpstream(g, spec)
	}
	g.start(ups)
	if _, errs := merge(ups, cfg.Naming, nil, func(string, ...any) {}); len(errs) > 0 {
		for _, u := range ups {
			u.stop()
		}
		return nil, errors.Join(errs...)
	}
	g.mu.Lock()
	g.ups = ups
	g.mu.Unlock()
	g.rebuild()
	return g, nil
}

// start runs ups' supervisors and waits for their first attempts.
func (g *Gateway) start(ups []*upstream) {
	for _, u := range ups {
		go u.run()
	}
	deadline := time.NewTimer(g.opts.limits.StartTimeout)
	defer deadline.Stop()
	for _, u := range ups {
		select {
		case <-u.first:
		case <-deadline.C:
			return
		}
	}
}

// Server returns the downstream server: serve it with
// streamable.NewHandler (both eras), stdio.ServeStdio or memory.Serve.
func (g *Gateway) Server() *server.Server { return g.srv }

// Handler returns a Streamable HTTP handler for the gateway's server.
func (g *Gateway) Handler(opts ...streamable.HandlerOption) http.Handler {
	return streamable.NewHandler(g.srv, opts...)
}

// upstreams is the running configuration's upstreams, in config order; a
// reload replaces the slice rather than changing it, so it may be read
// unlocked.
func (g *Gateway) upstreams() []*upstream {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.ups
}

// Upstreams reports every upstream's state, in config order.
func (g *Gateway) Upstreams() []UpstreamStatus {
	ups := g.upstreams()
	out := make([]UpstreamStatus, len(ups))
	for i, u := range ups {
		out[i] = u.status()
	}
	return out
}

// rebuild merges the current upstreams' lists and brings the server's
// registrations in line. Collisions at runtime leave the newcomer out.
func (g *Gateway) rebuild() {
	g.catMu.Lock()
	defer g.catMu.Unlock()
	g.mu.Lock()
	ups, naming := g.ups, g.naming
	g.mu.Unlock()
	old := g.cat.Load()
	cat, errs := merge(ups, naming, old, g.opts.logger.Warn)
	widenSchemas(cat, g.trust.Load().enrich)
	for _, err := range errs {
		g.opts.logger.Warn("left out of the catalog", "error", err)
	}
	g.apply(old, cat)
}

// Reload applies a new config: upstreams added are connected (up to the
// start timeout), removed ones closed once their calls in flight end,
// changed ones (any field differs) replaced; unchanged ones keep their
// sessions and calls. An invalid config, or one whose catalog would have
// a collision, returns an error and the running config stays.
func (g *Gateway) Reload(cfg Config) error {
	if err := validate(cfg); err != nil {
		return err
	}
	g.reloadMu.Lock()
	defer g.reloadMu.Unlock()
	g.mu.Lock()
	if g.closing {
		g.mu.Unlock()
		return errors.New("gateway: closed")
	}
	current := map[string]*upstream{}
	for _, u := range g.ups {
		current[u.spec.Name] = u
	}
	g.mu.Unlock()
	next := make([]*upstream, len(cfg.Upstreams))
	var started []*upstream
	kept := map[*upstream]bool{}
	for i, spec := range cfg.Upstreams {
		if u, ok := current[spec.Name]; ok && sameSpec(u.spec, spec) {
			next[i] = u
			kept[u] = true
			continue
		}
		next[i] = newUpstream(g, spec)
		started = append(started, next[i])
	}
	g.start(started)
	g.mu.Lock()
	sameNaming := reflect.DeepEqual(g.naming, cfg.Naming)
	g.mu.Unlock()
	if errs := reloadCollisions(next, cfg.Naming, kept, sameNaming); len(errs) > 0 {
		for _, u := range started {
			u.stop()
		}
		return errors.Join(errs...)
	}
	g.mu.Lock()
	old := g.ups
	g.ups, g.naming = next, cfg.Naming
	g.mu.Unlock()
	g.setTrust(cfg)
	g.rebuild()
	for _, u := range old {
		if !kept[u] {
			g.retire(u)
		}
	}
	return nil
}

// reloadCollisions are the collisions that make a Reload fail: all of
// them when the naming changed; otherwise those involving an upstream
// added or changed (a collision between two kept upstreams arose at
// runtime, where it is tolerated, and is not the new config's doing).
func reloadCollisions(next []*upstream, naming Naming, kept map[*upstream]bool, sameNaming bool) []error {
	_, errs := merge(next, naming, nil, func(string, ...any) {})
	if !sameNaming {
		return errs
	}
	keptNames := map[string]bool{}
	for u := range kept {
		keptNames[u.spec.Name] = true
	}
	var out []error
	for _, err := range errs {
		var ce *CollisionError
		if errors.As(err, &ce) && keptNames[ce.Upstream] && keptNames[ce.FirstUpstream] {
			continue
		}
		out = append(out, err)
	}
	return out
}

// retire closes a removed upstream once its calls in flight are over (or
// after its timeout).
func (g *Gateway) retire(u *upstream) {
	g.bg.Add(1)
	go func() {
		defer g.bg.Done()
		t := time.NewTimer(u.timeout())
		defer t.Stop()
		select {
		case <-u.drained():
		case <-t.C:
		case <-g.done:
		}
		u.stop()
		g.forget(u.spec.Name)
	}()
}

func sameSpec(a, b Upstream) bool {
	if a.Name != b.Name || a.URL != b.URL || a.URLTransport != b.URLTransport || a.Dir != b.Dir || a.Timeout != b.Timeout || a.Server != b.Server || a.MaxMessageSize != b.MaxMessageSize ||
		a.Sessions != b.Sessions || a.MaxSessions != b.MaxSessions || a.IdleTimeout != b.IdleTimeout || !sameAuth(a.Auth, b.Auth) ||
		len(a.Command) != len(b.Command) || len(a.Env) != len(b.Env) || len(a.Header) != len(b.Header) ||
		!reflect.DeepEqual(a.TokenExchange, b.TokenExchange) || !reflect.DeepEqual(a.Tools, b.Tools) {
		return false
	}
	for i := range a.Command {
		if a.Command[i] != b.Command[i] {
			return false
		}
	}
	for k, v := range a.Env {
		if w, ok := b.Env[k]; !ok || v != w {
			return false
		}
	}
	for k, v := range a.Header {
		w := b.Header[k]
		if len(v) != len(w) {
			return false
		}
		for i := range v {
			if v[i] != w[i] {
				return false
			}
		}
	}
	return true
}

// sameAuth reports whether two upstream authorizers are the same one
// (values of a type that cannot be compared never are).
func sameAuth(a, b client.HTTPAuth) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	if t := reflect.TypeOf(a); t != reflect.TypeOf(b) || !t.Comparable() {
		return false
	}
	return a == b
}

// Close stops taking calls, waits for those in flight until ctx ends, then
// closes every upstream (a stdio child: stdin closed, SIGTERM, SIGKILL).
// It returns ctx's error when calls were still running.
func (g *Gateway) Close(ctx context.Context) error {
	g.reloadMu.Lock()
	defer g.reloadMu.Unlock()
	g.mu.Lock()
	if g.closing {
		g.mu.Unlock()
		return nil
	}
	g.closing = true
	var wait <-chan struct{}
	if g.calls.n > 0 {
		wait = g.calls.drained()
	}
	ups := g.ups
	g.mu.Unlock()
	// Calls parked for their callers' input wait for no one now: their
	// questions are answered with an error, so that they end.
	g.inputs.endAll(errClosing)
	var err error
	if wait != nil {
		select {
		case <-wait:
		case <-ctx.Done():
			err = ctx.Err()
		}
	}
	// The gateway's own tasks end now (their upstream tasks are cancelled
	// while the sessions are still open).
	if serr := g.srv.Shutdown(ctx); serr != nil && err == nil {
		err = serr
	}
	close(g.done)
	for _, u := range ups {
		u.cancel()
	}
	for _, u := range ups {
		<-u.exited
		if u.hc != nil {
			u.hc.CloseIdleConnections() // nothing more is sent on them
		}
	}
	g.bg.Wait()
	return err
}

// enter counts a downstream call; false once closing.
func (g *Gateway) enter() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.closing {
		return false
	}
	g.calls.add()
	return true
}

func (g *Gateway) leave() {
	g.mu.Lock()
	g.calls.done()
	g.mu.Unlock()
}

// callCount counts calls in flight, for a Close or a Reload that waits
// until none is left; the mutex of the gateway or upstream that holds it
// guards it.
type callCount struct {
	n    int
	idle chan struct{} // closed when n drops to 0 (nil when nobody waits)
}

func (c *callCount) add() { c.n++ }

func (c *callCount) done() {
	c.n--
	if c.n == 0 && c.idle != nil {
		close(c.idle)
		c.idle = nil
	}
}

// drained returns a channel closed once no call is in flight.
func (c *callCount) drained() <-chan struct{} {
	if c.n == 0 {
		ch := make(chan struct{})
		close(ch)
		return ch
	}
	if c.idle == nil {
		c.idle = make(chan struct{})
	}
	return c.idle
}
