//go:build linux

package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/toolwire/toolwire/client"
	"github.com/toolwire/toolwire/internal/testenv"
	"github.com/toolwire/toolwire/internal/testwait"
	"github.com/toolwire/toolwire/mcp"
)

// procInfo is what /proc/<pid>/stat says of a process.
type procInfo struct {
	comm  string
	state byte
	ppid  int
	start uint64 // since boot, in clock ticks: tells a process from a later one given its PID
}

func readProc(pid int) (procInfo, bool) {
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return procInfo{}, false
	}
	// pid (comm) state ppid ...; comm may hold spaces and parentheses.
	s := string(b)
	open, end := strings.IndexByte(s, '('), strings.LastIndexByte(s, ')')
	if open < 0 || end < open {
		return procInfo{}, false
	}
	f := strings.Fields(s[end+1:])
	if len(f) < 20 {
		return procInfo{}, false
	}
	ppid, _ := strconv.Atoi(f[1])
	start, _ := strconv.ParseUint(f[19], 10, 64)
	return procInfo{comm: s[open+1 : end], state: f[0][0], ppid: ppid, start: start}, true
}

// descendants are the processes under root: its children, theirs, and so
// on, by PID.
func descendants(root int) map[int]procInfo {
	all := map[int]procInfo{}
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		if pid, err := strconv.Atoi(e.Name()); err == nil {
			if p, ok := readProc(pid); ok {
				all[pid] = p
			}
		}
	}
	out := map[int]procInfo{}
	for grew := true; grew; {
		grew = false
		for pid, p := range all {
			_, seen := out[pid]
			_, parentIn := out[p.ppid]
			if !seen && (p.ppid == root || parentIn) {
				out[pid], grew = p, true
			}
		}
	}
	return out
}

// running says whether the process p was (same PID, same start) still
// runs: a zombie waiting to be reaped has ended.
func running(pid int, p procInfo) bool {
	now, ok := readProc(pid)
	return ok && now.start == p.start && now.state != 'Z' && now.state != 'X'
}

// gatewayProcs returns the processes under the gateway, failing unless
// they include want (by command name, as many of each as given).
func gatewayProcs(t *testing.T, g *gatewayProc, want map[string]int) map[int]procInfo {
	t.Helper()
	gw := g.cmd.Process.Pid
	procs := descendants(gw)
	got := map[string]int{}
	var listed []string
	for pid, p := range procs {
		listed = append(listed, fmt.Sprintf("%d %s (parent %d)", pid, p.comm, p.ppid))
		got[p.comm]++
	}
	slices.Sort(listed)
	t.Logf("the gateway (PID %d) runs: %s", gw, strings.Join(listed, ", "))
	for comm, n := range want {
		if got[comm] != n {
			t.Fatalf("want %d %s under the gateway; it runs %s", n, comm, strings.Join(listed, ", "))
		}
	}
	return procs
}

