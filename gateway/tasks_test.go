package gateway_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/toolwire/toolwire/client"
	"github.com/toolwire/toolwire/gateway"
	"github.com/toolwire/toolwire/internal/testwait"
	"github.com/toolwire/toolwire/jsonrpc"
	"github.com/toolwire/toolwire/mcp"
	"github.com/toolwire/toolwire/server"
)

// taskServer is an upstream whose tool "slow" runs as a task when asked:
// it reports the upstream task id it ran as, once released, or its
// cancellation.
type taskServer struct {
	*server.Server
	release   chan struct{}
	mu        sync.Mutex
	upTasks   []string
	cancelled chan string
}

func newTaskServer(t *testing.T, opts ...server.Option) *taskServer {
	ts := &taskServer{Server: server.New(mcp.Implementation{Name: "jobs", Version: "1"}, opts...),
		release: make(chan struct{}), cancelled: make(chan string, 10)}
	must(server.AddTool(ts.Server, &mcp.Tool{Name: "slow"}, func(ctx context.Context, req *server.CallRequest, in echoIn) (echoOut, error) {
		id := req.TaskID()
		ts.mu.Lock()
		ts.upTasks = append(ts.upTasks, id)
		ts.mu.Unlock()
		select {
		case <-ts.release:
			return echoOut{Echo: in.Text, From: "task " + id}, nil
		case <-ctx.Done():
			ts.cancelled <- id
			return echoOut{}, ctx.Err()
		}
	}, server.WithTaskSupport(mcp.TaskOptional)))
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = ts.Shutdown(ctx)
	})
	return ts
}

// TestTaskAcrossTheHop: a task-capable upstream tool keeps its
// taskSupport; a call asking for a task gets one of the gateway's tasks,
// which tasks/get shows and whose result is the upstream task's; the
// upstream ran it as a task; tasks/cancel at the gateway cancels the
// upstream's task. Both eras.
func TestTaskAcrossTheHop(t *testing.T) {
	for _, era := range []mcp.Era{mcp.EraLegacy, mcp.EraModern} {
		t.Run(era.String(), func(t *testing.T) {
			ts := newTaskServer(t)
			g := newGateway(t, gateway.Config{Upstreams: []gateway.Upstream{{Name: "j", Server: ts.Server}}})
			c := downstream(t, g, client.WithEra(era))
			ctx := t.Context()
			tools, err := c.ListTools(ctx)
			if err != nil {
				t.Fatal(err)
			}
			// 2026-07-28 lists no execution: the server decides per call.
			if len(tools) != 1 || era == mcp.EraLegacy && (tools[0].Execution == nil || tools[0].Execution.TaskSupport != mcp.TaskOptional) {
				t.Fatalf("listed %s", testwait.MustJSON(t, tools))
			}

			st, err := c.CallToolTask(ctx, "j__slow", map[string]any{"text": "done"})
			if err != nil || st.Task == nil {
				t.Fatalf("CallToolTask: %+v, %v", st, err)
			}
			got, err := c.GetTask(ctx, st.Task.TaskID)
			if err != nil || got.Status != mcp.TaskWorking {
				t.Fatalf("tasks/get: %+v, %v", got, err)
			}
			close(ts.release)
			res, err := st.Wait(ctx)
			if err != nil {
				t.Fatal(err)
			}
			ts.mu.Lock()
			upTasks := append([]string(nil), ts.upTasks...)
			ts.mu.Unlock()
			if len(upTasks) != 1 || upTasks[0] == "" {
				t.Fatalf("the upstream ran %q, want one task", upTasks)
			}
			if !strings.Contains(string(res.StructuredContent), `"from":"task `+upTasks[0]+`"`) {
				t.Fatalf("result %s", res.StructuredContent)
			}

			// Cancelling the gateway's task cancels the upstream's.
			ts.release = make(chan struct{})
			st, err = c.CallToolTask(ctx, "j__slow", map[string]any{"text": "never"})
			if err != nil || st.Task == nil {
				t.Fatalf("CallToolTask: %+v, %v", st, err)
			}
			// Wait until the upstream runs it.
			testwait.WaitFor(t, "the upstream task", func() bool { ts.mu.Lock(); defer ts.mu.Unlock(); return len(ts.upTasks) == 2 })
			if err := c.CancelTask(ctx, st.Task.TaskID); err != nil {
				t.Fatal(err)
			}
			ts.mu.Lock()
			second := ts.upTasks[1]
			ts.mu.Unlock()
			if id := <-ts.cancelled; id != second || id == "" {
				t.Fatalf("cancelled upstream task %q, want %q", id, second)
			}
			got, err = c.GetTask(ctx, st.Task.TaskID)
			if err != nil || got.Status != mcp.TaskCancelled {
				t.Fatalf("tasks/get after cancel: %+v, %v", got, err)
			}
		})
	}
}

