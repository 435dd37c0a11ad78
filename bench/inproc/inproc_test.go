package inproc

import (
	"net/http/httptest"
	"testing"

	"github.com/toolwire/toolwire/bench/internal/load"
	"github.com/toolwire/toolwire/bench/tools"
)

// BenchmarkToolsCall is W6: one echo tools/call through each server's
// Streamable HTTP handler in process (request built, served, recorded).
// Inside the loop only a cheap check runs, so every server pays the same
// for it; the first and the last reply are checked fully.
func BenchmarkToolsCall(b *testing.B) {
	body := load.CallBody(echoID, tools.Echo, load.EchoArgs(echoMsg))
	benchEcho(b, false, func(c *Client) *httptest.ResponseRecorder { return c.Do(body) }, CheckCall)
}

// TestToolsCall checks every server's tools through its handler in process:
// right results for echo, add and big, and invalid arguments refused by all
// but the floor (which by design validates nothing).
func TestToolsCall(t *testing.T) {
	eachImpl(t, false, func(t *testing.T, impl string, c *Client) {
		checkTools(t, impl, false, func(id int64, tool string, args []byte) *httptest.ResponseRecorder {
			return c.Do(load.CallBody(id, tool, args))
		}, CheckCall)
	})
}
