package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/toolwire/toolwire/client"
	"github.com/toolwire/toolwire/internal/wirejson"
	"github.com/toolwire/toolwire/jsonrpc"
	"github.com/toolwire/toolwire/mcp"
	"github.com/toolwire/toolwire/server"
)

// Per-client upstream sessions (Upstream.Sessions SessionsPerClient).
//
// A shared upstream has one session, supervised by upstream.run, that every
// call uses. A per-client upstream has a pool of sessions, one for each
// caller: a 2025-11-25 downstream session, or, for stateless 2026-07-28
// requests, the caller's identity (auth.Principal.Key: the OAuth issuer
// and subject or the API key; anonymous callers share one). A caller's
// session is started on its first forwarded request (for a Command, a child
// process of its own), declaring that caller's capabilities and log level;
// the upstream's requests (roots/list, sampling, elicitation) and log
// messages go to that caller only. The supervisor still connects once, to
// list the catalog, and closes that session at once (park): the catalog is
// what it listed.
//
// The pool holds at most MaxSessions sessions: a new caller takes the place
// of the least recently used idle one (closed first, its child reaped, so
// the processes never outnumber the bound); when every one is busy the
// caller's request fails with a *SessionLimitError. A session unused for
// IdleTimeout is closed, and so is one whose downstream session closes.

// SessionLimitError is why a per-client upstream could not serve a new
// caller: all its MaxSessions sessions are open and busy.
type SessionLimitError struct {
	Upstream    string
	MaxSessions int
}

func (e *SessionLimitError) Error() string {
	return fmt.Sprintf("upstream %q: per-client session limit (max_sessions %d) reached", e.Upstream, e.MaxSessions)
}

// clientKey is whose a per-client session is: a 2025-era downstream
// session, or a 2026-07-28 caller's identity.
type clientKey struct {
	ss     *server.Session
	caller string
}

// keyOf is the caller of req (nil, a call from inside the process, is the
// anonymous caller).
func keyOf(req *server.Request) clientKey {
	if req == nil {
		return clientKey{}
	}
	if ss := req.Session(); ss != nil {
		return clientKey{ss: ss}
	}
	return clientKey{caller: req.Principal().Key()}
}

// clientPool is a per-client upstream's sessions.
type clientPool struct {
	u    *upstream
	max  int
	idle time.Duration

	mu       sync.Mutex
	sessions map[clientKey]*clientSession
	failed   map[clientKey]*startFailure // callers whose session failed to start, at most max
	closed   bool

	open    atomic.Int64  // sessions connected and not yet closed
	started atomic.Uint64 // sessions connected
	reaped  atomic.Uint64 // sessions closed by the pool
	wg      sync.WaitGroup
}

// clientSession is one caller's session to the upstream.
type clientSession struct {
	p     *clientPool
	key   clientKey
	ready chan struct{} // closed once connecting has ended
	c     *client.Client
	err   error                      // why connecting failed; c is nil then
	stop  chan struct{}              // closed when it leaves the pool
	out   chan func(context.Context) // to a 2025-era owner outside its calls: log messages, notifications

	// guarded by p.mu
	uses  int // requests using it now
	last  time.Time
	timer *time.Timer
	gone  bool

	mu     sync.Mutex
	active map[*forwarded]int  // downstream calls in flight on it
	level  mcp.LoggingLevel    // the level last set on the upstream
	subs   map[string]struct{} // URIs its caller subscribed to through it
}

func newClientPool(u *upstream) *clientPool {
	p := &clientPool{u: u, max: u.spec.MaxSessions, idle: u.spec.IdleTimeout, sessions: map[clientKey]*clientSession{},
		failed: map[clientKey]*startFailure{}}
	if p.max <= 0 {
		p.max = DefaultMaxSessions
	}
	if p.idle <= 0 {
		p.idle = DefaultIdleTimeout
	}
	return p
}

