package inproc

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/toolwire/toolwire/bench/internal/load"
	"github.com/toolwire/toolwire/bench/tools"
)

// BenchmarkToolsCall2026 is W8: W6's echo tools/call as a stateless
// 2026-07-28 request (no session; _meta and the Mcp-* headers on the
// request), through each server's handler in process, measured exactly as
// W6 is so that the two can be set side by side. Inside the loop only a
// cheap check runs (the echoed text and resultType); the first and the last
// reply are checked fully.
func BenchmarkToolsCall2026(b *testing.B) {
	body := load.ModernCallBody(echoID, tools.Echo, load.EchoArgs(echoMsg))
	benchEcho(b, true, func(c *Client) *httptest.ResponseRecorder { return c.DoModern(body, "tools/call", tools.Echo) },
		CheckModernCall, []byte(`"complete"`))
}

// TestToolsCall2026 checks every server's tools as stateless 2026-07-28
// calls: complete results for echo, add and big; invalid arguments refused
// by all but the floor; and a request whose Mcp-Name header disagrees with
// its body refused with HTTP 400 by every server, the floor included (the
// floor must do what every correct server does).
func TestToolsCall2026(t *testing.T) {
	eachImpl(t, true, func(t *testing.T, impl string, c *Client) {
		checkTools(t, impl, true, func(id int64, tool string, args []byte) *httptest.ResponseRecorder {
			return c.DoModern(load.ModernCallBody(id, tool, args), "tools/call", tool)
		}, CheckModernCall)
		rec := c.DoModern(load.ModernCallBody(5, tools.Echo, load.EchoArgs("x")), "tools/call", tools.Add)
		if rec.Code != http.StatusBadRequest || !bytes.Contains(rec.Body.Bytes(), []byte(`"error"`)) {
			t.Errorf("Mcp-Name add on a call of echo: HTTP %d %.200s, want 400 with an error", rec.Code, rec.Body)
		}
	})
}
