package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/toolwire/toolwire/internal/testwait"
	"github.com/toolwire/toolwire/jsonrpc"
	"github.com/toolwire/toolwire/mcp"
	"github.com/toolwire/toolwire/server"
	"github.com/toolwire/toolwire/taskstore"
)

// taskServer hosts task tools: "job" asks for a name and greets; "block"
// waits for its context and reports why it ended on ended; "fail" returns
// a tool error; "plain" forbids tasks; "must" requires them.
func taskServer(t *testing.T, ended chan error, opts ...server.Option) *server.Server {
	t.Helper()
	s := server.New(mcp.Implementation{Name: "tasks", Version: "1"}, opts...)
	type none struct{}
	add := func(name string, support mcp.TaskSupport, h func(ctx context.Context, req *server.CallRequest) (string, error)) {
		t.Helper()
		if err := server.AddTool(s, &mcp.Tool{Name: name}, func(ctx context.Context, req *server.CallRequest, _ none) (string, error) {
			return h(ctx, req)
		}, server.WithTaskSupport(support)); err != nil {
			t.Fatal(err)
		}
	}
	add("job", mcp.TaskOptional, func(ctx context.Context, req *server.CallRequest) (string, error) {
		if req.TaskID() == "" {
			return "", jsonrpc.NewError(jsonrpc.CodeInternalError, "job ran outside a task")
		}
		_ = req.Progress(ctx, 1, 2, "asking")
		res, err := req.Elicit(ctx, nameForm, server.InputKey("who"))
		if err != nil {
			return "", err
		}
		return "Hello, " + res.Content["name"].(string) + "!", nil
	})
	add("block", mcp.TaskOptional, func(ctx context.Context, req *server.CallRequest) (string, error) {
		<-ctx.Done()
		if ended != nil {
			ended <- context.Cause(ctx)
		}
		return "", ctx.Err()
	})
	add("fail", mcp.TaskRequired, func(ctx context.Context, req *server.CallRequest) (string, error) {
		return "", errorString("it broke")
	})
	add("plain", mcp.TaskForbidden, func(ctx context.Context, req *server.CallRequest) (string, error) { return "plain", nil })
	return s
}

type errorString string

func (e errorString) Error() string { return string(e) }

// legacyTaskPeer opens a 2025-11-25 session whose client can elicit.
func legacyTaskPeer(t *testing.T, s *server.Server) (*peer, *mcp.InitializeResult) {
	t.Helper()
	p := connect(t, s)
	return p, p.initializeWith("2025-11-25", map[string]any{"elicitation": map[string]any{}})
}

func startTask(t *testing.T, p *peer, tool string, extra map[string]any) mcp.Task {
	t.Helper()
	params := map[string]any{"name": tool, "task": map[string]any{"ttl": 60000}}
	for k, v := range extra {
		params[k] = v
	}
	var created mcp.CreateTaskResult
	decodeResult(t, p.call("tools/call", params), &created)
	if created.Task.Status != mcp.TaskWorking || len(created.Task.TaskID) != 32 || created.Task.TTL == nil || *created.Task.TTL != time.Minute {
		t.Fatalf("created %+v", created.Task)
	}
	return created.Task
}

// waitStatus polls tasks/get until the task has status want.
func waitStatus(t *testing.T, p *peer, id string, want mcp.TaskStatus, meta map[string]any) *mcp.DetailedTask {
	t.Helper()
	var d mcp.DetailedTask
	seen := mcp.TaskStatus("")
	testwait.WaitFor(t, fmt.Sprintf("task %s to be %s", id, want), func() bool {
		params := map[string]any{"taskId": id}
		if meta != nil {
			params["_meta"] = meta
		}
		d = mcp.DetailedTask{}
		decodeResult(t, p.call("tasks/get", params), &d)
		if d.Status != seen && d.Status != want {
			seen = d.Status
			t.Logf("task %s is %s (%s), waiting for %s", id, d.Status, d.StatusMessage, want)
		}
		return d.Status == want
	})
	return &d
}