// acquire returns req's caller's session, started if it has none; release
// it when done.
func (p *clientPool) acquire(ctx context.Context, req *server.Request) (*clientSession, error) {
	key := keyOf(req)
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return nil, fmt.Errorf("upstream %q was removed", p.u.spec.Name)
	}
	cs := p.sessions[key]
	if f := p.failed[key]; cs == nil && f != nil {
		if wait := time.Until(f.next); wait > 0 {
			p.mu.Unlock()
			return nil, &NotReadyError{Upstream: p.u.spec.Name, State: StateStarting, RetryAfter: wait, Err: f.err}
		}
	}
	if cs == nil {
		var victim *clientSession
		if len(p.sessions) >= p.max {
			if victim = p.lruIdleLocked(); victim == nil {
				p.mu.Unlock()
				return nil, &SessionLimitError{Upstream: p.u.spec.Name, MaxSessions: p.max}
			}
			p.removeLocked(victim)
		}
		cs = &clientSession{p: p, key: key, ready: make(chan struct{}), stop: make(chan struct{})}
		p.sessions[key] = cs
		// What the connection takes of the caller is read now, while its
		// request is served.
		caps, level := callerCapabilities(req), p.u.g.opts.logLevel
		if req != nil && req.LogLevel() != "" {
			level = req.LogLevel()
		}
		p.wg.Add(1)
		go p.start(cs, caps, level, victim)
	}
	cs.uses++
	if cs.timer != nil {
		cs.timer.Stop()
		cs.timer = nil
	}
	p.mu.Unlock()
	select {
	case <-cs.ready:
	case <-ctx.Done():
		p.release(cs)
		return nil, ctx.Err()
	}
	if cs.err != nil {
		p.release(cs)
		return nil, cs.err
	}
	return cs, nil
}

// release ends one use of cs; the last one starts its idle time.
func (p *clientPool) release(cs *clientSession) {
	p.mu.Lock()
	defer p.mu.Unlock()
	cs.uses--
	if cs.uses > 0 || cs.gone {
		return
	}
	cs.last = time.Now()
	cs.timer = time.AfterFunc(p.idle, func() { p.expire(cs) })
}

// expire closes cs if it is still idle.
func (p *clientPool) expire(cs *clientSession) {
	p.mu.Lock()
	if cs.gone || cs.uses > 0 || time.Since(cs.last) < p.idle || cs.subscribed() {
		p.mu.Unlock()
		return
	}
	p.removeLocked(cs)
	p.mu.Unlock()
	cs.close()
}

// lruIdleLocked is the least recently used session no request uses, nil
// when every one is busy (or still connecting).
func (p *clientPool) lruIdleLocked() *clientSession {
	var lru *clientSession
	for _, cs := range p.sessions {
		if cs.uses == 0 && !cs.subscribed() && (lru == nil || cs.last.Before(lru.last)) {
			lru = cs
		}
	}
	return lru
}

// removeLocked takes cs out of the pool; the caller closes it.
func (p *clientPool) removeLocked(cs *clientSession) {
	if cs.gone {
		return
	}
	cs.gone = true
	if p.sessions[cs.key] == cs {
		delete(p.sessions, cs.key)
	}
	if cs.timer != nil {
		cs.timer.Stop()
		cs.timer = nil
	}
	close(cs.stop)
}

// start connects cs, once victim (the session whose place it takes) is
// closed, so that the children never outnumber the bound.
func (p *clientPool) start(cs *clientSession, caps mcp.ClientCapabilities, level mcp.LoggingLevel, victim *clientSession) {
	defer p.wg.Done()
	if victim != nil {
		victim.close()
	}
	c, err := cs.connect(caps, level)
	cs.c, cs.err = c, err
	if err != nil {
		p.u.log.Warn("cannot open a per-client session", "error", err)
		p.mu.Lock()
		p.removeLocked(cs)
		p.failedLocked(cs.key, err)
		p.mu.Unlock()
		close(cs.ready)
		return
	}
	p.mu.Lock()
	delete(p.failed, cs.key)
	p.mu.Unlock()
	p.open.Add(1)
	p.started.Add(1)
	close(cs.ready)
	p.wg.Add(1)
	go cs.watch()
}

// close ends cs's session (a child: stdin closed, then signalled, and
// waited for). It runs once cs has left the pool.
func (cs *clientSession) close() {
	<-cs.ready
	if cs.c == nil {
		return
	}
	_ = cs.c.Close()
	cs.p.open.Add(-1)
	cs.p.reaped.Add(1)
}

