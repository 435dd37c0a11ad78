package redisstore

import (
	"context"
	"errors"
	"log/slog"
	"net/url"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/toolwire/toolwire/internal/testenv"
	"github.com/toolwire/toolwire/internal/testwait"
)

// The options' defaults, what they override, and what Open sets on go-redis
// whatever the URL says: deadlines within the timeout, no retries (go-redis
// shows the -1 Open sets as 0).
func TestOpenOptions(t *testing.T) {
	srv := testenv.Redis(t)
	c := open(t, srv.URL(), nil)
	o := c.rdb.Options()
	if c.prefix != DefaultPrefix || c.timeout != DefaultTimeout || o.PoolSize != DefaultPoolSize || o.MaxRetries != 0 ||
		!o.ContextTimeoutEnabled || o.DialTimeout != DefaultTimeout || o.ReadTimeout != DefaultTimeout ||
		o.WriteTimeout != DefaultTimeout || o.PoolTimeout != DefaultTimeout || o.Addr != srv.Addr || o.DB != 0 {
		t.Errorf("defaults: prefix %q timeout %v pool %d retries %d ctx %v dial %v read %v write %v pool wait %v addr %s db %d",
			c.prefix, c.timeout, o.PoolSize, o.MaxRetries, o.ContextTimeoutEnabled, o.DialTimeout, o.ReadTimeout,
			o.WriteTimeout, o.PoolTimeout, o.Addr, o.DB)
	}
	// The URL's pool size and shorter socket timeouts are kept; longer ones
	// and retries are not.
	c = open(t, "redis://"+srv.Addr+"/3?pool_size=7&read_timeout=100ms&dial_timeout=1m&max_retries=5",
		WithPrefix(""), WithLimits(Limits{CommandTimeout: 0, HealthInterval: 0}), WithLogger(nil), WithLimits(Limits{MaxConns: 0}))
	o = c.rdb.Options()
	if c.prefix != DefaultPrefix || c.timeout != DefaultTimeout || o.PoolSize != 7 || o.ReadTimeout != 100*time.Millisecond ||
		o.DialTimeout != DefaultTimeout || o.MaxRetries != 0 || o.DB != 3 {
		t.Errorf("URL: prefix %q timeout %v pool %d read %v dial %v retries %d db %d",
			c.prefix, c.timeout, o.PoolSize, o.ReadTimeout, o.DialTimeout, o.MaxRetries, o.DB)
	}
	// Options win over the URL; a later option over an earlier one.
	c = open(t, srv.URL()+"?pool_size=7", WithLimits(Limits{MaxConns: 5, CommandTimeout: time.Second}), WithLimits(Limits{CommandTimeout: 700 * time.Millisecond}),
		WithPrefix("a:"), WithPrefix("b:"))
	o = c.rdb.Options()
	if c.prefix != "b:" || c.timeout != 700*time.Millisecond || o.PoolSize != 5 || o.ReadTimeout != 700*time.Millisecond {
		t.Errorf("options: prefix %q timeout %v pool %d read %v", c.prefix, c.timeout, o.PoolSize, o.ReadTimeout)
	}

	def := c.EventStore(nil)
	if def.lim != (eventLimits{DefaultMaxEventsPerStream, DefaultMaxBytesPerSession, DefaultEventTTL}) {
		t.Errorf("event store defaults: %+v", def.lim)
	}
	if l := c.EventStore(WithLimits(Limits{MaxEventsPerStream: 0, MaxBytesPerSession: -1, EventTTL: 0})).lim; l != def.lim {
		t.Errorf("zero and negative bounds: %+v, want the defaults", l)
	}
	if l := c.EventStore(WithLimits(Limits{MaxEventsPerStream: 1, MaxBytesPerSession: 2, EventTTL: time.Second})).lim; l != (eventLimits{1, 2, time.Second}) {
		t.Errorf("bounds: %+v", l)
	}
}

