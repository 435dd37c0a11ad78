package testenv

import (
	"bufio"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/toolwire/toolwire/internal/testwait"
)

// FreeAddr returns a loopback address ("127.0.0.1:port") nothing listens on
// now: for a process under test to listen on (and, stopped, listen on
// again), or for a client to find closed.
func FreeAddr(t testing.TB) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

// loopbackPreload is preloaded into server-everything with `node
// --require`: its app.listen(PORT) binds 127.0.0.1 instead of every
// interface, and the address it got is printed on stderr as
// "TOOLWIRE_LISTENING 127.0.0.1:<port>".
const loopbackPreload = `const net = require('node:net');
const listen = net.Server.prototype.listen;
net.Server.prototype.listen = function (...args) {
  const p = args[0];
  if (typeof p === 'number' || (typeof p === 'string' && /^\d+$/.test(p))) {
    const callbacks = args.slice(1).filter((a) => typeof a === 'function');
    this.once('listening', () => {
      const a = this.address();
      process.stderr.write('TOOLWIRE_LISTENING ' + a.address + ':' + a.port + '\n');
    });
    return listen.call(this, Number(p), '127.0.0.1', ...callbacks);
  }
  return listen.apply(this, args);
};
`

// EverythingHTTP runs server-everything (see Everything) in one of its
// HTTP modes, "streamableHttp" (the 2025 Streamable HTTP transport, at
// /mcp) or "sse" (the 2024-11-05 HTTP+SSE transport: GET /sse, POST
// /message), on a free port of 127.0.0.1, and returns the address it
// listens on. Its own code listens on every interface; a preload pins it
// to loopback and reports the port. The test fails when it exits or does
// not listen within testwait's bound, showing its stderr; t.Cleanup kills
// it by its PID, and logs its stderr when the test failed.
func EverythingHTTP(t testing.TB, mode string) string {
	t.Helper()
	addr, _ := EverythingHTTPOn(t, mode, "0")
	return addr
}

// EverythingHTTPOn is EverythingHTTP on 127.0.0.1:port ("0" for a free
// port), which lets a test start it again where a client already points,
// as a server that restarted; stop kills it by its PID and waits for it
// to exit (t.Cleanup does too).
func EverythingHTTPOn(t testing.TB, mode, port string) (addr string, stop func()) {
	t.Helper()
	node, entry := Everything(t)
	preload := filepath.Join(t.TempDir(), "loopback.cjs")
	if err := os.WriteFile(preload, []byte(loopbackPreload), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(node, "--require", preload, entry, mode)
	cmd.Env = append(os.Environ(), "PORT="+port)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pid := cmd.Process.Pid
	var log SyncBuffer
	addrs := make(chan string, 1)
	done := make(chan struct{})
	go func() {
		defer close(done)
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			log.Write([]byte(sc.Text() + "\n"))
			if a, ok := strings.CutPrefix(sc.Text(), "TOOLWIRE_LISTENING "); ok {
				select {
				case addrs <- a:
				default:
				}
			}
		}
	}()
	var once sync.Once
	stop = func() {
		once.Do(func() {
			if p, err := os.FindProcess(pid); err == nil {
				_ = p.Kill()
			}
			_ = cmd.Wait()
			<-done
		})
	}
	t.Cleanup(func() {
		stop()
		if t.Failed() {
			t.Logf("server-everything %s (PID %d) stderr:\n%s", mode, pid, log.String())
		}
	})
	select {
	case a := <-addrs:
		if !strings.HasPrefix(a, "127.0.0.1:") {
			t.Fatalf("server-everything bound %s, not 127.0.0.1", a)
		}
		return a, stop
	case <-done:
		t.Fatalf("server-everything %s exited before listening:\n%s", mode, log.String())
	case <-time.After(testwait.Limit): // a hang bound
		t.Fatalf("server-everything %s did not start listening:\n%s", mode, log.String())
	}
	return "", stop
}