// watch serves cs until it leaves the pool: it passes log messages to a
// 2025-era owner outside its calls, and closes cs when the owner's
// session closes or the upstream session is lost.
func (cs *clientSession) watch() {
	p := cs.p
	defer p.wg.Done()
	var ownerDone <-chan struct{}
	if cs.key.ss != nil {
		ownerDone = cs.key.ss.Done()
	}
	for {
		select {
		case <-cs.stop:
			return
		case send := <-cs.out:
			ctx, cancel := context.WithTimeout(p.u.ctx, p.u.timeout())
			send(ctx)
			cancel()
			continue
		case <-ownerDone:
		case <-cs.c.Done():
			p.u.log.Info("a per-client session was lost", "error", cs.c.Err())
		}
		p.mu.Lock()
		gone := cs.gone
		p.removeLocked(cs)
		p.mu.Unlock()
		if !gone {
			cs.close()
		}
		return
	}
}

// closeAll closes every session and waits for them; later acquires fail.
// It runs when the upstream stops (nil-safe: a shared upstream has no
// pool).
func (p *clientPool) closeAll() {
	if p == nil {
		return
	}
	p.mu.Lock()
	p.closed = true
	all := make([]*clientSession, 0, len(p.sessions))
	for _, cs := range p.sessions {
		all = append(all, cs)
		p.removeLocked(cs)
	}
	p.mu.Unlock()
	var wg sync.WaitGroup
	for _, cs := range all {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cs.close()
		}()
	}
	wg.Wait()
	p.wg.Wait()
}

// park is the supervisor's part for a per-client upstream once the catalog
// is listed: the listing session is closed (its child reaped) and the
// upstream waits to be stopped. The sessions that serve calls are the
// pool's.
func (p *clientPool) park(c *client.Client, sub *client.Subscription) error {
	if sub != nil {
		_ = sub.Close()
	}
	_ = c.Close()
	<-p.u.ctx.Done()
	return nil
}

// connect opens cs's session as its caller would: with the caller's
// capabilities (callerCapabilities) and log level.
func (cs *clientSession) connect(caps mcp.ClientCapabilities, level mcp.LoggingLevel) (*client.Client, error) {
	u := cs.p.u
	ctx, cancel := context.WithTimeout(u.ctx, u.g.opts.limits.StartTimeout)
	defer cancel()
	t, err := u.transport(u.ctx)
	if err != nil {
		return nil, err
	}
	if cs.key.ss != nil {
		cs.out = make(chan func(context.Context), 64)
	}
	opts := append(u.clientOptions(),
		client.WithNotificationHandler(cs.notification),
		client.WithLogHandler(cs.log),
		client.WithCapabilities(caps),
		client.WithReceivingMiddleware(cs.receiving),
		client.WithLimits(client.Limits{MaxServerRequests: client.DefaultMaxServerRequests + u.g.opts.limits.Inputs.Pending}),
	)
	c, err := client.Connect(withReplaySafe(ctx), t, opts...)
	if err != nil {
		return nil, err
	}
	cs.c = c
	cs.setLevel(ctx, level)
	return c, nil
}

// callerCapabilities are the client capabilities a per-client session
// declares: those of the gateway's (upstreamCapabilities) that the caller
// declared too, so that the upstream sees what its caller can answer.
func callerCapabilities(req *server.Request) mcp.ClientCapabilities {
	if req == nil {
		return mcp.ClientCapabilities{}
	}
	have := req.Peer.ClientCapabilities
	var caps mcp.ClientCapabilities
	if have.Roots != nil {
		caps.Roots = upstreamCapabilities.Roots
	}
	if have.Sampling != nil {
		caps.Sampling = have.Sampling
	}
	if have.Elicitation != nil {
		caps.Elicitation = have.Elicitation
	}
	return caps
}

// setLevel sets the upstream's log level for cs's caller, when the level
// changes and the upstream logs.
func (cs *clientSession) setLevel(ctx context.Context, level mcp.LoggingLevel) {
	c := cs.c
	if level == "" || c == nil || c.ServerCapabilities().Logging == nil && c.Era() != mcp.EraModern {
		return
	}
	cs.mu.Lock()
	same := cs.level == level
	cs.level = level
	cs.mu.Unlock()
	if same {
		return
	}
	if err := c.SetLogLevel(ctx, level); err != nil {
		cs.p.u.log.Debug("the upstream did not take the caller's log level", "level", string(level), "error", err)
	}
}

