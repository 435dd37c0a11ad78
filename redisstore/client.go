package redisstore

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
)

// ErrClosed is what Err reports after Close.
var ErrClosed = errors.New("redisstore: client is closed")

// redacted replaces the URL's password in errors and logs: the marker the
// audit trail uses for what it withholds (audit.Redacted), so one search
// finds both.
const redacted = "[redacted]"

// Client is a pool of connections to one Redis server, shared by the stores
// made from it. Every operation has a deadline (Limits.CommandTimeout), and Healthy
// tells whether Redis answers, so that a replica can refuse new sessions
// (503) while Redis is down. It is safe for concurrent use.
type Client struct {
	rdb     *redis.Client
	prefix  string
	timeout time.Duration
	log     *slog.Logger
	secrets []string // the URL's password as written and decoded: scrubbed from every error

	mu      sync.Mutex // serialises health changes, so their log lines come in order
	healthy atomic.Bool
	err     atomic.Pointer[error] // why Redis is unavailable; nil while healthy

	stop      chan struct{}
	done      chan struct{} // closed when the health check has returned
	closeOnce sync.Once
	closeErr  error
}

// Open connects to the Redis server at rawURL (redis://[user:password@]host:port/db
// or rediss:// for TLS, with go-redis's query parameters) and checks it with
// PING within ctx and the client's timeout. Errors never hold the URL's
// password. Close the client when done.
func Open(ctx context.Context, rawURL string, opts ...Option) (*Client, error) {
	cfg := newClientConfig(opts)
	ro, safeURL, secrets, err := parseURL(rawURL)
	if err != nil {
		return nil, err
	}
	switch {
	case cfg.poolSize > 0:
		ro.PoolSize = cfg.poolSize
	case ro.PoolSize <= 0:
		ro.PoolSize = DefaultPoolSize
	}
	// Each operation carries its own deadline (cfg.timeout); the socket and
	// pool bounds only need to stay within it.
	ro.ContextTimeoutEnabled = true
	for _, d := range []*time.Duration{&ro.DialTimeout, &ro.ReadTimeout, &ro.WriteTimeout, &ro.PoolTimeout} {
		if *d <= 0 || *d > cfg.timeout {
			*d = cfg.timeout
		}
	}
	// No retries: a write whose reply was lost would otherwise apply twice
	// (an event appended twice). The caller sees the error instead.
	ro.MaxRetries = -1
	// No CLIENT SETINFO round trips on every new connection.
	ro.DisableIdentity = true

	c := &Client{
		rdb:     redis.NewClient(ro),
		prefix:  cfg.prefix,
		timeout: cfg.timeout,
		log:     cfg.logger,
		secrets: secrets,
		stop:    make(chan struct{}),
		done:    make(chan struct{}),
	}
	pctx, cancel := context.WithTimeout(ctx, cfg.timeout)
	err = c.rdb.Ping(pctx).Err()
	cancel()
	if err != nil {
		c.rdb.Close()
		return nil, fmt.Errorf("redisstore: connecting to %s: %w", safeURL, c.scrub(err))
	}
	c.healthy.Store(true)
	go c.watch(cfg.healthInterval)
	return c, nil
}

// parseURL parses a redis:// or rediss:// URL into go-redis options. It
// returns the URL with its password redacted, for messages, and the
// password in the forms it may take in an error (as written, decoded).
func parseURL(raw string) (ro *redis.Options, safe string, secrets []string, err error) {
	u, err := url.Parse(raw)
	if err != nil {
		// url.Parse's error quotes the URL, and may quote part of the
		// password: report the error of the URL with its user info cut.
		cut := cutUserinfo(raw)
		if _, err := url.Parse(cut); err != nil {
			return nil, "", nil, fmt.Errorf("redisstore: invalid Redis URL: %v", err)
		}
		return nil, "", nil, fmt.Errorf("redisstore: invalid Redis URL %q: bad user or password", cut)
	}
	if u.User != nil {
		if p, ok := u.User.Password(); ok && p != "" {
			secrets = append(secrets, p)
			if i := strings.Index(raw, "://"); i >= 0 {
				auth := raw[i+3:]
				if j := strings.IndexAny(auth, "/?#"); j >= 0 {
					auth = auth[:j]
				}
				if j := strings.LastIndexByte(auth, '@'); j >= 0 {
					if _, written, ok := strings.Cut(auth[:j], ":"); ok && written != p && written != "" {
						secrets = append(secrets, written)
					}
				}
			}
		}
	}
	// The password may show elsewhere in the URL too (as the user name, in
	// a parameter): scrub it from the whole message.
	safe = scrubString(secrets, u.Redacted())
	if u.Scheme != "redis" && u.Scheme != "rediss" {
		return nil, "", nil, fmt.Errorf("redisstore: Redis URL %s: the scheme must be redis or rediss", safe)
	}
	ro, err = redis.ParseURL(raw)
	if err != nil {
		return nil, "", nil, fmt.Errorf("redisstore: invalid Redis URL %s: %s", safe, scrubString(secrets, err.Error()))
	}
	return ro, safe, secrets, nil
}

