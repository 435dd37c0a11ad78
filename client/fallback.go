package client

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"github.com/toolwire/toolwire/jsonrpc"
	"github.com/toolwire/toolwire/mcp"
)

// The backwards-compatibility fallback of Streamable HTTP clients
// (HTTP.SSEFallback): a server that refuses initialize with a 4xx may be
// one of the 2024-11-05 HTTP+SSE transport, which is then reached at the
// same URL with GET.

// refusesInitialize says whether a status answering initialize is one the
// specification's guidance reads as "an older server": 400, 404 or 405.
func refusesInitialize(status int) bool {
	switch status {
	case http.StatusBadRequest, http.StatusNotFound, http.StatusMethodNotAllowed:
		return true
	}
	return false
}

// initRefusedError is a refused initialize POST, kept for the fallback to
// decide on: the status and the start of the body.
type initRefusedError struct {
	op     string
	status int
	body   []byte
	id     jsonrpc.ID
}

func (e *initRefusedError) Error() string {
	return (&TransportError{Op: e.op, StatusCode: e.status, Err: statusError(e.status, e.body)}).Error()
}

// MCPCode: a refusal is a transport failure until read (see outcome).
func (*initRefusedError) MCPCode() Code { return CodeTransport }

// outcome is the error the refusal is without the fallback: the JSON-RPC
// error its body carries, or a transport error with the status.
func (e *initRefusedError) outcome() error {
	if msg, _, err := jsonrpc.Decode(e.body); err == nil {
		if r, ok := msg.(*jsonrpc.Response); ok && r.Error != nil {
			return &JSONRPCError{Method: mcp.MethodInitialize, Code: r.Error.Code, Message: r.Error.Message, Data: r.Error.Data}
		}
	}
	return &TransportError{Op: e.op, StatusCode: e.status, Err: statusError(e.status, e.body)}
}

// initializeOrFallback initializes; when the Streamable HTTP transport
// with SSEFallback has it refused, it opens the 2024-11-05 event stream
// at the same URL and initializes over that instead. Connect runs it
// before the client is handed out, so the link is replaced while nothing
// else uses it.
func (c *Client) initializeOrFallback(ctx context.Context) error {
	err := c.initialize(ctx)
	var ir *initRefusedError
	if !errors.As(err, &ir) {
		return err
	}
	h, ok := c.conn.(*httpConn)
	if !ok {
		return ir.outcome()
	}
	s := newSSEConn(h)
	if serr := s.open(ctx); serr != nil {
		c.cfg.logger.Debug("initialize refused, and no HTTP+SSE event stream either", "status", ir.status, "error", serr)
		return ir.outcome()
	}
	c.cfg.logger.Debug("initialize refused; going on over the 2024-11-05 HTTP+SSE transport", "status", ir.status, "endpoint", s.sessionID())
	c.conn = s
	return c.initialize(ctx)
}

// errLegacyTransport: the era was forced to modern over a transport that
// carries the legacy versions only.
var errLegacyTransport = fmt.Errorf("the 2024-11-05 HTTP+SSE transport carries the legacy protocol versions only (up to %s)", mcp.LatestLegacyVersion)
