package testtools

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/toolwire/toolwire/mcp"
	"github.com/toolwire/toolwire/server"
)

// AddTaskTools registers on s the tools that task tests across the tree
// call, each with the task support that decides how a client may run it:
//   - "slow" (optional): reports the status message "halfway", then
//     returns "slept" once release is closed (or fails with the call's
//     cancellation);
//   - "ask" (optional): elicits a name ("Who are you?", {"name": string},
//     required) and returns "hello <name>";
//   - "must" (required): returns "as a task: true" when it ran as a task.
//
// A registration error fails the test.
func AddTaskTools(t testing.TB, s *server.Server, release <-chan struct{}) {
	t.Helper()
	type none struct{}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(server.AddTool(s, &mcp.Tool{Name: "slow"}, func(ctx context.Context, req *server.CallRequest, _ none) (string, error) {
		req.SetTaskStatus("halfway")
		select {
		case <-release:
		case <-ctx.Done():
			return "", ctx.Err()
		}
		return "slept", nil
	}, server.WithTaskSupport(mcp.TaskOptional)))
	must(server.AddTool(s, &mcp.Tool{Name: "ask"}, func(ctx context.Context, req *server.CallRequest, _ none) (string, error) {
		res, err := req.Elicit(ctx, &mcp.ElicitParams{Message: "Who are you?", RequestedSchema: json.RawMessage(`{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}`)})
		if err != nil {
			return "", err
		}
		return fmt.Sprintf("hello %v", res.Content["name"]), nil
	}, server.WithTaskSupport(mcp.TaskOptional)))
	must(server.AddTool(s, &mcp.Tool{Name: "must"}, func(ctx context.Context, req *server.CallRequest, _ none) (string, error) {
		return fmt.Sprintf("as a task: %v", req.TaskID() != ""), nil
	}, server.WithTaskSupport(mcp.TaskRequired)))
}