func TestTaskCapabilitiesPerEra(t *testing.T) {
	s := taskServer(t, nil)
	legacy := s.CapabilitiesFor(mcp.EraLegacy)
	if !strings.Contains(string(legacy.Tasks), `"requests":{"tools":{"call":{}}}`) || legacy.Extensions != nil {
		t.Errorf("legacy capabilities: tasks %s, extensions %v", legacy.Tasks, legacy.Extensions)
	}
	modern := s.CapabilitiesFor(mcp.EraModern)
	if modern.Tasks != nil || modern.Extensions[mcp.ExtensionTasks] == nil {
		t.Errorf("2026 capabilities: tasks %s, extensions %v", modern.Tasks, modern.Extensions)
	}
	// A server without task tools declares neither.
	plain := server.New(mcp.Implementation{Name: "p", Version: "1"})
	if c := plain.CapabilitiesFor(mcp.EraLegacy); c.Tasks != nil {
		t.Errorf("a server without task tools declares tasks: %s", c.Tasks)
	}
}

func TestTaskLegacyLifecycle(t *testing.T) {
	s := taskServer(t, nil)
	p, _ := legacyTaskPeer(t, s)
	var list mcp.ListToolsResult
	decodeResult(t, p.call("tools/list", nil), &list)
	for _, tool := range list.Tools {
		if tool.Name == "job" && (tool.Execution == nil || tool.Execution.TaskSupport != mcp.TaskOptional) {
			t.Errorf("job's execution: %+v", tool.Execution)
		}
	}
	task := startTask(t, p, "job", nil)

	// tasks/result waits; the elicitation arrives (on its stream) with
	// the related-task _meta, and the task is input_required meanwhile.
	_, resultCh := p.start("tasks/result", map[string]any{"taskId": task.TaskID})
	req := p.request()
	if req.Method != mcp.MethodElicitationCreate || !strings.Contains(string(req.Params), `"io.modelcontextprotocol/related-task":{"taskId":"`+task.TaskID+`"}`) {
		t.Fatalf("server asked %s %s", req.Method, req.Params)
	}
	d := waitStatus(t, p, task.TaskID, mcp.TaskInputRequired, nil)
	if d.StatusMessage != "1/2: asking" {
		t.Errorf("status message %q, want the progress", d.StatusMessage)
	}
	p.send(&jsonrpc.Response{ID: req.ID, Result: json.RawMessage(`{"action":"accept","content":{"name":"Ada"}}`)})
	res := callResult(t, p.wait(resultCh))
	if text(t, res) != "Hello, Ada!" || !strings.Contains(string(testwait.MustJSON(t, res.Meta)), task.TaskID) {
		t.Errorf("tasks/result: %q meta %v", text(t, res), res.Meta)
	}
	waitStatus(t, p, task.TaskID, mcp.TaskCompleted, nil)

	var page mcp.ListTasksResult
	decodeResult(t, p.call("tasks/list", map[string]any{}), &page)
	if len(page.Tasks) != 1 || page.Tasks[0].TaskID != task.TaskID || page.Tasks[0].Status != mcp.TaskCompleted {
		t.Errorf("tasks/list: %+v", page)
	}
	wantError(t, p.call("tasks/cancel", map[string]any{"taskId": task.TaskID}), jsonrpc.CodeInvalidParams)
	wantError(t, p.call("tasks/get", map[string]any{"taskId": "nope"}), jsonrpc.CodeInvalidParams)
	wantError(t, p.call("tasks/list", map[string]any{"cursor": "bogus"}), jsonrpc.CodeInvalidParams)

	// Status changes were announced to the session (the last may still be
	// on its way).
	seen := map[mcp.TaskStatus]bool{}
	testwait.WaitFor(t, "a completed status notification", func() bool {
		for len(p.notes) > 0 {
			n := <-p.notes
			if n.Method == mcp.NotificationTaskStatus {
				var d mcp.DetailedTask
				if err := json.Unmarshal(n.Params, &d); err != nil || d.TaskID != task.TaskID {
					t.Errorf("status notification %s: %v", n.Params, err)
				}
				seen[d.Status] = true
			}
		}
		return seen[mcp.TaskCompleted]
	})
}

