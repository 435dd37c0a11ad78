package client

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/toolwire/toolwire/mcp"
)

// Code names the kind of a failure. The set is closed: every error the client
// returns after reaching for the server carries exactly one of these five.
type Code string

// The five error codes. Their names are those declarative MCP clients
// already use (ERR_MCP_TOOL_ERROR, ...), and the CLI's error names.
const (
	// CodeTransport: the server could not be reached or stopped answering:
	// network failure, an HTTP status >= 400 other than the session ones
	// (unless its body is a JSON-RPC error, which is then CodeJSONRPC, as a
	// 2026-07-28 server's 400/404 replies are), a Content-Type that is
	// neither JSON nor SSE, the stdio child exiting, a message over the size
	// limit, a timeout or a cancelled context.
	CodeTransport Code = "ERR_MCP_TRANSPORT"
	// CodeProtocol: the server answered, but not in MCP: malformed JSON or
	// SSE, a bad JSON-RPC envelope, a content block not matching its type, or
	// structuredContent not matching the tool's outputSchema.
	CodeProtocol Code = "ERR_MCP_PROTOCOL"
	// CodeJSONRPC: the server answered with a JSON-RPC error.
	CodeJSONRPC Code = "ERR_MCP_JSON_RPC_ERROR"
	// CodeToolError: the tool ran and failed (isError: true).
	CodeToolError Code = "ERR_MCP_TOOL_ERROR"
	// CodeSessionInvalid: HTTP only; the server rejected the session (404,
	// or 400 with JSON-RPC -32000 naming the session, as servers built on
	// the TypeScript SDK's Express example answer) again after the client
	// re-initialized once, or refused that re-initialization with the same
	// answer. A call re-initializes at most once; after a re-initialization
	// that failed the client has no session, and the next call tries once
	// more.
	CodeSessionInvalid Code = "ERR_MCP_SESSION_INVALID"
)

// Codes lists every code, in the order of their CLI exit statuses.
func Codes() []Code {
	return []Code{CodeTransport, CodeProtocol, CodeJSONRPC, CodeToolError, CodeSessionInvalid}
}

// coded is implemented by the five error types.
type coded interface{ MCPCode() Code }

// CodeOf returns the code of a client error anywhere in err's chain, or ""
// for nil and for errors that never reached the server (such as arguments
// that cannot be encoded).
func CodeOf(err error) Code {
	var c coded
	if errors.As(err, &c) {
		return c.MCPCode()
	}
	return ""
}

// TransportError: the exchange failed below MCP (see CodeTransport).
type TransportError struct {
	Op         string // what was being done, e.g. "POST tools/call"
	StatusCode int    // HTTP status when there was one, else 0
	// WWWAuthenticate is the WWW-Authenticate value of a 401 or 403 (the
	// challenges, several header lines joined with ", "); "" otherwise.
	WWWAuthenticate string
	Err             error // the cause; context.Canceled/DeadlineExceeded on cancellation
}

func (e *TransportError) Error() string {
	s := "transport: " + e.Op
	if e.StatusCode != 0 {
		s += fmt.Sprintf(": HTTP %d", e.StatusCode)
	}
	if e.Err != nil {
		s += ": " + e.Err.Error()
	}
	return s
}
func (e *TransportError) Unwrap() error { return e.Err }
func (*TransportError) MCPCode() Code   { return CodeTransport }

// ProtocolError: the server's answer broke MCP or JSON-RPC (see CodeProtocol).
type ProtocolError struct {
	Op     string // what was being done, e.g. "tools/call get-sum"
	Reason string
	// Path is a JSON Pointer into structuredContent for an outputSchema
	// mismatch, or the block ("content[2]") for a bad content block.
	Path string
	Err  error
}

func (e *ProtocolError) Error() string {
	s := "protocol: "
	if e.Op != "" {
		s += e.Op + ": "
	}
	s += e.Reason
	if e.Err != nil {
		s += ": " + e.Err.Error()
	}
	return s
}
func (e *ProtocolError) Unwrap() error { return e.Err }
func (*ProtocolError) MCPCode() Code   { return CodeProtocol }

// JSONRPCError: the server answered a request with a JSON-RPC error; code,
// message and data are kept as sent.
type JSONRPCError struct {
	Method  string
	Code    int64
	Message string
	Data    json.RawMessage
}

func (e *JSONRPCError) Error() string {
	s := fmt.Sprintf("%s: JSON-RPC error %d: %s", e.Method, e.Code, e.Message)
	if len(e.Data) > 0 {
		s += " (data: " + string(e.Data) + ")"
	}
	return s
}
func (*JSONRPCError) MCPCode() Code { return CodeJSONRPC }

// ToolError: the tool ran and reported failure (isError: true). The content
// is kept so the caller can show it or feed it back to a model.
type ToolError struct {
	Tool   string
	Result *mcp.CallToolResult
	// RetryGuidance is the toolwire retry advice under
	// _meta["dev.toolwire/retry"], nil when the server sent none.
	RetryGuidance *mcp.RetryGuidance
}

func (e *ToolError) Error() string {
	var texts []string
	if e.Result != nil {
		for _, c := range e.Result.Content {
			if t, ok := c.(*mcp.TextContent); ok {
				texts = append(texts, t.Text)
			}
		}
	}
	msg := strings.Join(texts, " ")
	if msg == "" {
		msg = "the tool reported an error"
	}
	return fmt.Sprintf("tool %q failed: %s", e.Tool, msg)
}
func (*ToolError) MCPCode() Code { return CodeToolError }

// Content returns the blocks the failed tool returned.
func (e *ToolError) Content() []mcp.Content {
	if e.Result == nil {
		return nil
	}
	return e.Result.Content
}

// SessionInvalidError: the server rejected the session twice in a row, even
// after a fresh initialize, or rejected the initialize meant to replace it
// (Op is then "initialize"); see CodeSessionInvalid.
type SessionInvalidError struct {
	Op        string
	SessionID string // the session rejected last (the lost one, when the re-initialization was refused)
	// StatusCode is the HTTP status of the last rejection (404, or 400 with
	// JSON-RPC -32000 naming the session); 0 when there was none.
	StatusCode int
}

func (e *SessionInvalidError) Error() string {
	status := ""
	if e.StatusCode != 0 {
		status = fmt.Sprintf(" (HTTP %d)", e.StatusCode)
	}
	return fmt.Sprintf("session invalid: %s: the server rejected session %q%s again after re-initializing", e.Op, e.SessionID, status)
}
func (*SessionInvalidError) MCPCode() Code { return CodeSessionInvalid }
