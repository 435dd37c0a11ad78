package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/toolwire/toolwire/internal/testenv"
	"github.com/toolwire/toolwire/jsonrpc"
	"github.com/toolwire/toolwire/mcp"
	"github.com/toolwire/toolwire/server"
	"github.com/toolwire/toolwire/transport/streamable"
)

// endlessUpstream serves, over Streamable HTTP, a tools/list that never
// ends: pages of perPage tools with descriptions of pad bytes, each with a
// nextCursor to the next. pages counts the pages served.
func endlessUpstream(t *testing.T, perPage, pad int, pages *atomic.Int64) string {
	t.Helper()
	desc := strings.Repeat("x", pad)
	endless := func(next jsonrpc.MethodHandler) jsonrpc.MethodHandler {
		return func(ctx context.Context, req *jsonrpc.Request) (any, error) {
			if req.Method != mcp.MethodListTools {
				return next(ctx, req)
			}
			var p struct {
				Cursor string `json:"cursor"`
			}
			_ = json.Unmarshal(req.Params, &p)
			n, _ := strconv.Atoi(p.Cursor)
			pages.Add(1)
			var b bytes.Buffer
			b.WriteString(`{"tools":[`)
			for i := range perPage {
				if i > 0 {
					b.WriteByte(',')
				}
				fmt.Fprintf(&b, `{"name":"t%d-%d","description":%q,"inputSchema":{"type":"object"}}`, n, i, desc)
			}
			fmt.Fprintf(&b, `],"nextCursor":"%d"}`, n+1)
			return json.RawMessage(b.Bytes()), nil
		}
	}
	s := server.New(mcp.Implementation{Name: "endless", Version: "1"},
		server.WithCapabilities(server.FeatureTools), server.WithMiddleware(endless))
	hs := httptest.NewServer(streamable.NewHandler(s))
	t.Cleanup(hs.Close)
	return hs.URL
}

// peakRSS is the highest resident set size process pid has had (VmHWM), in
// bytes.
func peakRSS(t *testing.T, pid int) int64 {
	t.Helper()
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Skipf("no /proc here: %v", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "VmHWM:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			if err != nil {
				t.Fatalf("VmHWM %q: %v", v, err)
			}
			return kb << 10
		}
	}
	t.Fatalf("/proc/%d/status has no VmHWM", pid)
	return 0
}

// TestGatewayEndlessListRSSBounded: an HTTP upstream whose tool list never
// ends (pages of 2,000 tools, each 100 bytes of description) is followed
// by the gateway binary only to the default bound (10,000 items) and
// marked down naming it, while the gateway's peak resident memory stays
// under 160 MiB (unbounded, the same list took 2.4 GB); the upstream next
// to it keeps serving.
func TestGatewayEndlessListRSSBounded(t *testing.T) {
	const bound = 160 << 20
	var pages atomic.Int64
	url := endlessUpstream(t, 2000, 100, &pages)
	bin := testenv.Toolwire(t)
	cfg := writeConfig(t, t.TempDir(), fmt.Sprintf(`
upstreams:
  endless: {url: %q}
%s`, url+"/mcp", stdioUpstream(bin, "ok")))
	g := startGateway(t, "--config", cfg)
	waitFor(t, func() bool {
		return strings.Contains(g.log.String(), "upstream=endless") && strings.Contains(g.log.String(), "more than 10000 items")
	}, g)
	peak := peakRSS(t, g.cmd.Process.Pid)
	t.Logf("gateway peak RSS %.1f MiB after following %d pages of 2,000 tools", float64(peak)/(1<<20), pages.Load())
	if peak > bound {
		t.Fatalf("gateway peak RSS %d MiB, more than %d MiB", peak>>20, bound>>20)
	}
	names := toolNames(t, g.url, mcp.EraLegacy)
	if !slices.Contains(names, "ok__get-sum") || slices.ContainsFunc(names, func(n string) bool { return strings.HasPrefix(n, "endless__") }) {
		t.Fatalf("tools %v: want ok's and none of endless's", names)
	}
}

// TestGatewayLimitsSection: the config's limits section reaches the
// binary: upstream_lists.max_items bounds an upstream's list (marked down
// naming the configured bound), sessions.anonymous caps the sessions
// callers without credentials hold (past it 503 naming the limit), and a
// reload that changes limits says they apply on a restart.
func TestGatewayLimitsSection(t *testing.T) {
	var pages atomic.Int64
	url := endlessUpstream(t, 50, 0, &pages)
	bin := testenv.Toolwire(t)
	dir := t.TempDir()
	text := fmt.Sprintf(`
limits:
  sessions: {anonymous: 2}
  upstream_lists: {max_items: 120}
upstreams:
  endless: {url: %q}
%s`, url+"/mcp", stdioUpstream(bin, "ok"))
	cfg := writeConfig(t, dir, text)
	g := startGateway(t, "--config", cfg)
	waitFor(t, func() bool {
		return strings.Contains(g.log.String(), "upstream=endless") && strings.Contains(g.log.String(), "more than 120 items")
	}, g)
	if n := pages.Load(); n > 3 {
		t.Errorf("the gateway read %d pages of 50 for a bound of 120 items, want 3", n)
	}
	for i := 1; i <= 3; i++ {
		status, _, body := postInitialize(t, g.url)
		if i <= 2 && (status != http.StatusOK || !strings.Contains(body, `"result"`)) {
			t.Fatalf("anonymous initialize %d: %d %q", i, status, body)
		}
		if i == 3 && (status != http.StatusServiceUnavailable || !strings.Contains(body, "too many sessions without credentials: their limit of 2")) {
			t.Fatalf("anonymous initialize %d past sessions.anonymous 2: %d %q", i, status, body)
		}
	}
	reloadAndWait(t, g, dir, strings.Replace(text, "anonymous: 2", "anonymous: 3", 1))
	waitFor(t, func() bool {
		return strings.Contains(g.log.String(), "take effect only on a restart") && strings.Contains(g.log.String(), "limits")
	}, g)
}
