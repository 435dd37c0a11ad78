// Package testtools holds the tools that tests across the tree register on
// a server to have something to call: an echo whose answer shows that a
// tools/call went through with its arguments intact.
package testtools

import (
	"context"
	"testing"

	"github.com/toolwire/toolwire/mcp"
	"github.com/toolwire/toolwire/server"
)

// EchoInput is the echo tool's input: {"message": "..."}.
type EchoInput struct {
	Message string `json:"message"`
}

// AddEcho registers the tool "echo" (description "echoes") on s: its text
// result is prefix followed by the message it was given. opts are passed
// to server.AddTool (a task-support level, say). A registration error
// fails the test.
func AddEcho(t testing.TB, s *server.Server, prefix string, opts ...server.ToolOption) {
	t.Helper()
	echo := func(_ context.Context, _ *server.CallRequest, in EchoInput) (string, error) {
		return prefix + in.Message, nil
	}
	if err := server.AddTool(s, &mcp.Tool{Name: "echo", Description: "echoes"}, echo, opts...); err != nil {
		t.Fatal(err)
	}
}