// track registers f as a call in flight on cs; the returned func forgets
// it.
func (cs *clientSession) track(f *forwarded) func() {
	cs.mu.Lock()
	if cs.active == nil {
		cs.active = map[*forwarded]int{}
	}
	cs.active[f]++
	cs.mu.Unlock()
	return func() {
		cs.mu.Lock()
		if cs.active[f]--; cs.active[f] <= 0 {
			delete(cs.active, f)
		}
		cs.mu.Unlock()
	}
}

// call is the call an upstream request or log message on cs belongs to:
// the one ctx names, else the only one in flight.
func (cs *clientSession) call(ctx context.Context) *forwarded {
	if f, ok := ctx.Value(forwardedKey{}).(*forwarded); ok && f.up == cs.p.u {
		return f
	}
	cs.mu.Lock()
	defer cs.mu.Unlock()
	if len(cs.active) == 1 {
		for f := range cs.active {
			return f
		}
	}
	return nil
}

// receiving answers the upstream's roots, sampling and elicitation
// requests by asking cs's caller: during its call on that call's stream,
// else (a 2025-era caller) on its session.
func (cs *clientSession) receiving(next jsonrpc.MethodHandler) jsonrpc.MethodHandler {
	return func(ctx context.Context, req *jsonrpc.Request) (any, error) {
		if !inputMethods[req.Method] {
			return next(ctx, req)
		}
		params := req.Params
		if len(params) == 0 {
			params = json.RawMessage(`{}`)
		}
		if f := cs.call(ctx); f != nil {
			return f.ask(ctx, req.Method, params)
		}
		ss := cs.key.ss
		if ss == nil {
			return nil, jsonrpc.NewError(jsonrpc.CodeInternalError,
				"gateway: %s from upstream %q outside a call: only a client calling through the gateway can answer it", req.Method, cs.p.u.spec.Name)
		}
		if need := map[string]string{mcp.MethodListRoots: "roots", mcp.MethodCreateMessage: "sampling", mcp.MethodElicitationCreate: "elicitation"}[req.Method]; !ss.Peer().ClientCapabilities.Has(need) {
			return nil, downstreamError(req.Method, &server.MissingCapabilityError{Method: req.Method, Capability: need})
		}
		ctx, cancel := context.WithTimeoutCause(ctx, cs.p.u.g.opts.limits.Inputs.Timeout, errInputTimeout)
		defer cancel()
		raw, err := ss.Call(ctx, req.Method, params)
		if err != nil {
			return nil, downstreamError(req.Method, err)
		}
		return raw, nil
	}
}

// log passes a log message of cs's upstream session to the gateway's
// logger and to cs's caller only: on the stream of its call in flight, else
// to its 2025-era session (dropped when 64 wait).
func (cs *clientSession) log(m client.LogMessage) {
	u := cs.p.u
	u.log.Log(context.Background(), slogLevel(m.Level), "upstream log", "logger", m.Logger, "data", string(m.Data), "per_client", true)
	if u.spec.URL == "" {
		if f := cs.call(context.Background()); f != nil {
			f.log(m)
			return
		}
	}
	if ss := cs.key.ss; ss != nil {
		cs.toOwner(func(ctx context.Context) { _ = ss.Log(ctx, m.Level, m.Logger, m.Data) })
	}
}

// toOwner queues send for cs's 2025-era caller, in order, on cs's watch
// goroutine (the client's callbacks must not block); dropped when 64 wait.
func (cs *clientSession) toOwner(send func(context.Context)) {
	if cs.out == nil {
		return
	}
	select {
	case cs.out <- send:
	default:
	}
}

// notification passes the upstream session's resource updates and list
// changes to its 2025-era caller only, as they are: they concern what that
// caller's session holds (a list change does not change the catalog every
// caller shares).
func (cs *clientSession) notification(method string, params json.RawMessage) {
	switch method {
	case mcp.NotificationResourceUpdated, mcp.NotificationToolsListChanged, mcp.NotificationPromptsListChanged, mcp.NotificationResourcesListChanged:
	default:
		return
	}
	if ss := cs.key.ss; ss != nil {
		if len(params) == 0 || string(params) == "null" {
			params = json.RawMessage(`{}`) // a list change may come without params; they go on as an object
		}
		cs.toOwner(func(ctx context.Context) { _ = ss.Notify(ctx, method, params) })
	}
}

