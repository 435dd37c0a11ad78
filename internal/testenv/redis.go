package testenv

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Bounds for starting and stopping a Redis server on a loaded 2-core machine.
const (
	redisReadyTimeout = 30 * time.Second        // from exec to answering PING
	redisStopTimeout  = 10 * time.Second        // SIGTERM before SIGKILL
	redisPingTimeout  = 2 * time.Second         // one readiness probe, or Do without a deadline
	redisPortAttempts = 5                       // tries when another process takes the port
	redisMaxReply     = 1 << 20                 // largest reply Do reads (INFO server is ~1 KiB)
	redisMaxDepth     = 4                       // deepest array nesting Do reads
	redisBinary       = "/usr/bin/redis-server" // Debian's redis-server, when not on PATH
)

// RedisServer is a throwaway Redis server owned by one test: listening on a
// free port of 127.0.0.1 only, protected mode on, no persistence (nothing is
// saved, so Stop loses every key), its working directory in t.TempDir().
// Stop and Start must be called from the test's goroutine (they call
// t.Fatal).
type RedisServer struct {
	// Addr is "127.0.0.1:PORT"; it stays the same across Stop and Start.
	Addr string

	t    testing.TB
	bin  string
	dir  string // the server's --dir
	port int
	d    daemon // the process; its log is server.log in dir
}

// Redis starts a Redis server for the test and returns it once it answers
// PING. The server is stopped by PID when the test ends, and its log is
// printed if the test failed. Without redis-server it skips the test, or
// fails it in CI (CI set), where ./scripts/test should have installed
// Debian's redis-server.
func Redis(t testing.TB) *RedisServer {
	t.Helper()
	bin, err := RedisBinary()
	if err != nil {
		missingDebian(t, "redis-server", "redis-server", err)
	}
	s := &RedisServer{t: t, bin: bin, dir: t.TempDir()}
	s.d = daemon{name: "redis-server", logPath: filepath.Join(s.dir, "server.log")}
	s.d.own(t, "Redis", s.stop)
	for attempt := 0; attempt < redisPortAttempts; attempt++ {
		if s.port, err = freePort(); err != nil {
			break
		}
		if err = s.launch(); !errors.Is(err, errPortTaken) {
			break
		}
	}
	if err != nil {
		t.Fatalf("starting Redis: %v (the server log follows at cleanup)", err)
	}
	s.Addr = net.JoinHostPort("127.0.0.1", strconv.Itoa(s.port))
	return s
}

// RedisBinary returns the path of redis-server: on PATH, else where Debian's
// package puts it.
func RedisBinary() (string, error) {
	if p, err := exec.LookPath("redis-server"); err == nil {
		return p, nil
	}
	if fi, err := os.Stat(redisBinary); err == nil && !fi.IsDir() {
		return redisBinary, nil
	}
	return "", errors.New("redis-server not found on PATH nor at " + redisBinary)
}

// URL returns the server's URL for database 0, as redisstore.Open takes it.
func (s *RedisServer) URL() string { return "redis://" + s.Addr + "/0" }

// PID returns the server's process id, or 0 when it is stopped.
func (s *RedisServer) PID() int { return s.d.pid() }

// Log returns everything the server has logged, over all its starts.
func (s *RedisServer) Log() string { return s.d.log() }

// Start starts the server again after Stop, on the same port and directory,
// and waits until it answers PING. It holds no keys: nothing was saved. It
// fails the test if another process took the port meanwhile.
func (s *RedisServer) Start() {
	s.t.Helper()
	if s.PID() != 0 {
		s.t.Fatal("testenv: Redis server already running")
	}
	if err := s.launch(); err != nil {
		s.t.Fatalf("starting Redis again on %s: %v (the server log follows at cleanup)", s.Addr, err)
	}
}

// Stop shuts the server down: SIGTERM, then SIGKILL after a bound. Its
// clients see their connections closed and new ones refused until Start.
func (s *RedisServer) Stop() {
	s.t.Helper()
	if err := s.stop(); err != nil {
		s.t.Fatalf("stopping Redis: %v", err)
	}
}

// launch starts redis-server on s.port and polls, within redisReadyTimeout,
// until it answers PING as the process just started.
func (s *RedisServer) launch() error {
	cmd := exec.Command(s.bin,
		"--port", strconv.Itoa(s.port),
		"--bind", "127.0.0.1",
		"--dir", s.dir,
		"--save", "",
		"--appendonly", "no",
		"--protected-mode", "yes",
		"--daemonize", "no",
		"--logfile", "", // stdout, which is the log file
	)
	cmd.Dir = s.dir
	return s.d.start(cmd, s.port, redisReadyTimeout, 10*time.Millisecond, []string{"Address already in use"},
		func(ctx context.Context) error { return redisProbe(ctx, s.port, cmd.Process.Pid) })
}

