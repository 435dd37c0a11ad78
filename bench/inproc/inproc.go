// Package inproc drives each server's Streamable HTTP handler in process,
// without a network: W6 (a 2025-11-25 session) and W8 (stateless
// 2026-07-28) of the benchmark, in inproc_test.go and modern_test.go.
package inproc

import (
	"bytes"
	"fmt"
	"net/http"
	"net/http/httptest"

	"github.com/toolwire/toolwire/bench/impls"
	"github.com/toolwire/toolwire/bench/impls/floor"
	"github.com/toolwire/toolwire/bench/impls/gosdk"
	"github.com/toolwire/toolwire/bench/impls/mcpgo"
	"github.com/toolwire/toolwire/bench/impls/toolwire"
	"github.com/toolwire/toolwire/bench/internal/load"
)

// Handler builds the named server's handler.
func Handler(impl string) (http.Handler, error) {
	switch impl {
	case impls.Floor:
		return floor.Handler()
	case impls.Toolwire:
		return toolwire.Handler()
	case impls.GoSDK:
		return gosdk.Handler()
	case impls.MCPGo:
		return mcpgo.Handler()
	}
	return nil, fmt.Errorf("unknown server %q", impl)
}

// ModernHandler builds the named server's handler for the stateless
// 2026-07-28 revision: the same as Handler but for go-sdk, whose default
// handler does not serve it (see gosdk.StatelessHandler).
func ModernHandler(impl string) (http.Handler, error) {
	if impl == impls.GoSDK {
		return gosdk.StatelessHandler()
	}
	return Handler(impl)
}

// URL is what in-process requests are addressed to (a loopback Host, which
// the handlers' DNS-rebinding checks accept).
const URL = "http://127.0.0.1/mcp"

// Client sends requests straight to a handler's ServeHTTP.
type Client struct {
	H       http.Handler
	Session string
}

// Do serves one POST and returns the recorder.
func (c *Client) Do(body []byte) *httptest.ResponseRecorder {
	req, _ := http.NewRequest(http.MethodPost, URL, bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if c.Session != "" {
		req.Header.Set("Mcp-Session-Id", c.Session)
		req.Header.Set("Mcp-Protocol-Version", load.ProtocolVersion)
	}
	rec := httptest.NewRecorder()
	c.H.ServeHTTP(rec, req)
	return rec
}

// DoModern serves one stateless 2026-07-28 POST of body, whose method and
// tool name (or "") the Mcp-* headers repeat. It sets the same number of
// headers as a legacy Do plus Mcp-Name, so the harness's own allocations
// differ by about one.
func (c *Client) DoModern(body []byte, method, name string) *httptest.ResponseRecorder {
	req, _ := http.NewRequest(http.MethodPost, URL, bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Protocol-Version", load.ModernVersion)
	req.Header.Set("Mcp-Method", method)
	if name != "" {
		req.Header.Set("Mcp-Name", name)
	}
	rec := httptest.NewRecorder()
	c.H.ServeHTTP(rec, req)
	return rec
}

// Open initializes a session on h.
func Open(h http.Handler) (*Client, error) {
	c := &Client{H: h}
	rec := c.Do([]byte(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"` +
		load.ProtocolVersion + `","capabilities":{},"clientInfo":{"name":"toolwire-bench","version":"1.0.0"}}}`))
	if rec.Code != http.StatusOK {
		return nil, fmt.Errorf("initialize: HTTP %d: %s", rec.Code, rec.Body)
	}
	c.Session = rec.Header().Get("Mcp-Session-Id")
	rec = c.Do([]byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}`))
	if rec.Code != http.StatusAccepted {
		return nil, fmt.Errorf("notifications/initialized: HTTP %d: %s", rec.Code, rec.Body)
	}
	return c, nil
}

// CheckCall checks one recorded tools/call reply fully.
func CheckCall(rec *httptest.ResponseRecorder, id int64, check load.Check) error {
	if rec.Code != http.StatusOK {
		return fmt.Errorf("HTTP %d: %.200s", rec.Code, rec.Body)
	}
	res, err := load.ParseCallResult(rec.Body.Bytes(), rec.Header().Get("Content-Type"), id)
	if err != nil {
		return err
	}
	return check(res)
}

// CheckModernCall checks one recorded 2026-07-28 tools/call reply fully: a
// complete result (load.CheckComplete) that passes check.
func CheckModernCall(rec *httptest.ResponseRecorder, id int64, check load.Check) error {
	return CheckCall(rec, id, func(res *load.CallResult) error {
		if err := load.CheckComplete(res); err != nil {
			return err
		}
		return check(res)
	})
}
