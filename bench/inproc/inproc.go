// Package inproc drives each server's Streamable HTTP handler in process,
// without a network: W6 of the benchmark (see inproc_test.go).
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
