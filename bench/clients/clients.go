// Package clients names the MCP clients the client workload (C1) compares
// and what each must do: connect to a Streamable HTTP endpoint in a
// 2025-11-25 session, then call the echo tool through the library's
// idiomatic API and check every reply. Each subpackage adapts one library;
// cmd/cli-* runs each in its own process (internal/climain).
package clients

import (
	"context"
	"fmt"
	"net/http"
)

// Names of the clients, in the order of the first repetition.
const (
	Bare     = "bare"
	Toolwire = "toolwire"
	GoSDK    = "go-sdk"
	MCPGo    = "mcp-go"
)

// All lists every client; the bare caller first, as every ratio is to it.
var All = []string{Bare, Toolwire, GoSDK, MCPGo}

// LegacyVersion is the session revision every client is pinned to: the one
// the floor and all three libraries speak with sessions.
const LegacyVersion = "2025-11-25"

// Caller is one connected client. Echo is safe for concurrent use, as each
// library's client is: the workload shares one Caller among its callers.
type Caller interface {
	// Echo calls the echo tool with msg and checks the reply (CheckEcho).
	Echo(ctx context.Context, msg string) error
	// Close ends the session.
	Close() error
}

// Connect connects a client to the MCP endpoint url. hc is the HTTP client
// the library must use; nil means the library's own default.
type Connect func(ctx context.Context, url string, hc *http.Client) (Caller, error)

// EchoArgs is the echo tool's arguments as every client passes them: a Go
// struct the library encodes.
type EchoArgs struct {
	Message string `json:"message"`
}

// CheckEcho checks an echo result, given as every library exposes it:
// whether the tool failed, how many content blocks came back, and the first
// block's text (isText false when it is not a text block). The echo tool
// returns its message as exactly one text block.
func CheckEcho(want string, isError bool, blocks int, text string, isText bool) error {
	switch {
	case isError:
		return fmt.Errorf("echo: isError result")
	case blocks != 1:
		return fmt.Errorf("echo: %d content blocks, want 1", blocks)
	case !isText:
		return fmt.Errorf("echo: the content block is not text")
	case text != want:
		return fmt.Errorf("echo returned %.100q, want %q", text, want)
	}
	return nil
}

// CheckEchoBlocks is CheckEcho for a result's content blocks as the library
// returns them: text reads a block's text and tells whether it is a text
// block, the one step each library spells its own way.
func CheckEchoBlocks[B any](want string, isError bool, content []B, text func(B) (string, bool)) error {
	var first string
	var isText bool
	if len(content) > 0 {
		first, isText = text(content[0])
	}
	return CheckEcho(want, isError, len(content), first, isText)
}

// TextOf is CheckEchoBlocks's text reader for a library whose content
// blocks B hold text blocks as *T: text reads one, and a block of any
// other type is not text.
func TextOf[B, T any](text func(*T) string) func(B) (string, bool) {
	return func(b B) (string, bool) {
		if t, ok := any(b).(*T); ok {
			return text(t), true
		}
		return "", false
	}
}
