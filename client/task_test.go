package client_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/toolwire/toolwire/client"
	"github.com/toolwire/toolwire/internal/testwait"
	"github.com/toolwire/toolwire/jsonrpc"
	"github.com/toolwire/toolwire/mcp"
	"github.com/toolwire/toolwire/server"
)

// legacyTasksCapability is what a 2025-11-25 server running tool calls as
// tasks declares.
const legacyTasksCapability = `{"list":{},"cancel":{},"requests":{"tools":{"call":{}}}}`

// taskStandIn is a standInServer whose task methods are registered as a
// task server registers them: tasks/list declares the tasks capability
// (legacyTasksCapability unless caps says otherwise), and tasks/get,
// tasks/update and tasks/cancel mirror taskId in Mcp-Name, which the server
// checks over 2026-07-28 HTTP.
func taskStandIn(t *testing.T, methods map[string]standIn, caps string) *server.Server {
	t.Helper()
	rest := map[string]standIn{}
	for name, h := range methods {
		switch name {
		case mcp.MethodListTasks, mcp.MethodGetTask, mcp.MethodUpdateTask, mcp.MethodCancelTask, mcp.MethodTaskResult:
		default:
			rest[name] = h // tools/call, tools/list: the server's own, answered by the stand-in's middleware
		}
	}
	s := standInServer(t, rest)
	for name, h := range methods {
		spec := server.MethodSpec{Name: name}
		switch name {
		case mcp.MethodListTasks:
			spec.Capability, spec.CapabilityValue = "tasks", json.RawMessage(caps)
		case mcp.MethodGetTask, mcp.MethodUpdateTask, mcp.MethodCancelTask:
			spec.NameParam = "taskId"
		case mcp.MethodTaskResult:
		default:
			continue
		}
		if err := server.AddMethod(s, spec, func(ctx context.Context, r *server.Request, p *json.RawMessage) (any, error) {
			return h(ctx, r, *p)
		}); err != nil {
			t.Fatal(err)
		}
	}
	return s
}

var epoch = time.Date(2026, 7, 28, 12, 0, 0, 0, time.UTC)

func ms(d time.Duration) *time.Duration { return &d }

// newTask is a task in status st.
func newTask(id string, st mcp.TaskStatus, msg string) mcp.Task {
	return mcp.Task{TaskID: id, Status: st, StatusMessage: msg, CreatedAt: epoch, LastUpdatedAt: epoch, TTL: ms(time.Minute), PollInterval: ms(0)}
}

// taskParams reads the taskId of a task request.
func taskParams(params json.RawMessage) string {
	var p mcp.TaskIDParams
	json.Unmarshal(params, &p)
	return p.TaskID
}

// declaresTasks says whether a 2026-07-28 request declared the tasks
// extension in its _meta.
func declaresTasks(params json.RawMessage) bool {
	var p struct {
		Meta struct {
			Caps mcp.ClientCapabilities `json:"io.modelcontextprotocol/clientCapabilities"`
		} `json:"_meta"`
	}
	json.Unmarshal(params, &p)
	_, ok := p.Meta.Caps.Extensions[mcp.ExtensionTasks]
	return ok
}

// basicTaskMethods stand in for a server whose tools/call "slow" becomes
// task "t1" (legacy: when asked; modern: when the extension is declared),
// which is working for the first gets tasks/get and then completed with
// the text "done". seen records what the server saw.
type taskSeen struct {
	mu        sync.Mutex
	gets      atomic.Int32
	ttl       *int64
	names     []string // Mcp-Name of task requests over modern HTTP
	plainCall atomic.Int32
}

