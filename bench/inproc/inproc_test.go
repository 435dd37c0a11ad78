package inproc

import (
	"bytes"
	"net/http/httptest"
	"testing"

	"github.com/toolwire/toolwire/bench/impls"
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
		if err := CheckCall(c.Do(load.CallBody(1, tools.Echo, load.EchoArgs("hi \"there\""))), 1, load.CheckEcho("hi \"there\"")); err != nil {
			t.Error("echo:", err)
		}
		if err := CheckCall(c.Do(load.CallBody(2, tools.Add, load.AddArgs(2, 0.5))), 2, load.CheckAdd(2, 0.5)); err != nil {
			t.Error("add:", err)
		}
		if err := CheckCall(c.Do(load.CallBody(3, tools.Big, []byte(`{}`))), 3, load.CheckBig); err != nil {
			t.Error("big:", err)
		}
		if impl == impls.Floor {
			return
		}
		rec := c.Do(load.CallBody(4, tools.Echo, []byte(`{"message":5}`)))
		res, err := load.ParseCallResult(rec.Body.Bytes(), rec.Header().Get("Content-Type"), 4)
		if err == nil {
			err = load.CheckRejected(res)
		} else if rec.Code == 200 && bytes.Contains(rec.Body.Bytes(), []byte(`"error"`)) {
			err = nil // refused with a JSON-RPC error
		}
		if err != nil {
			t.Error("invalid echo:", err)
		}
	})
}
