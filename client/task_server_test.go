package client_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/toolwire/toolwire/client"
	"github.com/toolwire/toolwire/internal/testtools"
	"github.com/toolwire/toolwire/internal/testwait"
	"github.com/toolwire/toolwire/jsonrpc"
	"github.com/toolwire/toolwire/mcp"
	"github.com/toolwire/toolwire/server"
)

// Tasks against a real toolwire server (server.WithTaskSupport), both eras.

// taskToolServer is a toolwire server with the task tools of
// testtools.AddTaskTools ("slow", "ask" and "must") and "typed"
// (optional), which has an outputSchema.
func taskToolServer(t *testing.T, release <-chan struct{}) *server.Server {
	t.Helper()
	s := server.New(mcp.Implementation{Name: "tasks", Version: "1"}, server.WithLimits(server.Limits{TaskPollInterval: time.Millisecond}))
	testtools.AddTaskTools(t, s, release)
	type sum struct {
		Sum int `json:"sum"`
	}
	err := server.AddTool(s, &mcp.Tool{Name: "typed"}, func(ctx context.Context, req *server.CallRequest, in struct {
		A int `json:"a"`
		B int `json:"b"`
	}) (sum, error) {
		return sum{in.A + in.B}, nil
	}, server.WithTaskSupport(mcp.TaskOptional))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestTasksAgainstToolwireServer runs task tools of a toolwire server, in
// both eras over HTTP and in memory.
func TestTasksAgainstToolwireServer(t *testing.T) {
	release := make(chan struct{})
	close(release)
	s := taskToolServer(t, release)
	handler := client.WithElicitationHandler(func(context.Context, *mcp.ElicitParams) (*mcp.ElicitResult, error) {
		return &mcp.ElicitResult{Action: mcp.ActionAccept, Content: map[string]any{"name": "Ada"}}, nil
	})
	for name, c := range promptTransports(t, s, handler, client.WithLimits(client.Limits{MinTaskPoll: time.Millisecond, MaxTaskPoll: 10 * time.Millisecond})) {
		t.Run(name, func(t *testing.T) {
			ctx := testwait.Context(t)
			for tool, want := range map[string]string{"slow": "slept", "ask": "hello Ada", "must": "as a task: true"} {
				start, err := c.CallToolTask(ctx, tool, nil)
				if err != nil {
					t.Fatalf("%s: %v", tool, err)
				}
				res, err := start.Wait(ctx)
				if err != nil {
					t.Fatalf("%s: %v", tool, err)
				}
				if tc, ok := res.Content[0].(*mcp.TextContent); !ok || tc.Text != want {
					t.Errorf("%s: %+v, want %q", tool, res.Content, want)
				}
				if start.Task != nil {
					d, err := c.GetTask(ctx, start.Task.TaskID)
					if err != nil || d.Status != mcp.TaskCompleted {
						t.Errorf("%s: GetTask: %+v %v", tool, d, err)
					}
				}
			}
			got, err := client.CallToolTaskAs[struct {
				Sum int `json:"sum"`
			}](ctx, c, "typed", map[string]int{"a": 2, "b": 3})
			if err != nil || got.Sum != 5 {
				t.Errorf("typed: %+v %v", got, err)
			}
			if !isModern(name) {
				tasks, err := c.ListTasks(ctx)
				if err != nil || len(tasks) == 0 {
					t.Errorf("ListTasks: %v %v", tasks, err)
				}
			}
			// A plain call of a tool that runs only as a task.
			_, err = c.CallTool(ctx, "must", nil)
			if isModern(name) != client.IsTaskRequired(err) || err == nil {
				t.Errorf("plain call of a required-task tool: %v (IsTaskRequired %v)", err, client.IsTaskRequired(err))
			}
			_, err = c.GetTask(ctx, "no-such-task")
			var je *client.JSONRPCError
			if !errors.As(err, &je) || je.Code != jsonrpc.CodeInvalidParams {
				t.Errorf("unknown task: %v", err)
			}
		})
	}
}

// TestCancelTaskAgainstToolwireServer cancels a running task: the wait
// ends with a *TaskCancelledError.
func TestCancelTaskAgainstToolwireServer(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	s := taskToolServer(t, release)
	for name, c := range promptTransports(t, s, client.WithLimits(client.Limits{MinTaskPoll: time.Millisecond, MaxTaskPoll: 10 * time.Millisecond})) {
		t.Run(name, func(t *testing.T) {
			ctx := testwait.Context(t)
			start, err := c.CallToolTask(ctx, "slow", nil)
			if err != nil || start.Task == nil {
				t.Fatalf("%+v %v", start, err)
			}
			saw := make(chan string, 16)
			done := make(chan error, 1)
			go func() {
				_, err := start.Wait(ctx, client.WithTaskStatus(func(tk mcp.Task) { saw <- tk.StatusMessage }))
				done <- err
			}()
			for m := range saw {
				if m == "halfway" {
					break
				}
			}
			if err := c.CancelTask(ctx, start.Task.TaskID); err != nil {
				t.Fatal(err)
			}
			err = <-done
			var ce *client.TaskCancelledError
			if !errors.As(err, &ce) {
				t.Errorf("wait: %v", err)
			}
		})
	}
}

// TestCallToolTaskCancelledBeforeTheAnswer: when CallToolTask's context
// ends after the server made the task but before its answer arrived, the
// call returns at once with the context's error, the request itself is
// not cancelled (a task is cancelled with tasks/cancel, never with
// notifications/cancelled), and the task is cancelled once its id comes.
// Both eras, over HTTP and in memory.
func TestCallToolTaskCancelledBeforeTheAnswer(t *testing.T) {
	created := make(chan string, 1)
	proceed := make(chan struct{})
	cancelledOnTheWire := make(chan error, 1)
	// The server's answer to tools/call waits until the test lets it go,
	// as one still on its way would.
	hold := func(next jsonrpc.MethodHandler) jsonrpc.MethodHandler {
		return func(ctx context.Context, req *jsonrpc.Request) (any, error) {
			res, err := next(ctx, req)
			if req.Method != mcp.MethodCallTool {
				return res, err
			}
			b, _ := json.Marshal(res)
			var made struct {
				Task struct {
					TaskID string `json:"taskId"`
				} `json:"task"`
			}
			_ = json.Unmarshal(b, &made)
			created <- made.Task.TaskID
			<-proceed
			cancelledOnTheWire <- ctx.Err()
			return res, err
		}
	}
	s := server.New(mcp.Implementation{Name: "tasks", Version: "1"}, server.WithMiddleware(hold))
	testtools.AddTaskTools(t, s, make(chan struct{})) // "slow" runs until cancelled
	for name, c := range promptTransports(t, s) {
		t.Run(name, func(t *testing.T) {
			ctx := testwait.Context(t)
			callCtx, cancel := context.WithCancel(ctx)
			errc := make(chan error, 1)
			go func() {
				_, err := c.CallToolTask(callCtx, "slow", nil)
				errc <- err
			}()
			id := testwait.Recv(t, created, "the server to make the task")
			if id == "" {
				t.Fatal("the server answered tools/call without a task")
			}
			cancel()
			if err := testwait.Recv(t, errc, "CallToolTask to return"); !errors.Is(err, context.Canceled) {
				t.Fatalf("CallToolTask after its context ended: %v, want context.Canceled", err)
			}
			proceed <- struct{}{}
			if err := testwait.Recv(t, cancelledOnTheWire, "the answer to leave"); err != nil {
				t.Errorf("the tools/call that made a task was cancelled on the wire (%v): a task is cancelled with tasks/cancel", err)
			}
			testwait.WaitFor(t, "the task to be cancelled", func() bool {
				got, err := c.GetTask(ctx, id)
				return err == nil && got.Status == mcp.TaskCancelled
			})
		})
	}
}