func basicTaskMethods(seen *taskSeen, gets int32) map[string]standIn {
	done := mcp.TextResult("done")
	return map[string]standIn{
		mcp.MethodCallTool: func(_ context.Context, r *server.Request, params json.RawMessage) (any, error) {
			var p mcp.CallToolParams
			json.Unmarshal(params, &p)
			asked := p.Task != nil
			if r.Peer.Era == mcp.EraModern {
				asked = declaresTasks(params)
			} else if asked {
				seen.mu.Lock()
				seen.ttl = p.Task.TTL
				seen.mu.Unlock()
			}
			if !asked {
				seen.plainCall.Add(1)
				return done, nil
			}
			return &mcp.CreateTaskResult{Task: newTask("t1", mcp.TaskWorking, "")}, nil
		},
		mcp.MethodGetTask: func(_ context.Context, r *server.Request, params json.RawMessage) (any, error) {
			if r.Peer.Era == mcp.EraModern && !declaresTasks(params) {
				return nil, jsonrpc.NewError(-32021, "tasks extension not declared")
			}
			if h := r.Header(); h != nil && r.Peer.Era == mcp.EraModern {
				seen.mu.Lock()
				seen.names = append(seen.names, h.Get("Mcp-Name"))
				seen.mu.Unlock()
			}
			id := taskParams(params)
			if id != "t1" {
				return nil, jsonrpc.NewError(jsonrpc.CodeInvalidParams, "no task %q", id)
			}
			if n := seen.gets.Add(1); n <= gets {
				return &mcp.DetailedTask{Task: newTask(id, mcp.TaskWorking, fmt.Sprintf("step %d", n))}, nil
			}
			d := &mcp.DetailedTask{Task: newTask(id, mcp.TaskCompleted, "")}
			d.Result, _ = json.Marshal(done)
			return d, nil
		},
		mcp.MethodTaskResult: func(_ context.Context, r *server.Request, params json.RawMessage) (any, error) {
			if id := taskParams(params); id != "t1" {
				return nil, jsonrpc.NewError(jsonrpc.CodeInvalidParams, "no task %q", id)
			}
			res := *done
			res.Meta = mcp.Meta{mcp.MetaRelatedTask: map[string]string{"taskId": "t1"}}
			return &res, nil
		},
		mcp.MethodListTasks: func(context.Context, *server.Request, json.RawMessage) (any, error) {
			return &mcp.ListTasksResult{Tasks: []mcp.Task{newTask("t1", mcp.TaskWorking, "")}}, nil
		},
		mcp.MethodUpdateTask: func(_ context.Context, r *server.Request, params json.RawMessage) (any, error) {
			if !declaresTasks(params) {
				return nil, jsonrpc.NewError(-32021, "tasks extension not declared")
			}
			return json.RawMessage(`{}`), nil
		},
		mcp.MethodCancelTask: func(_ context.Context, r *server.Request, params json.RawMessage) (any, error) {
			id := taskParams(params)
			if id != "t1" {
				return nil, jsonrpc.NewError(jsonrpc.CodeInvalidParams, "no task %q", id)
			}
			if r.Peer.Era == mcp.EraModern {
				return json.RawMessage(`{}`), nil
			}
			return &mcp.DetailedTask{Task: newTask(id, mcp.TaskCancelled, "cancelled by request")}, nil
		},
	}
}

func isModern(name string) bool { return strings.HasSuffix(name, "modern") }