// cutUserinfo replaces everything between the scheme and the URL's last "@"
// with redacted: whatever the password holds, it is before that "@".
func cutUserinfo(raw string) string {
	at := strings.LastIndexByte(raw, '@')
	if at < 0 {
		return raw
	}
	start := 0
	if i := strings.Index(raw, "://"); i >= 0 && i < at {
		start = i + 3
	}
	return raw[:start] + redacted + raw[at:]
}

// scrubString replaces every secret in s with redacted.
func scrubString(secrets []string, s string) string {
	for _, sec := range secrets {
		s = strings.ReplaceAll(s, sec, redacted)
	}
	return s
}

// redactedError is an error whose message had the password cut out. It
// matches what the original matches (errors.Is) without exposing it.
type redactedError struct {
	msg string
	err error
}

func (e *redactedError) Error() string        { return e.msg }
func (e *redactedError) Is(target error) bool { return errors.Is(e.err, target) }

// scrub returns err, or a copy of it without the password if it holds it.
func (c *Client) scrub(err error) error {
	if err == nil {
		return nil
	}
	msg := err.Error()
	if out := scrubString(c.secrets, msg); out != msg {
		return &redactedError{msg: out, err: err}
	}
	return err
}

// Ping checks that Redis answers, within ctx and the client's timeout, and
// updates the health view.
func (c *Client) Ping(ctx context.Context) error {
	octx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	return c.observe(ctx, c.rdb.Ping(octx).Err())
}

// Healthy reports whether Redis answered the latest operation or health
// check: false from a failure that says Redis is unavailable (unreachable,
// timed out, loading, read-only, refusing our credentials) until the next
// success, and after Close.
func (c *Client) Healthy() bool { return c.healthy.Load() }

// Err returns why Redis is unavailable, or nil while Healthy.
func (c *Client) Err() error {
	if p := c.err.Load(); p != nil {
		return *p
	}
	return nil
}

// Close stops the health check and closes the connections. Operations after
// Close fail, and Healthy is false.
func (c *Client) Close() error {
	c.closeOnce.Do(func() {
		close(c.stop)
		<-c.done
		c.mu.Lock()
		err := ErrClosed
		c.err.Store(&err)
		c.healthy.Store(false)
		c.mu.Unlock()
		c.closeErr = c.rdb.Close()
	})
	return c.closeErr
}

// watch pings Redis every interval until Close, so the health view follows
// Redis even when no request runs.
func (c *Client) watch(interval time.Duration) {
	defer close(c.done)
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-c.stop:
			return
		case <-t.C:
		}
		ctx, cancel := context.WithTimeout(context.Background(), c.timeout)
		err := c.rdb.Ping(ctx).Err()
		cancel()
		select {
		case <-c.stop:
			return // Close: the error is ours, not Redis's
		default:
		}
		c.observe(context.Background(), err)
	}
}

// opContext returns the context of one operation: the client's timeout.
func (c *Client) opContext() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), c.timeout)
}

// observe updates the health view from the outcome of an operation run
// within parent, and returns err without the password. A caller cancelling
// parent says nothing about Redis.
func (c *Client) observe(parent context.Context, err error) error {
	if err == nil || errors.Is(err, redis.Nil) {
		if !c.healthy.Load() {
			c.setHealth(nil)
		}
		return err
	}
	down := unavailable(err)
	err = c.scrub(err)
	if parent.Err() == nil && down {
		c.setHealth(err)
	}
	return err
}

// unavailable tells whether err means Redis cannot serve us: no answer at
// all, or a reply saying it cannot serve now or will not serve us. Other
// error replies (a bad command, a script error) come from a working Redis.
func unavailable(err error) bool {
	if errors.Is(err, redis.ErrClosed) {
		return true
	}
	var rerr redis.Error
	if !errors.As(err, &rerr) {
		return true // network, timeout, closed connection
	}
	for _, p := range []string{
		"LOADING", "MASTERDOWN", "READONLY", "BUSY", "CLUSTERDOWN", "TRYAGAIN", // cannot serve now
		"NOAUTH", "WRONGPASS", "NOPERM", "AUTH", "invalid password", // will not serve us
	} {
		if redis.HasErrorPrefix(err, p) {
			return true
		}
	}
	return false
}

// setHealth records err (nil: healthy) and logs a change.
func (c *Client) setHealth(err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	select {
	case <-c.stop:
		return // closed: stays unhealthy with ErrClosed
	default:
	}
	was := c.healthy.Load()
	if err == nil {
		c.err.Store(nil)
	} else {
		c.err.Store(&err)
	}
	c.healthy.Store(err == nil)
	switch {
	case was && err != nil:
		c.log.Warn("redis unavailable", "err", err.Error())
	case !was && err == nil:
		c.log.Info("redis available again")
	}
}