// waitEnded waits until none of procs runs, for up to within (a failure
// bound, far above what ending takes).
func waitEnded(t *testing.T, procs map[int]procInfo, within time.Duration, what string) {
	t.Helper()
	since := time.Now()
	for {
		var left []string
		for pid, p := range procs {
			if running(pid, p) {
				left = append(left, fmt.Sprintf("%d %s", pid, p.comm))
			}
		}
		if len(left) == 0 {
			break
		}
		if time.Since(since) > within {
			t.Fatalf("still waiting for %s after %v: %s still run", what, within, strings.Join(left, ", "))
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Logf("%d processes ended within %v", len(procs), time.Since(since).Round(time.Millisecond))
}

// serveBoth waits until the gateway serves both upstreams' tools.
func serveBoth(t *testing.T, g *gatewayProc, tools ...string) {
	t.Helper()
	testwait.WaitFor(t, "the gateway to serve both upstreams", func() bool {
		names := toolNames(t, g.url, mcp.EraLegacy)
		for _, n := range tools {
			if !slices.Contains(names, n) {
				return false
			}
		}
		return true
	})
}

func quoted(s string) string { b, _ := json.Marshal(s); return string(b) }

// TestGatewayKilledLeavesNoChildren: a gateway killed with SIGKILL while
// its stdio children are busy (server-everything, started by node itself,
// waiting on the answer to an elicitation it sent; `toolwire serve
// --stdio` next to it) leaves none of them, nor anything they started,
// running: each gets SIGKILL from the kernel as the gateway dies.
func TestGatewayKilledLeavesNoChildren(t *testing.T) {
	node, entry := testenv.Everything(t)
	cfg := writeConfig(t, t.TempDir(), fmt.Sprintf(`
upstreams:
  everything:
    command: [%s, %s, stdio]
  ref:
    command: [%s, serve, --stdio, --data-dir, %s]
`, quoted(node), quoted(entry), quoted(testenv.Toolwire(t)), quoted(t.TempDir())))
	g := startGateway(t, "--config", cfg)
	serveBoth(t, g, "everything__trigger-elicitation-request", "ref__echo")
	// server-everything asks for the roots 350 ms after it is initialized,
	// and the gateway answers (with an error, no call being in flight);
	// after that it writes nothing until the elicitation's own timeout (a
	// minute), so that nothing but the gateway's death can end it sooner.
	testwait.WaitFor(t, "server-everything's roots request to be answered", func() bool {
		l := g.log.String()
		return strings.Contains(l, "Failed to request roots") || strings.Contains(l, "Roots updated") || strings.Contains(l, "Client returned no roots")
	})

	asked := make(chan struct{}, 1)
	release := make(chan struct{})
	c := connectServe(t, g.url, mcp.EraLegacy, client.WithElicitationHandler(func(ctx context.Context, _ *mcp.ElicitParams) (*mcp.ElicitResult, error) {
		select {
		case asked <- struct{}{}:
		default:
		}
		select { // unanswered while the gateway lives
		case <-release:
		case <-ctx.Done():
		}
		return &mcp.ElicitResult{Action: mcp.ActionDecline}, nil
	}))
	t.Cleanup(func() { close(release) }) // before c closes
	called := make(chan error, 1)
	go func() {
		_, err := c.CallTool(context.Background(), "everything__trigger-elicitation-request", map[string]any{})
		called <- err
	}()
	testwait.Recv(t, asked, "server-everything's elicitation to reach the caller")

	procs := gatewayProcs(t, g, map[string]int{"node": 1, "toolwire": 1})
	if err := syscall.Kill(g.cmd.Process.Pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = g.cmd.Wait()
	waitEnded(t, procs, 30*time.Second, "every process the killed gateway started to end")
	testwait.Recv(t, called, "the call in flight to fail with the gateway gone")
}

// TestGatewayChildGroup: a stdio server that starts a process of its own
// (here sh starts `sleep 600` and becomes server-everything) runs in a
// process group of its own, and that process ends with the gateway
// whether it is shut down by SIGTERM (the gateway ends the group) or
// killed with SIGKILL (the guard between the gateway and each server
// kills the group on its parent-death signal), as npx's node would.
func TestGatewayChildGroup(t *testing.T) {
	node, entry := testenv.Everything(t)
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGKILL} {
		t.Run(sig.String(), func(t *testing.T) {
			cfg := writeConfig(t, t.TempDir(), fmt.Sprintf(`
upstreams:
  everything:
    command: [sh, -c, 'sleep 600 & exec "$$0" "$$1" stdio', %s, %s]
  ref:
    command: [%s, serve, --stdio, --data-dir, %s]
`, quoted(node), quoted(entry), quoted(testenv.Toolwire(t)), quoted(t.TempDir())))
			g := startGateway(t, "--config", cfg)
			serveBoth(t, g, "everything__echo", "ref__echo")
			procs := gatewayProcs(t, g, map[string]int{"node": 1, "toolwire": 1, "sleep": 1})
			var sleeper int
			for pid, p := range procs {
				if p.comm == "sleep" {
					sleeper = pid
				}
			}
			t.Cleanup(func() {
				if running(sleeper, procs[sleeper]) {
					_ = syscall.Kill(sleeper, syscall.SIGKILL)
				}
			})
			if err := syscall.Kill(g.cmd.Process.Pid, sig); err != nil {
				t.Fatal(err)
			}
			_ = g.cmd.Wait()
			waitEnded(t, procs, testwait.Limit, "the gateway's children and grandchild to end")
		})
	}
}