func TestCallToolTaskBothEras(t *testing.T) {
	var seen taskSeen
	s := taskStandIn(t, basicTaskMethods(&seen, 2), legacyTasksCapability)
	for name, c := range promptTransports(t, s, client.WithOutputValidation(false), client.WithLimits(client.Limits{MinTaskPoll: time.Millisecond, MaxTaskPoll: 5 * time.Millisecond})) {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			seen.gets.Store(0)
			start, err := c.CallToolTask(ctx, "slow", map[string]any{"n": 1}, client.WithTaskTTL(90*time.Second))
			if err != nil {
				t.Fatal(err)
			}
			if start.Task == nil || start.Task.TaskID != "t1" || start.Task.Status != mcp.TaskWorking || start.Result != nil {
				t.Fatalf("start %+v", start)
			}
			if !isModern(name) {
				seen.mu.Lock()
				if seen.ttl == nil || *seen.ttl != 90000 {
					t.Errorf("ttl sent %v, want 90000", seen.ttl)
				}
				seen.mu.Unlock()
			}
			var statuses []string
			res, err := start.Wait(ctx, client.WithTaskStatus(func(tk mcp.Task) {
				statuses = append(statuses, string(tk.Status)+":"+tk.StatusMessage)
			}))
			if err != nil {
				t.Fatal(err)
			}
			if tc, ok := res.Content[0].(*mcp.TextContent); !ok || tc.Text != "done" {
				t.Errorf("result %+v", res)
			}
			if isModern(name) {
				want := "[working:step 1 working:step 2 completed:]"
				if fmt.Sprint(statuses) != want {
					t.Errorf("statuses %v, want %s", statuses, want)
				}
			}
			d, err := c.GetTask(ctx, "t1")
			if err != nil || d.TaskID != "t1" {
				t.Errorf("GetTask: %+v %v", d, err)
			}
			if err := c.CancelTask(ctx, "t1"); err != nil {
				t.Errorf("CancelTask: %v", err)
			}
			_, err = c.GetTask(ctx, "nope")
			var je *client.JSONRPCError
			if !errors.As(err, &je) || je.Code != jsonrpc.CodeInvalidParams {
				t.Errorf("unknown task: %v", err)
			}
			if err := c.CancelTask(ctx, "nope"); !errors.As(err, &je) || je.Code != jsonrpc.CodeInvalidParams {
				t.Errorf("cancel unknown task: %v", err)
			}
			tasks, err := c.ListTasks(ctx)
			if isModern(name) {
				if !errors.Is(err, client.ErrWrongEra) || !strings.Contains(err.Error(), "no task listing") {
					t.Errorf("modern ListTasks: %v", err)
				}
				if err := c.UpdateTask(ctx, "t1", mcp.InputResponses{}); err != nil {
					t.Errorf("UpdateTask: %v", err)
				}
			} else {
				if err != nil || len(tasks) != 1 || tasks[0].TaskID != "t1" {
					t.Errorf("ListTasks: %v %v", tasks, err)
				}
				if err := c.UpdateTask(ctx, "t1", nil); !errors.Is(err, client.ErrWrongEra) {
					t.Errorf("legacy UpdateTask: %v", err)
				}
			}
		})
	}
	seen.mu.Lock()
	defer seen.mu.Unlock()
	if len(seen.names) == 0 {
		t.Error("no tasks/get over modern HTTP seen")
	}
	for _, n := range seen.names {
		if n != "t1" && n != "nope" {
			t.Errorf("Mcp-Name %q, want the taskId", n)
		}
	}
}

// TestCallToolTaskTyped: CallToolTaskAs starts, waits and decodes.
func TestCallToolTaskTyped(t *testing.T) {
	var seen taskSeen
	methods := basicTaskMethods(&seen, 0)
	structured := &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: `{"sum":3}`}}, StructuredContent: json.RawMessage(`{"sum":3}`)}
	methods[mcp.MethodTaskResult] = func(context.Context, *server.Request, json.RawMessage) (any, error) { return structured, nil }
	get := methods[mcp.MethodGetTask]
	methods[mcp.MethodGetTask] = func(ctx context.Context, r *server.Request, params json.RawMessage) (any, error) {
		res, err := get(ctx, r, params)
		if d, ok := res.(*mcp.DetailedTask); ok && d.Status == mcp.TaskCompleted {
			d.Result, _ = json.Marshal(structured)
		}
		return res, err
	}
	s := taskStandIn(t, methods, legacyTasksCapability)
	for name, c := range promptTransports(t, s, client.WithOutputValidation(false), client.WithLimits(client.Limits{MinTaskPoll: time.Millisecond, MaxTaskPoll: time.Millisecond})) {
		got, err := client.CallToolTaskAs[struct {
			Sum int `json:"sum"`
		}](context.Background(), c, "sum", nil)
		if err != nil || got.Sum != 3 {
			t.Errorf("%s: %+v %v", name, got, err)
		}
	}
}

