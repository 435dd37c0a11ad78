package main

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/toolwire/toolwire/internal/backoff"
	"github.com/toolwire/toolwire/jsonrpc"
	"github.com/toolwire/toolwire/mcp"
	"github.com/toolwire/toolwire/server"
)

// The task fixtures of the tasks-extension scenarios (tasks-*): the same
// handlers run as plain calls or as tasks, as the request allows.

func registerTasks(s *server.Server) error {
	type greetArgs struct {
		Name string `json:"name"`
	}
	type computeArgs struct {
		Seconds float64 `json:"seconds" jsonschema:"how long to compute, in seconds"`
		Label   string  `json:"label,omitempty"`
	}
	type deleteArgs struct {
		Filename string `json:"filename"`
	}
	confirm := func(message string) *mcp.ElicitParams {
		return form(message, `{"type":"object","properties":{"confirm":{"type":"boolean"},"name":{"type":"string"}}}`)
	}
	for _, err := range []error{
		server.AddTool(s, &mcp.Tool{Name: "greet", Description: "Greets someone, at once"},
			func(_ context.Context, _ *server.CallRequest, in greetArgs) (string, error) {
				return fmt.Sprintf("Hello, %s!", in.Name), nil
			}),
		server.AddTool(s, &mcp.Tool{Name: "slow_compute", Description: "Computes for the given number of seconds; runs as a task when it may"},
			func(ctx context.Context, req *server.CallRequest, in computeArgs) (string, error) {
				req.SetTaskStatus("computing " + in.Label)
				if err := backoff.Sleep(ctx, time.Duration(in.Seconds*float64(time.Second))); err != nil {
					return "", err
				}
				return fmt.Sprintf("computed %q in %gs", in.Label, in.Seconds), nil
			}, server.WithTaskSupport(mcp.TaskOptional)),
		server.AddTool(s, &mcp.Tool{Name: "failing_job", Description: "Fails after a second, as a tool error; runs only as a task"},
			func(ctx context.Context, _ *server.CallRequest, _ noArgs) (string, error) {
				if err := backoff.Sleep(ctx, time.Second); err != nil {
					return "", err
				}
				return "", fmt.Errorf("the job failed, as it always does")
			}, server.WithTaskSupport(mcp.TaskRequired)),
		server.AddTool(s, &mcp.Tool{Name: "protocol_error_job", Description: "Ends in a protocol (JSON-RPC) error"},
			func(ctx context.Context, _ *server.CallRequest, _ noArgs) (string, error) {
				if err := backoff.Sleep(ctx, 200*time.Millisecond); err != nil {
					return "", err
				}
				return "", jsonrpc.NewError(jsonrpc.CodeInternalError, "simulated internal failure")
			}, server.WithTaskSupport(mcp.TaskOptional)),
		server.AddTool(s, &mcp.Tool{Name: "confirm_delete", Description: "Asks the user to confirm, then deletes (pretends to)"},
			func(ctx context.Context, req *server.CallRequest, in deleteArgs) (string, error) {
				res, err := req.Elicit(ctx, confirm(fmt.Sprintf("Delete %s?", in.Filename)), server.InputKey("confirm"))
				if err != nil {
					return "", err
				}
				if res.Action != mcp.ActionAccept {
					return fmt.Sprintf("kept %s (%s)", in.Filename, res.Action), nil
				}
				return "deleted " + in.Filename, nil
			}, server.WithTaskSupport(mcp.TaskOptional)),
		server.AddTool(s, &mcp.Tool{Name: "multi_input", Description: "Asks two questions at once"},
			func(ctx context.Context, req *server.CallRequest, _ noArgs) (string, error) {
				answers, err := req.Input(ctx, map[string]mcp.InputRequest{
					"first":  elicitRequest(confirm("First question")),
					"second": elicitRequest(confirm("Second question")),
				})
				if err != nil {
					return "", err
				}
				return fmt.Sprintf("answered %d questions", len(answers)), nil
			}, server.WithTaskSupport(mcp.TaskOptional)),
		server.AddTool(s, &mcp.Tool{Name: "test_tool_with_task", Description: "Asks the user's name, then greets them as a task"},
			func(ctx context.Context, req *server.CallRequest, _ noArgs) (string, error) {
				res, err := req.Elicit(ctx, form("What is your name?", nameSchema), server.InputKey("user_name"))
				if err != nil {
					return "", err
				}
				if err := req.StartTask(ctx); err != nil {
					return "", err
				}
				if err := backoff.Sleep(ctx, 200*time.Millisecond); err != nil {
					return "", err
				}
				name, _ := res.Content["name"].(string)
				return fmt.Sprintf("Hello, %s!", name), nil
			}, server.WithDeferredTask(mcp.TaskRequired)),
	} {
		if err != nil {
			return err
		}
	}
	return nil
}

// elicitRequest is an elicitation/create input request.
func elicitRequest(p *mcp.ElicitParams) mcp.InputRequest {
	raw, _ := json.Marshal(p)
	return mcp.InputRequest{Method: mcp.MethodElicitationCreate, Params: raw}
}