// Open fails, without hanging, on a URL it cannot use and on a server that
// is not there or does not answer.
func TestOpenFails(t *testing.T) {
	closedAddr := testenv.FreeAddr(t)
	for _, u := range []string{"", "localhost:6379", "unix:///tmp/redis.sock", "http://" + closedAddr, "redis://" + closedAddr + "/x"} {
		if c, err := Open(context.Background(), u); err == nil {
			c.Close()
			t.Errorf("Open(%q) succeeded", u)
		}
	}
	testwait.Returns(t, "Open of a closed port", func() {
		if _, err := Open(context.Background(), "redis://"+closedAddr+"/0", WithLimits(Limits{CommandTimeout: 200 * time.Millisecond})); err == nil {
			t.Error("Open of a closed port succeeded")
		}
	})
	srv := testenv.Redis(t)
	if err := syscall.Kill(srv.PID(), syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	defer syscall.Kill(srv.PID(), syscall.SIGCONT)
	testwait.Returns(t, "Open of a hung server", func() {
		_, err := Open(context.Background(), srv.URL(), WithLimits(Limits{CommandTimeout: 200 * time.Millisecond}))
		if err == nil {
			t.Error("Open of a hung server succeeded")
		}
	})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Open(ctx, srv.URL()); !errors.Is(err, context.Canceled) {
		t.Errorf("Open with a cancelled context: %v", err)
	}
}

// secretParts are pieces of testPassword that must not show either.
var secretParts = []string{testPassword, url.QueryEscape(testPassword), "s3cr3t", "Pa55"}

func checkNoSecret(t *testing.T, what, s string) {
	t.Helper()
	for _, p := range secretParts {
		if strings.Contains(s, p) {
			t.Errorf("%s shows the password (%q): %s", what, p, s)
		}
	}
}

// The URL's password appears in no error and no log line: not in URL
// errors (even where url.Parse would quote it), not in connection or
// authentication errors, not in Err, not in the health log.
func TestPasswordNeverShown(t *testing.T) {
	srv := testenv.Redis(t)
	requirePass := func() {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if _, err := srv.Do(ctx, "CONFIG", "SET", "requirepass", testPassword); err != nil {
			t.Fatal(err)
		}
	}
	requirePass()
	closedAddr := testenv.FreeAddr(t)
	pw := testPassword
	for _, u := range []string{
		"redis://user:" + pw + "@" + srv.Addr + "/0",     // wrong user
		"redis://:" + pw + "x@" + srv.Addr + "/0",        // wrong password
		"redis://:" + pw + "@" + closedAddr + "/0",       // nothing there
		"redis://:" + pw + "@" + srv.Addr + "/notadb",    // bad path
		"redis://:" + pw + "@" + srv.Addr + "/0?bogus=1", // unknown parameter
		"redis://:" + pw + "@" + srv.Addr + "/0?db=" + pw,
		"redis://:" + pw + "@" + srv.Addr + "/0?read_timeout=" + pw,
		"redis://:" + pw + "%zz@" + srv.Addr + "/0",  // bad escape in the password
		"redis://:" + pw + "@host:port/0",            // bad port
		"redis://:" + pw + "@[::1/0",                 // bad host
		"redis://:" + pw + "@" + srv.Addr + "\x7f/0", // control character
		"redis://" + pw + ":" + pw + "@" + srv.Addr,  // the password as user name too
		"rediss://:" + pw + "@" + closedAddr + "/0",  // TLS
		"http://:" + pw + "@" + srv.Addr + "/0",      // wrong scheme
		"unix://:" + pw + "@/tmp/redis.sock",         // unsupported scheme
		"redis://:" + url.QueryEscape(pw+"/?#@") + "@" + closedAddr + "/0",
		"redis://:" + pw + "/?#@" + srv.Addr + "/0", // unescaped specials in the password
		":" + pw + "@" + srv.Addr,                   // no scheme
	} {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		c, err := Open(ctx, u, WithLimits(Limits{CommandTimeout: 300 * time.Millisecond}))
		cancel()
		if err == nil {
			c.Close()
			t.Errorf("Open succeeded with a bad URL or password")
			continue
		}
		checkNoSecret(t, "Open's error", err.Error())
	}

	var logs testenv.SyncBuffer
	c := open(t, "redis://:"+pw+"@"+srv.Addr+"/0", WithLogger(slog.New(slog.NewTextHandler(&logs, nil))),
		WithLimits(Limits{CommandTimeout: upTimeout, HealthInterval: 20 * time.Millisecond}))
	s := c.EventStore()
	mustAppend(t, s, "s", "p", nil)
	srv.Stop()
	if _, err := s.Append("s", "p", nil); err == nil {
		t.Fatal("Append succeeded with Redis down")
	} else {
		checkNoSecret(t, "Append's error", err.Error())
	}
	testwait.WaitFor(t, "Healthy false", func() bool { return !c.Healthy() })
	checkNoSecret(t, "Err", c.Err().Error())
	// Back without a password: any password is accepted.
	srv.Start()
	testwait.WaitFor(t, "Healthy with Redis back", c.Healthy)
	// Back with another password: authentication fails (once the client
	// has to reconnect), and the error does not show ours.
	const other = "0ther-pa55word"
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := srv.Do(ctx, "CONFIG", "SET", "requirepass", other); err != nil {
		t.Fatal(err)
	}
	admin := redis.NewClient(&redis.Options{Addr: srv.Addr, Password: other})
	defer admin.Close()
	if err := admin.Do(ctx, "CLIENT", "KILL", "TYPE", "normal").Err(); err != nil {
		t.Fatal(err)
	}
	testwait.WaitFor(t, "an authentication error", func() bool {
		err := c.Err()
		return err != nil && strings.Contains(err.Error(), "WRONGPASS")
	})
	checkNoSecret(t, "Err with another password", c.Err().Error())
	if _, err := s.Append("s", "p", nil); err == nil {
		t.Fatal("Append succeeded with another password")
	} else {
		checkNoSecret(t, "Append's error with another password", err.Error())
	}
	if c.Healthy() {
		t.Fatal("Healthy while Redis refuses our password")
	}
	if err := admin.Do(ctx, "CONFIG", "SET", "requirepass", pw).Err(); err != nil {
		t.Fatal(err)
	}
	testwait.WaitFor(t, "Healthy once our password is back", c.Healthy)
	mustAppend(t, s, "s", "p", nil)
	if !strings.Contains(logs.String(), "redis unavailable") || !strings.Contains(logs.String(), "redis available again") {
		t.Errorf("the log shows no health changes:\n%s", logs.String())
	}
	checkNoSecret(t, "the client's log", logs.String())
	checkNoSecret(t, "go-redis's log", redisLog.String())
}

// Close stops the health check and the connections: operations fail,
// Healthy is false and Err is ErrClosed; a second Close is harmless.
func TestClientClose(t *testing.T) {
	srv := testenv.Redis(t)
	c := open(t, srv.URL(), WithLimits(Limits{HealthInterval: 10 * time.Millisecond}))
	s := c.EventStore()
	id := mustAppend(t, s, "s", "p", nil)
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if c.Healthy() || !errors.Is(c.Err(), ErrClosed) {
		t.Errorf("after Close: Healthy %v, Err %v", c.Healthy(), c.Err())
	}
	if _, err := s.Append("s", "p", nil); err == nil {
		t.Error("Append after Close succeeded")
	}
	if _, _, err := s.After("s", id); err == nil {
		t.Error("After after Close succeeded")
	}
	if err := c.Ping(context.Background()); err == nil {
		t.Error("Ping after Close succeeded")
	}
	if c.Healthy() || !errors.Is(c.Err(), ErrClosed) {
		t.Errorf("after operations on a closed client: Healthy %v, Err %v", c.Healthy(), c.Err())
	}
	if err := c.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
}

// Only failures that say Redis cannot serve change the health view: an
// error reply from a working Redis does not, nor a caller cancelling its
// own Ping; a success after a failure makes it healthy again.
func TestHealth(t *testing.T) {
	srv := testenv.Redis(t)
	c := open(t, srv.URL(), WithLimits(Limits{HealthInterval: time.Hour}))
	if err := do(t, c, "NOSUCHCOMMAND").Err(); err == nil {
		t.Fatal("an unknown command succeeded")
	} else if unavailable(err) {
		t.Errorf("unavailable(%v) = true for a reply of a working Redis", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := c.Ping(ctx); err == nil {
		t.Fatal("Ping with a cancelled context succeeded")
	}
	if !c.Healthy() {
		t.Fatalf("a caller's cancelled Ping made the client unhealthy: %v", c.Err())
	}
	srv.Stop()
	if err := c.Ping(context.Background()); err == nil {
		t.Fatal("Ping with Redis down succeeded")
	}
	if c.Healthy() || c.Err() == nil {
		t.Fatalf("Healthy %v, Err %v with Redis down", c.Healthy(), c.Err())
	}
	srv.Start()
	if err := c.Ping(context.Background()); err != nil {
		t.Fatalf("Ping with Redis back: %v", err)
	}
	if !c.Healthy() || c.Err() != nil {
		t.Fatalf("Healthy %v, Err %v with Redis back", c.Healthy(), c.Err())
	}
}