func TestTaskSupportEnforced(t *testing.T) {
	s := taskServer(t, nil)
	p, _ := legacyTaskPeer(t, s)
	wantError(t, p.call("tools/call", map[string]any{"name": "plain", "task": map[string]any{}}), jsonrpc.CodeMethodNotFound)
	wantError(t, p.call("tools/call", map[string]any{"name": "fail"}), jsonrpc.CodeMethodNotFound)
	wantError(t, p.call("tools/call", map[string]any{"name": "job", "task": 5}), jsonrpc.CodeInvalidParams)
	wantError(t, p.call("tools/call", map[string]any{"name": "job", "task": map[string]any{"ttl": -1}}), jsonrpc.CodeInvalidParams)
	wantError(t, p.call("tools/call", map[string]any{"name": "job", "task": map[string]any{"ttl": 1, "TTL": 2}}), jsonrpc.CodeInvalidParams)
	if r := p.call("tools/call", map[string]any{"name": "plain"}); r.Error != nil {
		t.Errorf("plain call: %v", r.Error)
	}

	// 2026-07-28: required without the extension is -32021 naming it; the
	// task methods are gated the same way; a legacy task param is ignored.
	m := connect(t, s)
	e := wantError(t, m.call("tools/call", map[string]any{"name": "fail", "_meta": modernMeta()}), mcp.CodeMissingRequiredClientCapability)
	if !strings.Contains(string(e.Data), `"extensions":{"io.modelcontextprotocol/tasks":{}}`) {
		t.Errorf("-32021 data %s", e.Data)
	}
	wantError(t, m.call("tasks/get", map[string]any{"taskId": "x", "_meta": modernMeta()}), mcp.CodeMissingRequiredClientCapability)
	res := callResult(t, m.call("tools/call", map[string]any{"name": "plain", "task": map[string]any{"ttl": 5}, "_meta": modernMeta()}))
	if text(t, res) != "plain" {
		t.Errorf("plain with a legacy task param: %q", text(t, res))
	}
	wantError(t, m.call("tasks/list", map[string]any{"_meta": tasksMeta()}), jsonrpc.CodeMethodNotFound)
	wantError(t, m.call("tasks/result", map[string]any{"taskId": "x", "_meta": tasksMeta()}), jsonrpc.CodeMethodNotFound)
}

// tasksMeta is a 2026-07-28 request's _meta declaring the tasks extension
// and elicitation.
func tasksMeta() map[string]any {
	m := modernMeta()
	m[mcp.MetaClientCapabilities] = map[string]any{"elicitation": map[string]any{}, "extensions": map[string]any{mcp.ExtensionTasks: map[string]any{}}}
	return m
}

func TestTaskIsErrorFailsLegacyCompletesModern(t *testing.T) {
	s := taskServer(t, nil)
	p, _ := legacyTaskPeer(t, s)
	task := startTask(t, p, "fail", nil)
	res := callResult(t, p.call("tasks/result", map[string]any{"taskId": task.TaskID}))
	if !res.IsError || text(t, res) != "it broke" {
		t.Errorf("tasks/result of a failing tool: %+v", res)
	}
	waitStatus(t, p, task.TaskID, mcp.TaskFailed, nil)

	m := connect(t, s)
	var created mcp.CreateTaskResult
	decodeResult(t, m.call("tools/call", map[string]any{"name": "fail", "_meta": tasksMeta()}), &created)
	d := waitStatus(t, m, created.Task.TaskID, mcp.TaskCompleted, tasksMeta())
	if d.Error != nil || !strings.Contains(string(d.Result), `"isError":true`) {
		t.Errorf("2026 task of a failing tool: result %s error %+v", d.Result, d.Error)
	}
}