// subscribe serves a 2025-era caller's resources/subscribe and
// resources/unsubscribe (next, the gateway's server, records it) and, for a
// resource of a per-client upstream, passes it on to the caller's session
// there (subscribe starts the session if need be), whose updates then reach
// that caller only. A session holding subscriptions is never idle: it is
// closed with its caller's session.
func (g *Gateway) subscribe(ctx context.Context, req *jsonrpc.Request, next jsonrpc.MethodHandler) (any, error) {
	res, err := next(ctx, req)
	sreq := server.RequestFrom(ctx)
	if err != nil || sreq == nil || sreq.Session() == nil {
		return res, err
	}
	var p struct {
		URI string `json:"uri"`
	}
	if wirejson.Unmarshal(req.Params, &p) != nil || p.URI == "" {
		return res, err
	}
	u := g.cat.Load().resources[p.URI]
	if u == nil || u.pool == nil {
		return res, err
	}
	var cs *clientSession
	if req.Method == mcp.MethodSubscribe {
		if cs, err = u.pool.acquire(ctx, sreq); err != nil {
			return nil, rpcError(u, err)
		}
	} else if cs = u.pool.existing(sreq); cs == nil {
		return res, nil
	}
	defer u.pool.release(cs)
	if _, err := cs.c.Call(ctx, req.Method, struct {
		URI string `json:"uri"`
	}{p.URI}, client.WithTimeout(u.timeout())); err != nil {
		return nil, rpcError(u, err)
	}
	cs.mu.Lock()
	if req.Method == mcp.MethodSubscribe {
		if cs.subs == nil {
			cs.subs = map[string]struct{}{}
		}
		cs.subs[p.URI] = struct{}{}
	} else {
		delete(cs.subs, p.URI)
	}
	cs.mu.Unlock()
	return res, nil
}

// subscribed says whether cs's caller holds subscriptions through it.
func (cs *clientSession) subscribed() bool {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	return len(cs.subs) > 0
}

// forwardPerClient is forward for a per-client upstream: f runs with the
// caller's own session.
func (g *Gateway) forwardPerClient(ctx context.Context, u *upstream, f func(context.Context, *client.Client) error) error {
	if !g.enter() {
		return errors.New("the gateway is closing")
	}
	defer g.leave()
	u.begin()
	defer u.end()
	req := server.RequestFrom(ctx)
	fw, _ := ctx.Value(forwardedKey{}).(*forwarded)
	if req == nil && fw != nil {
		// A call running apart from its request (a task): the caller is
		// the request's that started it.
		fw.mu.Lock()
		req = fw.req
		fw.mu.Unlock()
	}
	cs, err := u.pool.acquire(ctx, req)
	if err != nil {
		return err
	}
	defer u.pool.release(cs)
	if fw != nil {
		defer cs.track(fw)()
	}
	if req != nil && req.Peer.Era == mcp.EraModern {
		// A 2026-07-28 caller names its level on each request.
		cs.setLevel(ctx, req.LogLevel())
	}
	return f(ctx, cs.c)
}

// setLevel serves a 2025-era caller's logging/setLevel (next, the
// gateway's server, takes it for the session) and passes the level on to
// that caller's per-client upstream sessions.
func (g *Gateway) setLevel(ctx context.Context, req *jsonrpc.Request, next jsonrpc.MethodHandler) (any, error) {
	res, err := next(ctx, req)
	sreq := server.RequestFrom(ctx)
	if err != nil || sreq == nil || sreq.Session() == nil {
		return res, err
	}
	ss := sreq.Session()
	level := ss.LogLevel()
	for _, u := range g.upstreams() {
		if u.pool == nil {
			continue
		}
		u.pool.mu.Lock()
		cs := u.pool.sessions[clientKey{ss: ss}]
		u.pool.mu.Unlock()
		if cs == nil {
			continue
		}
		select {
		case <-cs.ready:
			cs.setLevel(ctx, level)
		default:
			// Still connecting: it takes the session's level then.
		}
	}
	return res, err
}

