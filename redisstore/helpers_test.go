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
	"github.com/toolwire/toolwire/internal/testwait"
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
		// tests) ends at its next tick after the last request, and other
		// goroutines of the tests' clients and servers may still be ending
		// on a busy machine: they have until testwait.Limit (goleak.Find
		// waits a little between its own tries).
		ignore := goleak.IgnoreTopFunction("github.com/toolwire/toolwire/transport/streamable.(*watchdog).run")
		err := goleak.Find(ignore)
		for deadline := time.Now().Add(testwait.Limit); err != nil && time.Now().Before(deadline); {
			err = goleak.Find(ignore)
		}
		if err != nil {
			fmt.Fprintf(os.Stderr, "goroutines left: %v\n", err)
			code = 1
		}
	}
	os.Exit(code)
}

// upTimeout is the operation timeout of the tests that stop Redis: a
// stopped Redis refuses at once, so it only bounds the operations that
// must succeed, and only a hang reaches it, however busy the machine.
const upTimeout = testwait.Limit / 4

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

// openRedis opens a client, with opts, on a Redis server started for the
// test alone.
func openRedis(t testing.TB, opts ...Option) *Client {
	t.Helper()
	return open(t, testenv.Redis(t).URL(), opts...)
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