// TestCallToolTaskImmediate: a 2026-07-28 server may answer at once; an
// isError answer comes with a *ToolError.
func TestCallToolTaskImmediate(t *testing.T) {
	s := standInServer(t, map[string]standIn{
		mcp.MethodCallTool: func(_ context.Context, r *server.Request, params json.RawMessage) (any, error) {
			var p mcp.CallToolParams
			json.Unmarshal(params, &p)
			if p.Name == "bad" {
				return mcp.ErrorResult("nope"), nil
			}
			return mcp.TextResult("now"), nil
		},
	})
	for name, c := range promptTransports(t, s, client.WithOutputValidation(false)) {
		if !isModern(name) {
			continue
		}
		start, err := c.CallToolTask(context.Background(), "quick", nil)
		if err != nil || start.Task != nil || start.Result == nil {
			t.Fatalf("%s: %+v %v", name, start, err)
		}
		if res, err := start.Wait(context.Background()); err != nil || res != start.Result {
			t.Errorf("%s: Wait %v %v", name, res, err)
		}
		start, err = c.CallToolTask(context.Background(), "bad", nil)
		var te *client.ToolError
		if !errors.As(err, &te) || start == nil || start.Result == nil || !start.Result.IsError {
			t.Errorf("%s: isError: %+v %v", name, start, err)
		}
		if _, err := start.Wait(context.Background()); !errors.As(err, &te) {
			t.Errorf("%s: Wait isError: %v", name, err)
		}
	}
}