// existing returns req's caller's session, ready, when it has one (release it
// when done), and nil otherwise: nothing is started.
func (p *clientPool) existing(req *server.Request) *clientSession {
	p.mu.Lock()
	defer p.mu.Unlock()
	cs := p.sessions[keyOf(req)]
	if cs == nil || cs.gone {
		return nil
	}
	select {
	case <-cs.ready:
	default:
		return nil
	}
	if cs.c == nil {
		return nil
	}
	cs.uses++
	if cs.timer != nil {
		cs.timer.Stop()
		cs.timer = nil
	}
	return cs
}

// readOwn reads a resource the catalog does not list from the caller's own
// per-client sessions, in config order, the first that has it answering: a
// resource one caller's session made (a file it generated, say) is that
// caller's to read, and another caller's read of its URI finds nothing.
// ok is false when none of them has it.
func (g *Gateway) readOwn(ctx context.Context, uri string) (res any, ok bool, err error) {
	ups := g.upstreams()
	req := server.RequestFrom(ctx)
	for _, u := range ups {
		if u.pool == nil {
			continue
		}
		if !g.enter() {
			return nil, false, nil
		}
		cs := u.pool.existing(req)
		if cs == nil {
			g.leave()
			continue
		}
		start := time.Now()
		cctx, err := g.asCaller(ctx, u) // the caller's exchanged token, for an upstream with a TokenExchange
		var raw json.RawMessage
		if err == nil {
			raw, err = cs.c.Call(cctx, mcp.MethodReadResource, readParams{URI: uri}, client.WithTimeout(u.timeout()))
		}
		u.pool.release(cs)
		g.leave()
		if client.IsResourceNotFound(err) {
			continue
		}
		g.observe(ctx, u, mcp.MethodReadResource, "", outcomeOf(ctx, err), start)
		if err != nil {
			return nil, true, rpcError(u, err)
		}
		return clean(raw), true, nil
	}
	return nil, false, nil
}

// ClientSessions reports a per-client upstream's sessions: how many are
// open now, how many were started and how many closed (idle, evicted for a
// new caller, their caller gone, or lost); all zero for a shared or
// unknown upstream.
func (g *Gateway) ClientSessions(upstream string) (open int, started, reaped uint64) {
	for _, u := range g.upstreams() {
		if u.spec.Name == upstream && u.pool != nil {
			return int(u.pool.open.Load()), u.pool.started.Load(), u.pool.reaped.Load()
		}
	}
	return 0, 0, 0
}

// sessionCollector reports the per-client upstreams' sessions when
// scraped.
type sessionCollector struct{ g *Gateway }

var (
	clientSessionsDesc = prometheus.NewDesc("toolwire_gateway_upstream_client_sessions",
		"Per-client sessions open to an upstream with sessions: per_client (for a command, its child processes).",
		[]string{"upstream"}, nil)
	clientSessionsStartedDesc = prometheus.NewDesc("toolwire_gateway_upstream_client_sessions_started_total",
		"Per-client sessions started to an upstream with sessions: per_client.",
		[]string{"upstream"}, nil)
	clientSessionsReapedDesc = prometheus.NewDesc("toolwire_gateway_upstream_client_sessions_reaped_total",
		"Per-client sessions the gateway closed (idle, evicted for a new caller, their caller gone, or lost); a child is waited for.",
		[]string{"upstream"}, nil)
)

func (sessionCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- clientSessionsDesc
	ch <- clientSessionsStartedDesc
	ch <- clientSessionsReapedDesc
}

func (c sessionCollector) Collect(ch chan<- prometheus.Metric) {
	for _, u := range c.g.upstreams() {
		if u.pool == nil {
			continue
		}
		name := u.spec.Name
		ch <- prometheus.MustNewConstMetric(clientSessionsDesc, prometheus.GaugeValue, float64(u.pool.open.Load()), name)
		ch <- prometheus.MustNewConstMetric(clientSessionsStartedDesc, prometheus.CounterValue, float64(u.pool.started.Load()), name)
		ch <- prometheus.MustNewConstMetric(clientSessionsReapedDesc, prometheus.CounterValue, float64(u.pool.reaped.Load()), name)
	}
}
