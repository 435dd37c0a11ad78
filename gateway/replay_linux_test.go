package gateway_test

import (
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/toolwire/toolwire/internal/testmcp"
	"github.com/toolwire/toolwire/internal/testwait"
)

// loopbackEstablished says whether /proc/net/tcp has the loopback
// connection from local port lport to remote port rport established.
func loopbackEstablished(t *testing.T, lport, rport int) bool {
	t.Helper()
	b, err := os.ReadFile("/proc/net/tcp")
	if err != nil {
		t.Fatal(err)
	}
	hexPort := func(addr string) int {
		_, p, _ := strings.Cut(addr, ":")
		n, _ := strconv.ParseInt(p, 16, 32)
		return int(n)
	}
	for _, line := range strings.Split(string(b), "\n")[1:] {
		f := strings.Fields(line)
		if len(f) > 3 && hexPort(f[1]) == lport && hexPort(f[2]) == rport {
			return f[3] == "01" // TCP_ESTABLISHED
		}
	}
	return false
}

// TestClosedIdleConnectionNotUsed: an HTTP upstream that closes each
// keep-alive connection after its response without saying so (a FIN, or
// a reset) leaves the gateway's pool full of connections it closed; once
// the gateway's side has seen each close, a tools/call goes on a new
// connection, runs once and is answered, as if nothing had happened.
func TestClosedIdleConnectionNotUsed(t *testing.T) {
	for _, how := range []string{"fin", "reset"} {
		t.Run(how, func(t *testing.T) {
			var mu sync.Mutex
			var closed []int // the gateway's ports of the connections the upstream closed
			up := newRawMCP(t, func(int64) bool { return true }, func(c net.Conn) bool {
				if how == "reset" {
					c.(*net.TCPConn).SetLinger(0)
				}
				mu.Lock()
				closed = append(closed, c.RemoteAddr().(*net.TCPAddr).Port)
				mu.Unlock()
				return false
			})
			upPort := up.ln.Addr().(*net.TCPAddr).Port
			c := flakyClient(t, up)
			testwait.WaitFor(t, "the gateway's side to see every connection the upstream closed", func() bool {
				mu.Lock()
				ports := append([]int(nil), closed...)
				mu.Unlock()
				if int64(len(ports)) != up.conns.Load() {
					return false
				}
				for _, p := range ports {
					if loopbackEstablished(t, p, upPort) {
						return false
					}
				}
				return true
			})
			if len(closed) == 0 {
				t.Fatal("no connection was closed; the case under test is a pool of closed ones")
			}
			res, err := c.CallTool(testwait.Context(t), "flaky__work", nil)
			if err != nil || res.IsError || testmcp.Text(res) != "ran 1" {
				t.Fatalf("a call after the upstream closed its idle connections: %+v, %v; want \"ran 1\"", res, err)
			}
			up.mu.Lock()
			reused := up.reused[0]
			up.mu.Unlock()
			if n := up.runs.Load(); n != 1 || reused {
				t.Fatalf("the upstream ran the call %d times (on a connection used before: %v), want once, on a new one", n, reused)
			}
		})
	}
}