// TestTaskCancelledBeforeUpstreamAnswers: a gateway task cancelled while
// the upstream has made its task but not yet answered with the task's id
// still cancels the upstream's task once that answer comes, instead of
// leaving it to run until it expires. Both eras.
func TestTaskCancelledBeforeUpstreamAnswers(t *testing.T) {
	for _, era := range []mcp.Era{mcp.EraLegacy, mcp.EraModern} {
		t.Run(era.String(), func(t *testing.T) {
			answer := make(chan struct{})
			// The upstream's answer to tools/call (its task's id) waits
			// until the test lets it go, as one still on the wire would.
			holdAnswer := func(next jsonrpc.MethodHandler) jsonrpc.MethodHandler {
				return func(ctx context.Context, req *jsonrpc.Request) (any, error) {
					res, err := next(ctx, req)
					if req.Method == mcp.MethodCallTool {
						<-answer
					}
					return res, err
				}
			}
			ts := newTaskServer(t, server.WithMiddleware(holdAnswer))
			g := newGateway(t, gateway.Config{Upstreams: []gateway.Upstream{{Name: "j", Server: ts.Server}}})
			c := downstream(t, g, client.WithEra(era))
			ctx := t.Context()
			if _, err := c.ListTools(ctx); err != nil {
				t.Fatal(err)
			}
			st, err := c.CallToolTask(ctx, "j__slow", map[string]any{"text": "never"})
			if err != nil || st.Task == nil {
				t.Fatalf("CallToolTask: %+v, %v", st, err)
			}
			testwait.WaitFor(t, "the upstream task", func() bool { ts.mu.Lock(); defer ts.mu.Unlock(); return len(ts.upTasks) == 1 })
			if err := c.CancelTask(ctx, st.Task.TaskID); err != nil {
				t.Fatal(err)
			}
			close(answer)
			ts.mu.Lock()
			up := ts.upTasks[0]
			ts.mu.Unlock()
			if id := testwait.Recv(t, ts.cancelled, "the upstream task's cancellation"); id != up || id == "" {
				t.Fatalf("cancelled upstream task %q, want %q", id, up)
			}
			got, err := c.GetTask(ctx, st.Task.TaskID)
			if err != nil || got.Status != mcp.TaskCancelled {
				t.Fatalf("tasks/get after cancel: %+v, %v", got, err)
			}
		})
	}
}

// TestPlainCallOfTaskTool: a task-capable tool called without a task is
// forwarded as a plain call, as before.
func TestPlainCallOfTaskTool(t *testing.T) {
	ts := newTaskServer(t)
	close(ts.release)
	g := newGateway(t, gateway.Config{Upstreams: []gateway.Upstream{{Name: "j", Server: ts.Server}}})
	c := downstream(t, g, client.WithEra(mcp.EraLegacy))
	res, err := c.CallTool(t.Context(), "j__slow", map[string]any{"text": "now"})
	if err != nil || !strings.Contains(string(res.StructuredContent), `"from":"task "`) {
		t.Fatalf("%+v, %v", res, err)
	}
}