// TestCallToolTaskNeedsLegacyCapability: without tasks.requests.tools.call
// the client does not ask for a task; a forbidden tool is refused too.
func TestCallToolTaskNeedsLegacyCapability(t *testing.T) {
	var seen taskSeen
	methods := basicTaskMethods(&seen, 0)
	methods[mcp.MethodListTools] = func(context.Context, *server.Request, json.RawMessage) (any, error) {
		return &mcp.ListToolsResult{Tools: []*mcp.Tool{
			{Name: "never", InputSchema: json.RawMessage(`{"type":"object"}`), Execution: &mcp.ToolExecution{TaskSupport: mcp.TaskForbidden}},
			{Name: "slow", InputSchema: json.RawMessage(`{"type":"object"}`), Execution: &mcp.ToolExecution{TaskSupport: mcp.TaskOptional}},
		}}, nil
	}
	s := taskStandIn(t, methods, `{"list":{}}`)
	for name, c := range legacyTransports(t, s) {
		_, err := c.CallToolTask(context.Background(), "slow", nil)
		if !errors.Is(err, client.ErrTasksUnsupported) || !strings.Contains(err.Error(), "tasks.requests.tools.call") {
			t.Errorf("%s: %v", name, err)
		}
		if err := c.CancelTask(context.Background(), "t1"); !errors.Is(err, client.ErrTasksUnsupported) {
			t.Errorf("%s: cancel: %v", name, err)
		}
	}
	s = taskStandIn(t, methods, legacyTasksCapability)
	for name, c := range legacyTransports(t, s) {
		_, err := c.CallToolTask(context.Background(), "never", nil)
		if !errors.Is(err, client.ErrTasksUnsupported) || !strings.Contains(err.Error(), "forbidden") {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// TestWaitTaskPollPacing counts tasks/get: the server's pollInterval is
// honoured within the client's bounds (no wall-clock assertions: only that
// a pollInterval of 0 does not make the client spin, and that a huge one is
// lowered to the ceiling).
func TestWaitTaskPollPacing(t *testing.T) {
	var gets atomic.Int32
	var poll atomic.Int64
	var started atomic.Int64
	s := standInServer(t, map[string]standIn{
		mcp.MethodCallTool: func(context.Context, *server.Request, json.RawMessage) (any, error) {
			started.Store(time.Now().UnixNano())
			return &mcp.CreateTaskResult{Task: newTask("p", mcp.TaskWorking, "")}, nil
		},
		mcp.MethodGetTask: func(_ context.Context, _ *server.Request, params json.RawMessage) (any, error) {
			gets.Add(1)
			tk := newTask("p", mcp.TaskWorking, "")
			tk.PollInterval = ms(time.Duration(poll.Load()))
			if time.Since(time.Unix(0, started.Load())) > 200*time.Millisecond {
				tk.Status = mcp.TaskCompleted
				return &mcp.DetailedTask{Task: tk, Result: json.RawMessage(`{"content":[]}`)}, nil
			}
			return &mcp.DetailedTask{Task: tk}, nil
		},
	})
	for _, tc := range []struct {
		name        string
		poll        time.Duration
		floor, ceil time.Duration
		maxGets     int32
	}{
		{"zero interval raised to the floor", 0, 50 * time.Millisecond, time.Second, 200/50 + 3},
		{"server interval honoured", 100 * time.Millisecond, time.Millisecond, time.Second, 200/100 + 3},
		{"huge interval lowered to the ceiling", time.Hour, time.Millisecond, 20 * time.Millisecond, 1 << 30},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for name, c := range promptTransports(t, s, client.WithEra(mcp.EraModern), client.WithLimits(client.Limits{MinTaskPoll: tc.floor, MaxTaskPoll: tc.ceil})) {
				if !isModern(name) {
					continue
				}
				gets.Store(0)
				poll.Store(int64(tc.poll))
				_, err := c.CallTool(testwait.Context(t), "slow", nil, client.WithOutputValidation(false))
				if err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				if n := gets.Load(); n < 1 || n > tc.maxGets {
					t.Errorf("%s: %d tasks/get, want 1..%d", name, n, tc.maxGets)
				}
			}
		})
	}
}

// TestWaitTaskInputRequired: a 2026-07-28 task asks for input twice, the
// second time while still listing the first request: each key is answered
// once, by the elicitation handler, through tasks/update.
func TestWaitTaskInputRequired(t *testing.T) {
	var mu sync.Mutex
	answers := map[string]string{}
	var updates []string
	elicit := func(key string) json.RawMessage {
		raw, _ := json.Marshal(mcp.InputRequest{Method: mcp.MethodElicitationCreate,
			Params: json.RawMessage(fmt.Sprintf(`{"message":"%s?","requestedSchema":{"type":"object","properties":{"v":{"type":"string"}}}}`, key))})
		return raw
	}
	s := standInServer(t, map[string]standIn{
		mcp.MethodCallTool: func(context.Context, *server.Request, json.RawMessage) (any, error) {
			return &mcp.CreateTaskResult{Task: newTask("in", mcp.TaskWorking, "")}, nil
		},
		mcp.MethodGetTask: func(context.Context, *server.Request, json.RawMessage) (any, error) {
			mu.Lock()
			defer mu.Unlock()
			d := &mcp.DetailedTask{Task: newTask("in", mcp.TaskInputRequired, "")}
			reqs := map[string]json.RawMessage{}
			switch len(answers) {
			case 0:
				reqs["a"] = elicit("a")
			case 1:
				reqs["a"], reqs["b"] = elicit("a"), elicit("b") // a not yet taken off
			default:
				d.Status = mcp.TaskCompleted
				d.Result = json.RawMessage(fmt.Sprintf(`{"content":[{"type":"text","text":"a=%s b=%s"}]}`, answers["a"], answers["b"]))
				return d, nil
			}
			raw, _ := json.Marshal(map[string]any{"taskId": "in", "status": "input_required", "createdAt": epoch, "lastUpdatedAt": epoch,
				"ttlMs": nil, "pollIntervalMs": 0, "inputRequests": reqs})
			return json.RawMessage(raw), nil
		},
		mcp.MethodUpdateTask: func(_ context.Context, _ *server.Request, params json.RawMessage) (any, error) {
			var p mcp.UpdateTaskParams
			if err := json.Unmarshal(params, &p); err != nil || p.TaskID != "in" {
				return nil, jsonrpc.NewError(jsonrpc.CodeInvalidParams, "bad update")
			}
			mu.Lock()
			defer mu.Unlock()
			for k, v := range p.InputResponses {
				updates = append(updates, k)
				var r mcp.ElicitResult
				json.Unmarshal(v, &r)
				answers[k] = fmt.Sprint(r.Content["v"])
			}
			return json.RawMessage(`{}`), nil
		},
	})
	var asked atomic.Int32
	handler := client.WithElicitationHandler(func(_ context.Context, p *mcp.ElicitParams) (*mcp.ElicitResult, error) {
		asked.Add(1)
		return &mcp.ElicitResult{Action: mcp.ActionAccept, Content: map[string]any{"v": strings.TrimSuffix(p.Message, "?") + "!"}}, nil
	})
	for name, c := range promptTransports(t, s, handler, client.WithOutputValidation(false), client.WithLimits(client.Limits{MinTaskPoll: time.Millisecond, MaxTaskPoll: time.Millisecond})) {
		if !isModern(name) {
			continue
		}
		mu.Lock()
		clear(answers)
		updates = nil
		mu.Unlock()
		asked.Store(0)
		start, err := c.CallToolTask(context.Background(), "ask", nil, client.WithOutputValidation(false))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		res, err := start.Wait(context.Background())
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if tc := res.Content[0].(*mcp.TextContent); tc.Text != "a=a! b=b!" {
			t.Errorf("%s: %q", name, tc.Text)
		}
		mu.Lock()
		if fmt.Sprint(updates) != "[a b]" || asked.Load() != 2 {
			t.Errorf("%s: updates %v, handler asked %d times", name, updates, asked.Load())
		}
		mu.Unlock()
	}
	// Without a handler for the input, the wait fails clearly.
	for name, c := range promptTransports(t, s, client.WithLimits(client.Limits{MinTaskPoll: time.Millisecond, MaxTaskPoll: time.Millisecond})) {
		if !isModern(name) {
			continue
		}
		mu.Lock()
		clear(answers)
		mu.Unlock()
		_, err := c.WaitTask(context.Background(), "in")
		var pe *client.ProtocolError
		if !errors.As(err, &pe) || !strings.Contains(err.Error(), "elicitation") {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// TestWaitTaskInputRoundsBounded: a task asking for new input forever
// fails after WithMaxInputRounds updates.
func TestWaitTaskInputRoundsBounded(t *testing.T) {
	var n atomic.Int32
	s := standInServer(t, map[string]standIn{
		mcp.MethodGetTask: func(context.Context, *server.Request, json.RawMessage) (any, error) {
			k := n.Add(1)
			raw := fmt.Sprintf(`{"taskId":"x","status":"input_required","createdAt":"2026-07-28T12:00:00Z","lastUpdatedAt":"2026-07-28T12:00:00Z","ttlMs":null,
				"inputRequests":{"k%d":{"method":"roots/list"}}}`, k)
			return json.RawMessage(raw), nil
		},
		mcp.MethodUpdateTask: func(context.Context, *server.Request, json.RawMessage) (any, error) {
			return json.RawMessage(`{}`), nil
		},
	})
	for name, c := range promptTransports(t, s, client.WithRoots(), client.WithLimits(client.Limits{MaxInputRounds: 3, MinTaskPoll: time.Millisecond, MaxTaskPoll: time.Millisecond})) {
		if !isModern(name) {
			continue
		}
		_, err := c.WaitTask(context.Background(), "x")
		if !strings.Contains(fmt.Sprint(err), "after 3 updates") {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// TestWaitTaskLegacyElicitation: while tasks/result waits, the server asks
// over the session; the client's handler answers. Progress reports sent
// with the tools/call token reach WithProgress after tools/call returned.
func TestWaitTaskLegacyElicitation(t *testing.T) {
	var token atomic.Value
	s := taskStandIn(t, map[string]standIn{
		mcp.MethodCallTool: func(_ context.Context, r *server.Request, params json.RawMessage) (any, error) {
			var p struct {
				Meta struct {
					Token json.RawMessage `json:"progressToken"`
				} `json:"_meta"`
			}
			json.Unmarshal(params, &p)
			token.Store(p.Meta.Token)
			return &mcp.CreateTaskResult{Task: newTask("e", mcp.TaskWorking, "")}, nil
		},
		mcp.MethodTaskResult: func(ctx context.Context, r *server.Request, params json.RawMessage) (any, error) {
			if tok, _ := token.Load().(json.RawMessage); len(tok) > 0 {
				r.Notify(ctx, mcp.NotificationProgress, map[string]any{"progressToken": tok, "progress": 1, "total": 2, "message": "half"})
			}
			res, err := r.Elicit(ctx, &mcp.ElicitParams{Message: "name?", RequestedSchema: json.RawMessage(`{"type":"object","properties":{"v":{"type":"string"}}}`)},
				server.InputKey("k"))
			if err != nil {
				return nil, err
			}
			return mcp.TextResult("hello %v", res.Content["v"]), nil
		},
		mcp.MethodGetTask: func(context.Context, *server.Request, json.RawMessage) (any, error) {
			return &mcp.DetailedTask{Task: newTask("e", mcp.TaskInputRequired, "waiting for a name")}, nil
		},
		mcp.MethodListTasks: func(context.Context, *server.Request, json.RawMessage) (any, error) { return nil, nil },
	}, legacyTasksCapability)
	handler := client.WithElicitationHandler(func(context.Context, *mcp.ElicitParams) (*mcp.ElicitResult, error) {
		return &mcp.ElicitResult{Action: mcp.ActionAccept, Content: map[string]any{"v": "Ada"}}, nil
	})
	for name, c := range legacyTransports(t, s, handler, client.WithOutputValidation(false)) {
		token.Store(json.RawMessage(nil))
		var progress []string
		var pmu sync.Mutex
		start, err := c.CallToolTask(context.Background(), "greet", nil, client.WithOutputValidation(false), client.WithProgress(func(p client.Progress) {
			pmu.Lock()
			progress = append(progress, fmt.Sprintf("%g/%g %s", p.Progress, p.Total, p.Message))
			pmu.Unlock()
		}))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		var status atomic.Value
		res, err := start.Wait(context.Background(), client.WithTaskStatus(func(tk mcp.Task) { status.Store(tk.StatusMessage) }))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if tc := res.Content[0].(*mcp.TextContent); tc.Text != "hello Ada" {
			t.Errorf("%s: %q", name, tc.Text)
		}
		pmu.Lock()
		if fmt.Sprint(progress) != "[1/2 half]" {
			t.Errorf("%s: progress %v", name, progress)
		}
		pmu.Unlock()
	}
}

// TestWaitTaskFailedAndCancelled: a failed task is a *TaskFailedError
// carrying its JSON-RPC error; a cancelled one a *TaskCancelledError.
func TestWaitTaskFailedAndCancelled(t *testing.T) {
	s := taskStandIn(t, map[string]standIn{
		mcp.MethodGetTask: func(_ context.Context, _ *server.Request, params json.RawMessage) (any, error) {
			switch id := taskParams(params); id {
			case "f":
				return &mcp.DetailedTask{Task: newTask(id, mcp.TaskFailed, "it broke"), Error: &mcp.TaskError{Code: -32000, Message: "boom", Data: json.RawMessage(`{"x":1}`)}}, nil
			case "c":
				return &mcp.DetailedTask{Task: newTask(id, mcp.TaskCancelled, "stopped")}, nil
			case "r":
				return &mcp.DetailedTask{Task: newTask(id, mcp.TaskCompleted, "")}, nil // no result
			}
			return nil, jsonrpc.NewError(jsonrpc.CodeInvalidParams, "unknown task")
		},
		mcp.MethodTaskResult: func(_ context.Context, _ *server.Request, params json.RawMessage) (any, error) {
			switch taskParams(params) {
			case "f":
				return nil, &jsonrpc.Error{Code: -32000, Message: "boom"}
			case "c":
				return nil, jsonrpc.NewError(jsonrpc.CodeInvalidParams, "task was cancelled")
			}
			return nil, jsonrpc.NewError(jsonrpc.CodeInvalidParams, "unknown task")
		},
		mcp.MethodListTasks: func(context.Context, *server.Request, json.RawMessage) (any, error) { return nil, nil },
	}, legacyTasksCapability)
	for name, c := range promptTransports(t, s) {
		ctx := context.Background()
		_, err := c.WaitTask(ctx, "f")
		var fe *client.TaskFailedError
		var je *client.JSONRPCError
		if !errors.As(err, &fe) || !errors.As(err, &je) || je.Code != -32000 || je.Message != "boom" || client.CodeOf(err) != client.CodeJSONRPC {
			t.Errorf("%s: failed: %v", name, err)
		} else if fe.TaskID != "f" || fe.StatusMessage != "it broke" {
			t.Errorf("%s: failed: %+v", name, fe)
		}
		_, err = c.WaitTask(ctx, "c")
		var ce *client.TaskCancelledError
		if !errors.As(err, &ce) || ce.StatusMessage != "stopped" || client.CodeOf(err) != client.CodeJSONRPC {
			t.Errorf("%s: cancelled: %v", name, err)
		}
		_, err = c.WaitTask(ctx, "u")
		if !errors.As(err, &je) || je.Code != jsonrpc.CodeInvalidParams || errors.As(err, &fe) {
			t.Errorf("%s: unknown: %v", name, err)
		}
		if isModern(name) {
			_, err = c.WaitTask(ctx, "r")
			var pe *client.ProtocolError
			if !errors.As(err, &pe) || !strings.Contains(err.Error(), "no result") {
				t.Errorf("%s: completed without result: %v", name, err)
			}
		}
	}
}

// TestTaskPagesBounded: tasks/list pages are followed up to WithMaxPages.
func TestTaskPagesBounded(t *testing.T) {
	s := taskStandIn(t, map[string]standIn{
		mcp.MethodListTasks: func(_ context.Context, _ *server.Request, params json.RawMessage) (any, error) {
			var p mcp.ListTasksParams
			json.Unmarshal(params, &p)
			n := 0
			fmt.Sscan(p.Cursor, &n)
			res := &mcp.ListTasksResult{Tasks: []mcp.Task{newTask(fmt.Sprint("t", n), mcp.TaskWorking, "")}}
			if n < 2 {
				res.NextCursor = fmt.Sprint(n + 1)
			}
			return res, nil
		},
	}, legacyTasksCapability)
	for name, c := range legacyTransports(t, s) {
		tasks, err := c.ListTasks(context.Background())
		if err != nil || len(tasks) != 3 || tasks[2].TaskID != "t2" {
			t.Errorf("%s: %v %v", name, tasks, err)
		}
	}
	for name, c := range legacyTransports(t, s, client.WithLimits(client.Limits{MaxPages: 2})) {
		_, err := c.ListTasks(context.Background())
		var pe *client.ProtocolError
		if !errors.As(err, &pe) || !strings.Contains(err.Error(), "more than 2 pages") {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// TestCallToolWaitsForUnaskedTask: a server that answers a plain tools/call
// with a task is waited for.
func TestCallToolWaitsForUnaskedTask(t *testing.T) {
	var seen taskSeen
	methods := basicTaskMethods(&seen, 1)
	methods[mcp.MethodCallTool] = func(context.Context, *server.Request, json.RawMessage) (any, error) {
		return &mcp.CreateTaskResult{Task: newTask("t1", mcp.TaskWorking, "")}, nil
	}
	s := taskStandIn(t, methods, legacyTasksCapability)
	for name, c := range promptTransports(t, s, client.WithOutputValidation(false), client.WithLimits(client.Limits{MinTaskPoll: time.Millisecond, MaxTaskPoll: time.Millisecond})) {
		seen.gets.Store(0)
		res, err := c.CallTool(context.Background(), "slow", nil)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if tc := res.Content[0].(*mcp.TextContent); tc.Text != "done" {
			t.Errorf("%s: %q", name, tc.Text)
		}
	}
}

// TestTaskStatusNotifications: notifications/tasks/status reach the
// status callback of a legacy wait.
func TestTaskStatusNotifications(t *testing.T) {
	release := make(chan struct{})
	s := taskStandIn(t, map[string]standIn{
		mcp.MethodTaskResult: func(ctx context.Context, r *server.Request, params json.RawMessage) (any, error) {
			tk := newTask("n", mcp.TaskWorking, "from a notification")
			r.Notify(ctx, mcp.NotificationTaskStatus, tk)
			select {
			case <-release:
			case <-ctx.Done():
			}
			return mcp.TextResult("ok"), nil
		},
		mcp.MethodGetTask: func(context.Context, *server.Request, json.RawMessage) (any, error) {
			return &mcp.DetailedTask{Task: newTask("n", mcp.TaskWorking, "")}, nil
		},
		mcp.MethodListTasks: func(context.Context, *server.Request, json.RawMessage) (any, error) { return nil, nil },
	}, legacyTasksCapability)
	for name, c := range legacyTransports(t, s, client.WithLimits(client.Limits{MinTaskPoll: time.Hour, MaxTaskPoll: time.Hour})) {
		got := make(chan string, 10)
		go func() {
			for m := range got {
				if m == "from a notification" {
					release <- struct{}{}
					return
				}
			}
		}()
		_, err := c.WaitTask(context.Background(), "n", client.WithTaskStatus(func(tk mcp.Task) { got <- tk.StatusMessage }))
		if err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
}
