package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/toolwire/toolwire/client"
	"github.com/toolwire/toolwire/internal/testenv"
	"github.com/toolwire/toolwire/internal/testhttp"
	"github.com/toolwire/toolwire/internal/testwait"
	"github.com/toolwire/toolwire/mcp"
)

// TestGatewaySSEUpstreamRestart: a 2024-11-05 HTTP+SSE upstream that
// restarts on its address (forgetting its session and event stream) comes
// back behind the gateway by itself, named with transport: sse and
// detected alike: the same caller's session calls its tools again, and
// /readyz shows both ready over sse once more.
func TestGatewaySSEUpstreamRestart(t *testing.T) {
	addr, stop := testenv.EverythingHTTPOn(t, "sse", "0")
	g := startGateway(t, "--config", sseUpstreamsConfig(t, "http://"+addr+"/sse"))
	c := connectServe(t, g.url, mcp.EraLegacy)
	echo := func(up string) error {
		ctx, cancel := context.WithTimeout(t.Context(), testwait.Limit)
		defer cancel()
		res, err := c.CallTool(ctx, up+"__echo", map[string]string{"message": "again"})
		switch {
		case err != nil:
			return fmt.Errorf("%s: %w", client.CodeOf(err), err)
		case res.IsError || len(texts(res)) != 1 || texts(res)[0] != "Echo: again":
			return fmt.Errorf("result %s", testwait.MustJSON(t, res))
		}
		return nil
	}
	for _, up := range []string{"ev", "auto"} {
		testwait.WaitForNil(t, up+"__echo before the restart", func() error { return echo(up) })
	}

	stop()
	_, port, _ := strings.Cut(addr, ":")
	if again, _ := testenv.EverythingHTTPOn(t, "sse", port); again != addr {
		t.Fatalf("the upstream restarted on %s, not %s", again, addr)
	}
	for _, up := range []string{"ev", "auto"} {
		testwait.WaitForNil(t, up+"__echo after the upstream restarted", func() error { return echo(up) })
	}
	testwait.WaitForNil(t, "/readyz to show both upstreams ready over sse", func() error {
		status, body := testhttp.Get(t, g.admin+"/readyz")
		var ready struct {
			Upstreams []struct{ Name, State, Transport string } `json:"upstreams"`
		}
		if err := json.Unmarshal([]byte(body), &ready); err != nil || status != http.StatusOK {
			return fmt.Errorf("%d %v: %s", status, err, body)
		}
		if len(ready.Upstreams) != 2 {
			return fmt.Errorf("%d upstreams: %s", len(ready.Upstreams), body)
		}
		for _, u := range ready.Upstreams {
			if u.State != "ready" || u.Transport != "sse" {
				return fmt.Errorf("%s is %s over %q", u.Name, u.State, u.Transport)
			}
		}
		return nil
	})
}
