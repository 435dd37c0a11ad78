package testmcp_test

import (
	"context"
	"encoding/json"
	"sync/atomic"
	"testing"

	"github.com/toolwire/toolwire/internal/testmcp"
	"github.com/toolwire/toolwire/internal/testwait"
	"github.com/toolwire/toolwire/mcp"
	"github.com/toolwire/toolwire/server"
)

// A NeverAnswer client is asked, counts the question and holds it until
// the call is cancelled.
func TestNeverAnswer(t *testing.T) {
	s := server.New(mcp.Implementation{Name: "testmcp", Version: "1"})
	if err := server.AddTool(s, &mcp.Tool{Name: "ask"}, func(ctx context.Context, req *server.CallRequest, _ struct{}) (string, error) {
		_, err := req.Elicit(ctx, &mcp.ElicitParams{Message: "Your name?", RequestedSchema: json.RawMessage(`{"type":"object"}`)})
		return "answered", err
	}); err != nil {
		t.Fatal(err)
	}
	var asked atomic.Int32
	c := testmcp.ConnectHTTP(t, s, testmcp.NeverAnswer(t, &asked))
	ctx, cancel := context.WithCancel(testwait.Context(t))
	done := make(chan error, 1)
	go func() {
		_, err := c.CallTool(ctx, "ask", nil)
		done <- err
	}()
	testwait.WaitFor(t, "the client asked", func() bool { return asked.Load() == 1 })
	select {
	case err := <-done:
		t.Fatalf("the call ended while its question was unanswered: %v", err)
	default:
	}
	cancel()
	if err := testwait.Recv(t, done, "the cancelled call's end"); err == nil {
		t.Fatal("the cancelled call succeeded")
	}
}