// redisProbe sends PING and INFO server to port and checks that the server
// answering is process pid, not another one that took the port.
func redisProbe(ctx context.Context, port, pid int) error {
	d := net.Dialer{Timeout: redisPingTimeout}
	conn, err := d.DialContext(ctx, "tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
	if err != nil {
		return err
	}
	defer conn.Close()
	defer context.AfterFunc(ctx, func() { conn.Close() })()
	conn.SetDeadline(time.Now().Add(redisPingTimeout))
	if _, err := io.WriteString(conn, redisCommand("PING")+redisCommand("INFO", "server")); err != nil {
		return err
	}
	r := bufio.NewReader(conn)
	pong, err := redisReply(r)
	if err != nil {
		return err
	}
	if pong != "PONG" {
		return fmt.Errorf("PING answered %q", pong)
	}
	info, err := redisReply(r)
	if err != nil {
		return err
	}
	want := "process_id:" + strconv.Itoa(pid)
	for _, line := range strings.Split(info, "\n") {
		if strings.TrimSpace(line) == want {
			return nil
		}
	}
	return fmt.Errorf("port %d answers for another process than %d", port, pid)
}

// redisReply reads one reply: a simple string, error, integer or bulk string
// (a nil one is ""), or an array of them (nested at most redisMaxDepth deep),
// whose elements it joins with newlines.
func redisReply(r *bufio.Reader) (string, error) { return redisReplyDepth(r, 0) }

func redisReplyDepth(r *bufio.Reader, depth int) (string, error) {
	line, err := r.ReadString('\n')
	if err != nil {
		return "", err
	}
	line = strings.TrimSuffix(line, "\r\n")
	if line == "" {
		return "", errors.New("empty reply")
	}
	switch line[0] {
	case '+', ':':
		return line[1:], nil
	case '-':
		return "", errors.New(line[1:])
	case '$':
		n, err := strconv.Atoi(line[1:])
		if n == -1 && err == nil {
			return "", nil
		}
		if err != nil || n < 0 || n > redisMaxReply {
			return "", fmt.Errorf("bad bulk reply %q", line)
		}
		b := make([]byte, n+2)
		if _, err := io.ReadFull(r, b); err != nil {
			return "", err
		}
		return string(b[:n]), nil
	case '*':
		n, err := strconv.Atoi(line[1:])
		if n == -1 && err == nil {
			return "", nil
		}
		if err != nil || n < 0 || n > redisMaxReply || depth >= redisMaxDepth {
			return "", fmt.Errorf("bad array reply %q", line)
		}
		elems := make([]string, n)
		for i := range elems {
			if elems[i], err = redisReplyDepth(r, depth+1); err != nil {
				return "", err
			}
		}
		return strings.Join(elems, "\n"), nil
	}
	return "", fmt.Errorf("unexpected reply %q", line)
}

func (s *RedisServer) stop() error {
	return s.d.stop([]stopStep{{syscall.SIGTERM, redisStopTimeout}}, nil)
}

// Do sends one command to the server within ctx (bounded by
// redisPingTimeout when ctx has no deadline) and returns its reply, for tests
// that check the server directly. Arrays come back as their elements joined
// with newlines, a nil reply as ""; an error reply is returned as an error.
func (s *RedisServer) Do(ctx context.Context, args ...string) (string, error) {
	var d net.Dialer
	conn, err := d.DialContext(ctx, "tcp", s.Addr)
	if err != nil {
		return "", err
	}
	defer conn.Close()
	if dl, ok := ctx.Deadline(); ok {
		conn.SetDeadline(dl)
	} else {
		conn.SetDeadline(time.Now().Add(redisPingTimeout))
	}
	if _, err := io.WriteString(conn, redisCommand(args...)); err != nil {
		return "", err
	}
	return redisReply(bufio.NewReader(conn))
}

// redisCommand encodes args as a RESP array of bulk strings.
func redisCommand(args ...string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "*%d\r\n", len(args))
	for _, a := range args {
		fmt.Fprintf(&b, "$%d\r\n%s\r\n", len(a), a)
	}
	return b.String()
}
