package redisstore

import (
	"context"
	"fmt"
	"net"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"go.uber.org/goleak"

	"github.com/toolwire/toolwire/internal/testenv"
)

// testPassword is the password of the tests that use one; TestMain checks
// that go-redis's own log never shows it.
const testPassword = "s3cr3t-Pa55"

// redisLog collects what go-redis logs during the tests.
var redisLog testenv.SyncBuffer

type bufferLogger struct{}

func (bufferLogger) Printf(_ context.Context, format string, v ...any) {
	fmt.Fprintf(&redisLog, format+"\n", v...)
}

func TestMain(m *testing.M) {
	redis.SetLogger(bufferLogger{})
	code := m.Run()
	if strings.Contains(redisLog.String(), testPassword) {
		fmt.Fprintf(os.Stderr, "go-redis logged the password:\n%s\n", redisLog.String())
		code = 1
	}
	if code == 0 {
		// A streamable handler's watchdog (the replicas of the session
		// tests) ends at its next tick, within a second of the last request.
		if err := goleak.Find(goleak.IgnoreTopFunction("github.com/toolwire/toolwire/transport/streamable.(*watchdog).run")); err != nil {
			fmt.Fprintf(os.Stderr, "goroutines left: %v\n", err)
			code = 1
		}
	}
	os.Exit(code)
}

// open opens a client on srv for the test, closed at its end.
func open(t testing.TB, url string, opts ...Option) *Client {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := Open(ctx, url, opts...)
	if err != nil {
		t.Fatalf("Open(%s): %v", url, err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// roundTrips counts what a client sends to Redis: commands, pipelines and
// new connections.
type roundTrips struct{ cmds, pipelines, dials atomic.Int64 }

func (h *roundTrips) DialHook(next redis.DialHook) redis.DialHook {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		h.dials.Add(1)
		return next(ctx, network, addr)
	}
}

func (h *roundTrips) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		h.cmds.Add(1)
		return next(ctx, cmd)
	}
}

func (h *roundTrips) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		h.pipelines.Add(1)
		return next(ctx, cmds)
	}
}

// count returns the round trips so far: each command or pipeline is one.
func (h *roundTrips) count() int64 { return h.cmds.Load() + h.pipelines.Load() }

// countRoundTrips installs a counter on c.
func countRoundTrips(c *Client) *roundTrips {
	h := &roundTrips{}
	c.rdb.AddHook(h)
	return h
}

// do runs a command on c's connection for a test's own checks of Redis.
func do(t testing.TB, c *Client, args ...any) *redis.Cmd {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return c.rdb.Do(ctx, args...)
}

// waitFor polls cond every 10 ms until it holds, failing the test after a
// generous bound (a hang detector, not a latency check).
func waitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("still waiting after 30s for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// returns runs f in a goroutine and waits for it, failing the test if it
// has not returned after a generous bound (a hang detector).
func returns(t testing.TB, what string, f func()) {
	t.Helper()
	done := make(chan struct{})
	go func() {
		defer close(done)
		f()
	}()
	select {
	case <-done:
	case <-time.After(60 * time.Second):
		t.Fatalf("%s has not returned after 60s", what)
	}
}