func TestTaskCancel(t *testing.T) {
	ended := make(chan error, 1)
	s := taskServer(t, ended)
	p, _ := legacyTaskPeer(t, s)
	task := startTask(t, p, "block", nil)
	var d mcp.DetailedTask
	decodeResult(t, p.call("tasks/cancel", map[string]any{"taskId": task.TaskID}), &d)
	if d.Status != mcp.TaskCancelled {
		t.Errorf("tasks/cancel answered %s", d.Status)
	}
	if cause := testwait.Recv(t, ended, "the handler to be cancelled"); cause == nil || !strings.Contains(cause.Error(), "cancelled") {
		t.Errorf("handler's context ended with %v", cause)
	}
	waitStatus(t, p, task.TaskID, mcp.TaskCancelled, nil) // not overwritten by the handler's end
	wantError(t, p.call("tasks/result", map[string]any{"taskId": task.TaskID}), jsonrpc.CodeInvalidParams)
}

func TestTaskTTLEndsTheWork(t *testing.T) {
	ended := make(chan error, 1)
	s := taskServer(t, ended, server.WithLimits(server.Limits{TaskTTL: time.Hour, MaxTaskTTL: 50 * time.Millisecond}))
	p, _ := legacyTaskPeer(t, s)
	var created mcp.CreateTaskResult
	decodeResult(t, p.call("tools/call", map[string]any{"name": "block", "task": map[string]any{"ttl": 3600000}}), &created)
	if created.Task.TTL == nil || *created.Task.TTL != 50*time.Millisecond {
		t.Fatalf("ttl %v, want the server's maximum", created.Task.TTL)
	}
	if cause := testwait.Recv(t, ended, "the TTL to stop the handler"); cause == nil || !strings.Contains(cause.Error(), "expired") {
		t.Errorf("handler's context ended with %v", cause)
	}
}

func TestTaskShutdownAndRestart(t *testing.T) {
	store := taskstore.NewMemory()
	ended := make(chan error, 1)
	s := taskServer(t, ended, server.WithTaskStore(store))
	p, _ := legacyTaskPeer(t, s)
	task := startTask(t, p, "block", nil)
	ctx := testwait.Context(t)
	if err := s.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	if cause := testwait.Recv(t, ended, "the handler to end"); cause != server.ErrServerShutdown {
		t.Errorf("handler ended with %v", cause)
	}
	d := waitStatus(t, p, task.TaskID, mcp.TaskFailed, nil)
	if d.StatusMessage != server.ShutdownMessage {
		t.Errorf("status message %q", d.StatusMessage)
	}
	wantError(t, p.call("tools/call", map[string]any{"name": "job", "task": map[string]any{}}), jsonrpc.CodeInternalError)

	// A task left working in the store (its process died) is failed by the
	// next server on the same store.
	if err := store.Create(ctx, &taskstore.Record{ID: "orphan", Status: mcp.TaskWorking, TTL: time.Hour}); err != nil {
		t.Fatal(err)
	}
	s2 := taskServer(t, nil, server.WithTaskStore(store))
	p2, _ := legacyTaskPeer(t, s2)
	d = waitStatus(t, p2, "orphan", mcp.TaskFailed, nil)
	if d.StatusMessage != server.RestartMessage {
		t.Errorf("restarted task: %q", d.StatusMessage)
	}
	m := connect(t, s2)
	d = waitStatus(t, m, "orphan", mcp.TaskFailed, tasksMeta())
	if d.Error == nil || d.Error.Code != jsonrpc.CodeInternalError || d.Error.Message != server.RestartMessage {
		t.Errorf("2026 view of the restarted task: %+v", d.Error)
	}
}

func TestTaskRunningLimit(t *testing.T) {
	s := taskServer(t, nil, server.WithLimits(server.Limits{MaxRunningTasks: 1}))
	p, _ := legacyTaskPeer(t, s)
	task := startTask(t, p, "block", nil)
	e := wantError(t, p.call("tools/call", map[string]any{"name": "block", "task": map[string]any{}}), jsonrpc.CodeOverloaded)
	if !strings.Contains(e.Message, "limit") {
		t.Errorf("refusal %q", e.Message)
	}
	p.call("tasks/cancel", map[string]any{"taskId": task.TaskID})
}

