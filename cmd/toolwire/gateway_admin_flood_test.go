package main

import (
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/toolwire/toolwire/mcp"
)

// TestGatewayAdminFloodSparesTheMCPEndpoint: 2,000 idle connections to
// the admin listener (health, metrics) take at most its connection cap of
// the gateway's descriptors, and MCP calls go on being served meanwhile.
func TestGatewayAdminFloodSparesTheMCPEndpoint(t *testing.T) {
	g := startGateway(t)
	au, err := url.Parse(g.admin)
	if err != nil || au.Host == "" {
		t.Fatalf("admin URL %q: %v", g.admin, err)
	}
	before := openFDs(t, g.cmd.Process.Pid)
	const flood = 2000
	var conns []net.Conn
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	for range flood {
		c, err := net.DialTimeout("tcp", au.Host, 10*time.Second)
		if err != nil {
			continue // the kernel's backlog is full: refused is fine too
		}
		conns = append(conns, c)
	}
	if len(conns) < 100 {
		t.Fatalf("only %d of %d connections made", len(conns), flood)
	}
	for i := range 5 {
		if names := toolNames(t, g.url, mcp.EraLegacy); len(names) == 0 {
			t.Fatalf("call %d during the flood: no tools listed", i)
		}
	}
	after := openFDs(t, g.cmd.Process.Pid)
	// The admin listener's 64 connections, and a few of the MCP calls'.
	if after-before > 64+32 {
		t.Errorf("the gateway holds %d more descriptors during the flood (%d connections made), more than the admin cap allows", after-before, len(conns))
	}
	t.Logf("%d idle admin connections made; the gateway's descriptors %d before, %d during", len(conns), before, after)
}

// openFDs counts a process's open file descriptors.
func openFDs(t *testing.T, pid int) int {
	t.Helper()
	ents, err := os.ReadDir(filepath.Join("/proc", strconv.Itoa(pid), "fd"))
	if err != nil {
		t.Fatalf("cannot read the process's descriptors: %v", err)
	}
	return len(ents)
}
