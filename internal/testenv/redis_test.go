package testenv

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/toolwire/toolwire/internal/testwait"
)

// redisDo runs one command on s, failing the test on an error.
func redisDo(t *testing.T, s *RedisServer, args ...string) string {
	t.Helper()
	got, err := s.Do(testwait.Context(t), args...)
	if err != nil {
		t.Fatalf("%v: %v", args, err)
	}
	return got
}

// Two servers run at once, each on its own loopback port with the flags the
// tests rely on (no persistence, protected mode, bound to 127.0.0.1, its own
// directory); Stop ends the process and refuses connections, Start brings it
// back on the same address with no keys; a server left SIGSTOPped is still
// stopped at cleanup; and after cleanup no redis-server is left.
func TestRedis(t *testing.T) {
	var pids []int
	t.Run("two servers", func(t *testing.T) {
		a, b := Redis(t), Redis(t)
		pids = append(pids, a.PID(), b.PID())
		if a.Addr == b.Addr || a.PID() == b.PID() {
			t.Fatalf("two servers share address %s or pid %d", a.Addr, a.PID())
		}
		if !strings.HasPrefix(a.Addr, "127.0.0.1:") || a.URL() != "redis://"+a.Addr+"/0" {
			t.Errorf("Addr = %s, URL = %s", a.Addr, a.URL())
		}
		for i, s := range []*RedisServer{a, b} {
			for setting, want := range map[string]string{
				"bind": "127.0.0.1", "save": "", "appendonly": "no", "protected-mode": "yes",
				"daemonize": "no", "dir": s.dir,
			} {
				if got := redisDo(t, s, "CONFIG", "GET", setting); got != setting+"\n"+want {
					t.Errorf("server %d: CONFIG GET %s = %q, want %q", i, setting, got, setting+"\n"+want)
				}
			}
			redisDo(t, s, "SET", "k", fmt.Sprintf("server %d ü✓", i))
		}
		for i, s := range []*RedisServer{a, b} {
			if got := redisDo(t, s, "GET", "k"); got != fmt.Sprintf("server %d ü✓", i) {
				t.Errorf("server %d: GET k = %q", i, got)
			}
		}
	})
	t.Run("stop and start", func(t *testing.T) {
		s := Redis(t)
		redisDo(t, s, "SET", "k", "v")
		addr, pid := s.Addr, s.PID()
		s.Stop()
		if s.PID() != 0 {
			t.Errorf("PID = %d after Stop", s.PID())
		}
		if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
			t.Errorf("redis-server %d still exists after Stop (kill 0: %v)", pid, err)
		}
		if _, err := s.Do(testwait.Context(t), "PING"); !errors.Is(err, syscall.ECONNREFUSED) {
			t.Errorf("PING of a stopped server: %v, want connection refused", err)
		}
		s.Stop() // twice is harmless
		s.Start()
		pids = append(pids, s.PID())
		if s.Addr != addr || s.PID() == 0 || s.PID() == pid {
			t.Fatalf("after Start: %s pid %d; before Stop: %s pid %d", s.Addr, s.PID(), addr, pid)
		}
		if got := redisDo(t, s, "PING"); got != "PONG" {
			t.Errorf("PING = %q", got)
		}
		if got := redisDo(t, s, "EXISTS", "k"); got != "0" {
			t.Errorf("EXISTS k = %s after a restart, want 0: nothing is saved", got)
		}
		if n := strings.Count(s.Log(), "Ready to accept connections"); n != 2 {
			t.Errorf("the log shows %d starts, want 2:\n%s", n, s.Log())
		}
	})
	t.Run("hung server", func(t *testing.T) {
		s := Redis(t)
		pids = append(pids, s.PID())
		if err := syscall.Kill(s.PID(), syscall.SIGSTOP); err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
		defer cancel()
		if _, err := s.Do(ctx, "PING"); err == nil {
			t.Error("a SIGSTOPped server answered PING")
		}
		// Cleanup continues and stops it.
	})
	if len(pids) == 0 {
		t.Skip("no server started")
	}
	for _, pid := range pids {
		if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
			t.Errorf("redis-server %d still exists after cleanup (kill 0: %v)", pid, err)
		}
	}
}

// A server that cannot bind its port is reported as errPortTaken (Redis
// then retries on another port), and the readiness probe rejects a server
// that is not the process just started.
func TestRedisPortTaken(t *testing.T) {
	s := Redis(t)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	taken := &RedisServer{t: t, bin: s.bin, dir: t.TempDir(), port: l.Addr().(*net.TCPAddr).Port}
	taken.d = daemon{name: "redis-server", logPath: filepath.Join(taken.dir, "server.log")}
	if err := os.WriteFile(taken.d.logPath, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := taken.launch(); !errors.Is(err, errPortTaken) {
		taken.stop()
		t.Fatalf("launch on a taken port: %v, want errPortTaken; log:\n%s", err, taken.Log())
	}
	if taken.PID() != 0 {
		t.Errorf("PID = %d after a failed launch", taken.PID())
	}
	if err := redisProbe(context.Background(), s.port, os.Getpid()); err == nil {
		t.Error("the probe accepted a server whose pid is not the one started")
	}
	if err := redisProbe(context.Background(), s.port, s.PID()); err != nil {
		t.Errorf("probe of the server: %v", err)
	}
}