func TestTaskModernInputKeysUnique(t *testing.T) {
	s := server.New(mcp.Implementation{Name: "tasks", Version: "1"})
	type none struct{}
	if err := server.AddTool(s, &mcp.Tool{Name: "twice"}, func(ctx context.Context, req *server.CallRequest, _ none) (string, error) {
		a, err := req.Elicit(ctx, nameForm, server.InputKey("name"))
		if err != nil {
			return "", err
		}
		b, err := req.Elicit(ctx, nameForm, server.InputKey("name"))
		if err != nil {
			return "", err
		}
		return a.Content["name"].(string) + "+" + b.Content["name"].(string), nil
	}, server.WithTaskSupport(mcp.TaskOptional)); err != nil {
		t.Fatal(err)
	}
	m := connect(t, s)
	var created mcp.CreateTaskResult
	decodeResult(t, m.call("tools/call", map[string]any{"name": "twice", "_meta": tasksMeta()}), &created)
	id := created.Task.TaskID
	answer := func(key, name string) {
		d := waitStatus(t, m, id, mcp.TaskInputRequired, tasksMeta())
		if _, ok := d.InputRequests[key]; !ok || len(d.InputRequests) != 1 {
			t.Fatalf("input requests %v, want only %q", d.InputRequests, key)
		}
		if r := m.call("tasks/update", map[string]any{"taskId": id, "_meta": tasksMeta(),
			"inputResponses": map[string]any{key: map[string]any{"action": "accept", "content": map[string]any{"name": name}}}}); r.Error != nil {
			t.Fatal(r.Error)
		}
	}
	answer("name", "a")
	answer("name.2", "b") // a key is never reused in a task's life
	d := waitStatus(t, m, id, mcp.TaskCompleted, tasksMeta())
	if !strings.Contains(string(d.Result), `"a+b"`) {
		t.Errorf("result %s", d.Result)
	}
	wantError(t, m.call("tasks/update", map[string]any{"taskId": id, "_meta": tasksMeta(), "inputResponses": map[string]any{"x": 1}}), jsonrpc.CodeInvalidParams)
}

func TestTaskNotificationsOnListen(t *testing.T) {
	s := taskServer(t, nil)
	m := connect(t, s)
	var created mcp.CreateTaskResult
	decodeResult(t, m.call("tools/call", map[string]any{"name": "block", "_meta": tasksMeta()}), &created)
	id := created.Task.TaskID

	// Naming tasks without the extension is -32021.
	wantError(t, m.call("subscriptions/listen", map[string]any{"_meta": modernMeta(),
		"notifications": map[string]any{"taskIds": []string{id}}}), mcp.CodeMissingRequiredClientCapability)

	m.start("subscriptions/listen", map[string]any{"_meta": tasksMeta(),
		"notifications": map[string]any{"taskIds": []string{id, "unknown"}}})
	ack := m.note()
	if ack.Method != mcp.NotificationListenAck || !strings.Contains(string(ack.Params), `"taskIds":["`+id+`"]`) {
		t.Fatalf("ack %s %s: want only the known task", ack.Method, ack.Params)
	}
	if r := m.call("tasks/cancel", map[string]any{"taskId": id, "_meta": tasksMeta()}); r.Error != nil {
		t.Fatal(r.Error)
	}
	for {
		n := m.note()
		if n.Method != mcp.NotificationTasks {
			continue
		}
		var d mcp.DetailedTask
		if err := json.Unmarshal(n.Params, &d); err != nil || d.TaskID != id {
			t.Fatalf("notifications/tasks %s: %v", n.Params, err)
		}
		if !strings.Contains(string(n.Params), `"ttlMs":`) || !strings.Contains(string(n.Params), mcp.MetaSubscriptionID) {
			t.Errorf("not the 2026 shape with the subscription id: %s", n.Params)
		}
		if d.Status == mcp.TaskCancelled {
			return
		}
	}
}
