package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"maps"
	"time"

	"github.com/toolwire/toolwire/internal/backoff"
	"github.com/toolwire/toolwire/internal/wirejson"
	"github.com/toolwire/toolwire/mcp"
)

// Task polling defaults (Limits.MinTaskPoll, Limits.MaxTaskPoll).
const (
	// DefaultMinTaskPoll and DefaultMaxTaskPoll bound the wait between two
	// tasks/get of WaitTask, whatever pollInterval the server suggests.
	DefaultMinTaskPoll = 50 * time.Millisecond
	DefaultMaxTaskPoll = 5 * time.Second
	// DefaultTaskPoll is the wait when the server suggests none.
	DefaultTaskPoll = time.Second
)

// maxKeptProgress bounds the 2025-11-25 tasks whose progress token the
// client keeps routing after tools/call answered (see WithProgress on
// CallToolTask); a task started past it gets no more progress reports.
const maxKeptProgress = 256

// ErrTasksUnsupported is returned (wrapped) when the server does not offer
// what a task request needs: in a 2025-11-25 session, a server that did not
// declare tasks.requests.tools.call (the client MUST NOT then ask for a
// task), tasks.list or tasks.cancel, or a tool whose execution.taskSupport
// is forbidden (or absent).
var ErrTasksUnsupported = errors.New("the server does not support this use of tasks")

type taskTTLOption struct{ d time.Duration }

func (o taskTTLOption) applyCall(c *callConfig) { d := o.d; c.taskTTL = &d }

// WithTaskTTL asks a 2025-11-25 server to keep the task CallToolTask
// creates, and its result, for d after creation (params.task.ttl, in whole
// milliseconds); the server may choose another. A 2026-07-28 server
// chooses the TTL itself: there the option has no effect. By default no
// TTL is asked for.
func WithTaskTTL(d time.Duration) CallOption { return taskTTLOption{d} }

type taskStatusOption struct{ fn func(mcp.Task) }

func (o taskStatusOption) applyCall(c *callConfig) { c.taskStatus = o.fn }

// WithTaskStatus has WaitTask (and CallToolTaskAs, and a CallTool the
// server turned into a task) report the task to fn each time its status or
// statusMessage changes, the first state seen included: from every tasks/get
// (2026-07-28 polling), and in a 2025-11-25 session, where tasks/result
// blocks until the end, from tasks/get sent alongside it at the polling
// interval and from notifications/tasks/status. fn may run on another
// goroutine than the caller's, never on two at once; it must not block.
func WithTaskStatus(fn func(mcp.Task)) CallOption { return taskStatusOption{fn} }

// TaskStart is what CallToolTask got back: the task the server created, or
// the result when it answered at once (a 2026-07-28 server decides; a
// 2025-11-25 server that ignored the task request).
type TaskStart struct {
	// Tool is the tool called.
	Tool string
	// Task is the created task; nil when the server answered at once.
	Task *mcp.Task
	// Result is the immediate result; nil when a task was created.
	Result *mcp.CallToolResult

	c *Client
}

// Wait waits for the started call's result: the immediate result (with a
// *ToolError when it is an isError result), or WaitTask's outcome for the
// task, with the tool's outputSchema check.
func (s *TaskStart) Wait(ctx context.Context, opts ...CallOption) (*mcp.CallToolResult, error) {
	if s.Task == nil {
		if s.Result != nil && s.Result.IsError {
			return s.Result, s.c.toolError(s.Tool, s.Result)
		}
		return s.Result, nil
	}
	return s.c.waitTask(ctx, s.Task.TaskID, s.Tool, newCallConfig(opts))
}

// CallToolTask calls a tool as a task. In a 2025-11-25 session it asks for
// one (params.task, with WithTaskTTL's ttl), which needs the server's
// tasks.requests.tools.call capability and a tool whose
// execution.taskSupport is optional or required (when the tool's listing
// is at hand): otherwise it fails with ErrTasksUnsupported without sending
// anything. With WithProgress, the progress token stays valid for the
// task's life: reports reach fn until WaitTask or GetTask sees the task
// end (or the client closes). In 2026-07-28 the request declares the tasks
// extension (io.modelcontextprotocol/tasks) in its _meta and the server
// decides: the result is the created task or, when it answered at once,
// the result itself, checked as CallTool checks it (an isError result is
// returned in the TaskStart together with a *ToolError). input_required
// rounds before the task is created are answered as for CallTool. If ctx
// ends before the server answers, CallToolTask returns ctx's error at once
// but leaves the request standing, as the protocol cancels tasks with
// tasks/cancel only: a task the server then answers with is cancelled.
func (c *Client) CallToolTask(ctx context.Context, name string, args any, opts ...CallOption) (*TaskStart, error) {
	tc, err := c.newToolCall(ctx, name, args, opts)
	if err != nil {
		return nil, err
	}
	st := c.state()
	var token string
	if st.era == mcp.EraModern {
		tc.cc.caps = c.taskCaps()
	} else {
		if !legacyTasks(st.caps).toolCall {
			return nil, fmt.Errorf("client: %s as a task: %w: it did not declare tasks.requests.tools.call", name, ErrTasksUnsupported)
		}
		if tc.entry == nil {
			tc.entry = c.tools.get(name)
		}
		if tc.entry != nil && taskSupportOf(tc.entry.tool) == mcp.TaskForbidden {
			return nil, fmt.Errorf("client: %s as a task: %w: the tool's execution.taskSupport is forbidden", name, ErrTasksUnsupported)
		}
		if tc.out, err = withTaskParam(tc.out, tc.cc.taskTTL); err != nil {
			return nil, err
		}
		if tc.cc.progress != nil {
			tc.cc.onToken = func(t string) { token = t }
		}
	}
	raw, err := c.createTask(ctx, name, tc)
	if err != nil {
		return nil, err
	}
	task, isTask, err := decodeTaskAnswer(toolOp(name), raw)
	if err != nil {
		return nil, err
	}
	if isTask {
		if token != "" && !task.Status.Terminal() {
			c.tasks.keepProgress(c, task.TaskID, token, c.progressFunc(tc.cc.progress))
		}
		return &TaskStart{Tool: name, Task: task, c: c}, nil
	}
	res, err := c.toolResult(ctx, name, tc.entry, tc.validate, raw)
	if res == nil {
		return nil, err
	}
	return &TaskStart{Tool: name, Result: res, c: c}, err
}

// createTask sends a tools/call that asks for a task. The protocol cancels
// a task with tasks/cancel, never with notifications/cancelled, and needs
// the task's id to do so: the request is therefore not cancelled with ctx.
// When ctx ends first, createTask returns ctx's error at once, and a task
// the server answers with afterwards is cancelled, instead of running on
// until it expires.
func (c *Client) createTask(ctx context.Context, name string, tc *toolCall) (json.RawMessage, error) {
	if ctx.Done() == nil {
		return c.call(ctx, tc.out, tc.cc, true)
	}
	type answer struct {
		raw json.RawMessage
		err error
	}
	done := make(chan answer, 1)
	go func() {
		raw, err := c.call(context.WithoutCancel(ctx), tc.out, tc.cc, true)
		done <- answer{raw, err}
	}()
	select {
	case a := <-done:
		return a.raw, a.err
	case <-ctx.Done():
		go func() {
			a := <-done
			if a.err != nil {
				return
			}
			if task, isTask, err := decodeTaskAnswer(toolOp(name), a.raw); err == nil && isTask && !task.Status.Terminal() {
				if err := c.CancelTask(c.bg, task.TaskID); err != nil {
					c.cfg.logger.Debug("cannot cancel a task created after its call was cancelled", "task", task.TaskID, "error", err)
				}
			}
		}()
		return nil, &TransportError{Op: mcp.MethodCallTool, Err: ctxErr(ctx)}
	}
}

// CallToolTaskAs runs a tool as a task (CallToolTask), waits for its result
// (TaskStart.Wait) and decodes its structuredContent into Out as CallToolAs
// does. opts apply to both.
func CallToolTaskAs[Out any](ctx context.Context, c *Client, name string, args any, opts ...CallOption) (Out, error) {
	var out Out
	start, err := c.CallToolTask(ctx, name, args, opts...)
	if err != nil {
		return out, err
	}
	res, err := start.Wait(ctx, opts...)
	if err != nil {
		return out, err
	}
	return decodeStructured[Out](name, res)
}

// WaitTask waits for a tools/call task's result, known by its id only (a
// task started by another client, or before a restart): no outputSchema
// check is made, since the tool is not known (TaskStart.Wait makes it).
// In a 2025-11-25 session it sends tasks/result, which the server answers
// when the task has ended; the elicitation and sampling requests the
// server sends meanwhile are answered by the client's handlers. It is not
// bounded by the client's WithTimeout (a task may run for long), only by
// ctx and a WithTimeout given to WaitTask itself. In 2026-07-28 it polls
// tasks/get at the server's pollInterval (see Limits.MaxTaskPoll), answers the
// task's inputRequests with the client's handlers by tasks/update (each
// key once; at most Limits.MaxInputRounds updates), and returns the result
// once the task completed. The result is checked as CallTool's (an isError
// result comes with a *ToolError). A task that failed is a
// *TaskFailedError, one that was cancelled a *TaskCancelledError; an
// unknown id is the server's *JSONRPCError (-32602).
func (c *Client) WaitTask(ctx context.Context, id string, opts ...CallOption) (*mcp.CallToolResult, error) {
	return c.waitTask(ctx, id, "", newCallConfig(opts))
}

// GetTask asks for a task's state (tasks/get). In 2026-07-28 the answer also
// carries the result of a completed task (raw, unchecked: WaitTask checks
// it), the error of a failed one and the open input requests of one in
// input_required. The answer is decoded exactly; a malformed one is a
// *ProtocolError.
func (c *Client) GetTask(ctx context.Context, id string) (*mcp.DetailedTask, error) {
	d, _, err := c.getTask(ctx, id, callConfig{})
	if err != nil {
		return nil, err
	}
	return d, nil
}

// CancelTask asks the server to cancel a task (tasks/cancel). In a
// 2025-11-25 session it needs the server's tasks.cancel capability
// (ErrTasksUnsupported otherwise) and the server refuses a task that has
// already ended, or that it does not know, with -32602 (*JSONRPCError). A
// 2026-07-28 server acknowledges the cancellation of an ended task too and
// refuses only unknown ids.
func (c *Client) CancelTask(ctx context.Context, id string) error {
	st := c.state()
	if st.era != mcp.EraModern && !legacyTasks(st.caps).cancel {
		return fmt.Errorf("client: %s: %w: it did not declare tasks.cancel", mcp.MethodCancelTask, ErrTasksUnsupported)
	}
	raw, err := c.taskCall(ctx, mcp.MethodCancelTask, mcp.TaskIDParams{TaskID: id}, callConfig{})
	if err != nil {
		return err
	}
	if st.era == mcp.EraModern {
		var ack map[string]json.RawMessage
		if err := wirejson.Unmarshal(raw, &ack); err != nil {
			return &ProtocolError{Op: mcp.MethodCancelTask, Reason: "malformed result", Err: err}
		}
	} else if _, err := decodeDetailedTask(mcp.MethodCancelTask, raw); err != nil {
		return err
	}
	c.tasks.dropProgress(id)
	return nil
}

// UpdateTask answers a 2026-07-28 task's input requests (tasks/update),
// keyed as tasks/get listed them; the server acknowledges with an empty
// result. WaitTask does this itself with the client's handlers. In a
// 2025-11-25 session it fails with ErrWrongEra: the server asks there with
// requests of its own, which the handlers answer.
func (c *Client) UpdateTask(ctx context.Context, id string, responses mcp.InputResponses) error {
	if c.Era() != mcp.EraModern {
		return fmt.Errorf("client: %s: %w (2025-11-25 servers send their requests over the session)", mcp.MethodUpdateTask, ErrWrongEra)
	}
	raw, err := c.taskCall(ctx, mcp.MethodUpdateTask, mcp.UpdateTaskParams{TaskID: id, InputResponses: responses}, callConfig{})
	if err != nil {
		return err
	}
	var ack map[string]json.RawMessage
	if err := wirejson.Unmarshal(raw, &ack); err != nil {
		return &ProtocolError{Op: mcp.MethodUpdateTask, Reason: "malformed result", Err: err}
	}
	return nil
}

// TaskPages lists a 2025-11-25 server's tasks page by page (tasks/list with
// nextCursor), following at most Limits.MaxPages pages. Each step yields one
// page or an error, after which iteration stops. It needs the server's
// tasks.list capability (ErrTasksUnsupported otherwise); 2026-07-28 has no
// task listing (ErrWrongEra).
func (c *Client) TaskPages(ctx context.Context) iter.Seq2[*mcp.ListTasksResult, error] {
	return func(yield func(*mcp.ListTasksResult, error) bool) {
		st := c.state()
		if st.era == mcp.EraModern {
			yield(nil, fmt.Errorf("client: %s: %w (2026-07-28 has no task listing)", mcp.MethodListTasks, ErrWrongEra))
			return
		}
		if !legacyTasks(st.caps).list {
			yield(nil, fmt.Errorf("client: %s: %w: it did not declare tasks.list", mcp.MethodListTasks, ErrTasksUnsupported))
			return
		}
		listPages(c, ctx, mcp.MethodListTasks, decodeTasksPage, yield)
	}
}

// ListTasks returns every task a 2025-11-25 server lists (tasks/list),
// following all pages (at most Limits.MaxPages); see TaskPages.
func (c *Client) ListTasks(ctx context.Context) ([]mcp.Task, error) {
	return allPages(c.TaskPages(ctx), func(p *mcp.ListTasksResult) []mcp.Task { return p.Tasks })
}

func decodeTasksPage(raw json.RawMessage) (*mcp.ListTasksResult, *string, error) {
	const op, member = mcp.MethodListTasks, "tasks"
	var p struct {
		pageHead
		Tasks []json.RawMessage `json:"tasks"`
	}
	if err := decodePage(op, "task list", member, raw, &p, &p.Tasks); err != nil {
		return nil, nil, err
	}
	res := &mcp.ListTasksResult{Tasks: make([]mcp.Task, 0, len(p.Tasks)), NextCursor: p.nextCursor(), Meta: p.Meta}
	for i, traw := range p.Tasks {
		d, err := decodeDetailedTask(op, traw)
		if err != nil {
			var pe *ProtocolError
			if errors.As(err, &pe) {
				ie := itemError(op, member, i, "is not a task", nil)
				pe.Reason, pe.Path = ie.Reason, ie.Path
			}
			return nil, nil, err
		}
		res.Tasks = append(res.Tasks, d.Task)
	}
	return res, p.NextCursor, nil
}

// IsTaskRequired reports whether err is a 2026-07-28 server's refusal of a
// call it runs only as a task, made without the tasks extension declared:
// a *JSONRPCError -32021 whose data.requiredCapabilities.extensions names
// io.modelcontextprotocol/tasks. CallToolTask makes such a call.
func IsTaskRequired(err error) bool {
	var je *JSONRPCError
	if !errors.As(err, &je) || je.Code != mcp.CodeMissingRequiredClientCapability || len(je.Data) == 0 {
		return false
	}
	var d struct {
		RequiredCapabilities struct {
			Extensions map[string]json.RawMessage `json:"extensions"`
		} `json:"requiredCapabilities"`
	}
	if wirejson.Unmarshal(je.Data, &d) != nil {
		return false
	}
	_, ok := d.RequiredCapabilities.Extensions[mcp.ExtensionTasks]
	return ok
}

// TaskFailedError: a task ended with status failed. Err is the JSON-RPC
// error it failed with, as a plain call would have been answered (nil when
// the server gave none), so errors.As finds the *JSONRPCError too. Its code
// is CodeJSONRPC.
type TaskFailedError struct {
	TaskID        string
	StatusMessage string
	Err           *JSONRPCError
}

func (e *TaskFailedError) Error() string {
	s := fmt.Sprintf("task %s failed", e.TaskID)
	switch {
	case e.Err != nil:
		s += ": " + e.Err.Error()
	case e.StatusMessage != "":
		s += ": " + e.StatusMessage
	}
	return s
}

func (e *TaskFailedError) Unwrap() error {
	if e.Err == nil {
		return nil
	}
	return e.Err
}
func (*TaskFailedError) MCPCode() Code { return CodeJSONRPC }

// TaskCancelledError: a task ended with status cancelled, so it has no
// result. Its code is CodeJSONRPC.
type TaskCancelledError struct {
	TaskID        string
	StatusMessage string
}

func (e *TaskCancelledError) Error() string {
	s := fmt.Sprintf("task %s was cancelled", e.TaskID)
	if e.StatusMessage != "" {
		s += ": " + e.StatusMessage
	}
	return s
}
func (*TaskCancelledError) MCPCode() Code { return CodeJSONRPC }

// waitTask is WaitTask; tool, when known, names the tool for the
// outputSchema check and errors.
func (c *Client) waitTask(ctx context.Context, id, tool string, cc callConfig) (*mcp.CallToolResult, error) {
	defer c.tasks.dropProgress(id)
	rep := newStatusReporter(cc.taskStatus)
	if c.Era() == mcp.EraModern {
		return c.pollTask(ctx, id, tool, cc, rep)
	}
	if rep != nil {
		unwatch := c.tasks.watch(id, rep)
		defer unwatch()
		pctx, stop := context.WithCancel(ctx)
		done := make(chan struct{})
		go func() { defer close(done); c.reportTask(pctx, id, rep) }()
		defer func() { stop(); <-done }()
	}
	rc := cc
	if !rc.hasTimeout {
		rc.timeout, rc.hasTimeout = -1, true // as long as the task runs
	}
	rc.progress, rc.onToken = nil, nil
	raw, err := c.taskCall(ctx, mcp.MethodTaskResult, mcp.TaskIDParams{TaskID: id}, rc)
	if err != nil {
		var je *JSONRPCError
		if errors.As(err, &je) {
			// The error a failed task ended with comes as tasks/result's
			// own; the task's state tells it from a refusal.
			if d, _, gerr := c.getTask(ctx, id, callConfig{}); gerr == nil {
				rep.report(d.Task)
				switch d.Status {
				case mcp.TaskFailed:
					je.Method = taskOp(id, tool)
					return nil, &TaskFailedError{TaskID: id, StatusMessage: d.StatusMessage, Err: je}
				case mcp.TaskCancelled:
					return nil, &TaskCancelledError{TaskID: id, StatusMessage: d.StatusMessage}
				}
			}
		}
		return nil, err
	}
	return c.taskResult(ctx, id, tool, cc, raw)
}

// reportTask sends tasks/get alongside a 2025-11-25 tasks/result, to report
// the task's status, until ctx ends or the task has.
func (c *Client) reportTask(ctx context.Context, id string, rep *statusReporter) {
	for {
		d, _, err := c.getTask(ctx, id, callConfig{})
		if err != nil {
			if ctx.Err() == nil {
				c.cfg.logger.Debug("cannot report the task's status", "task", id, "error", err)
			}
			return
		}
		rep.report(d.Task)
		if d.Status.Terminal() || backoff.Sleep(ctx, c.pollInterval(d.PollInterval)) != nil {
			return
		}
	}
}

// pollTask waits for a 2026-07-28 task by polling tasks/get.
func (c *Client) pollTask(ctx context.Context, id, tool string, cc callConfig, rep *statusReporter) (*mcp.CallToolResult, error) {
	answered := map[string]bool{}
	updates := 0
	op := taskOp(id, tool)
	for {
		d, inputs, err := c.getTask(ctx, id, callConfig{timeout: cc.timeout, hasTimeout: cc.hasTimeout})
		if err != nil {
			return nil, err
		}
		rep.report(d.Task)
		switch d.Status {
		case mcp.TaskCompleted:
			if d.Result == nil {
				return nil, &ProtocolError{Op: mcp.MethodGetTask, Reason: fmt.Sprintf("task %s is completed but has no result", id), Path: "/result"}
			}
			return c.taskResult(ctx, id, tool, cc, d.Result)
		case mcp.TaskFailed:
			fe := &TaskFailedError{TaskID: id, StatusMessage: d.StatusMessage}
			if d.Error != nil {
				fe.Err = &JSONRPCError{Method: op, Code: d.Error.Code, Message: d.Error.Message, Data: d.Error.Data}
			}
			return nil, fe
		case mcp.TaskCancelled:
			return nil, &TaskCancelledError{TaskID: id, StatusMessage: d.StatusMessage}
		case mcp.TaskInputRequired:
			open := map[string]json.RawMessage{}
			for k, v := range inputs {
				if !answered[k] {
					open[k] = v
				}
			}
			if len(open) > 0 {
				if updates >= c.cfg.limits.MaxInputRounds {
					return nil, &ProtocolError{Op: op, Reason: fmt.Sprintf("the task still requires input after %d updates, the client's limit", updates)}
				}
				updates++
				responses, err := c.answerInputs(ctx, op, open)
				if err != nil {
					return nil, err
				}
				for k := range open {
					answered[k] = true
				}
				if _, err := c.taskCall(ctx, mcp.MethodUpdateTask, map[string]json.RawMessage{
					"taskId": appendJSONString(nil, id), "inputResponses": responses}, callConfig{}); err != nil {
					return nil, err
				}
				continue // look again at once: the answers may have let it go on
			}
		}
		if backoff.Sleep(ctx, c.pollInterval(d.PollInterval)) != nil {
			return nil, &TransportError{Op: mcp.MethodGetTask, Err: ctxErr(ctx)}
		}
	}
}

// taskResult checks the result a task produced as CallTool checks a
// result; tool "" skips the outputSchema check.
func (c *Client) taskResult(ctx context.Context, id, tool string, cc callConfig, raw json.RawMessage) (*mcp.CallToolResult, error) {
	name := tool
	if name == "" {
		name = "task " + id
	}
	validate := tool != "" && cc.validates(c)
	var entry *toolEntry
	if validate {
		var err error
		if entry, err = c.toolForCall(ctx, tool, true); err != nil {
			return nil, err
		}
	}
	return c.toolResult(ctx, name, entry, validate, raw)
}

func taskOp(id, tool string) string {
	if tool == "" {
		return "task " + id
	}
	return toolOp(tool) + " (task " + id + ")"
}

// pollInterval is how long to wait before the next tasks/get.
func (c *Client) pollInterval(suggested *time.Duration) time.Duration {
	d := DefaultTaskPoll
	if suggested != nil {
		d = *suggested
	}
	return min(max(d, c.cfg.limits.MinTaskPoll), c.cfg.limits.MaxTaskPoll)
}

// getTask sends tasks/get and decodes the answer exactly; inputs are the
// raw input requests of a 2026-07-28 task in input_required.
func (c *Client) getTask(ctx context.Context, id string, cc callConfig) (*mcp.DetailedTask, map[string]json.RawMessage, error) {
	raw, err := c.taskCall(ctx, mcp.MethodGetTask, mcp.TaskIDParams{TaskID: id}, cc)
	if err != nil {
		return nil, nil, err
	}
	d, err := decodeDetailedTask(mcp.MethodGetTask, raw)
	if err != nil {
		return nil, nil, err
	}
	if d.TaskID != id {
		return nil, nil, &ProtocolError{Op: mcp.MethodGetTask, Reason: fmt.Sprintf("asked for task %q, the server answered with task %q", id, d.TaskID), Path: "/taskId"}
	}
	if d.Status.Terminal() {
		c.tasks.dropProgress(id)
	}
	var inputs map[string]json.RawMessage
	if len(d.InputRequests) > 0 {
		var w struct {
			InputRequests map[string]json.RawMessage `json:"inputRequests"`
		}
		_ = wirejson.Unmarshal(raw, &w) // read exactly above
		inputs = w.InputRequests
	}
	return d, inputs, nil
}

// taskCall sends a task request; in 2026-07-28 it declares the tasks
// extension, without which the server refuses tasks/* (-32021).
func (c *Client) taskCall(ctx context.Context, method string, params any, cc callConfig) (json.RawMessage, error) {
	out, err := newOutgoing(method, params)
	if err != nil {
		return nil, err
	}
	if c.Era() == mcp.EraModern {
		cc.caps = c.taskCaps()
	}
	return c.call(ctx, out, cc, false)
}

// taskCaps is the client's capabilities with the tasks extension declared,
// encoded once.
func (c *Client) taskCaps() json.RawMessage {
	c.tasks.capsOnce.Do(func() {
		caps := c.cfg.capabilities
		caps.Extensions = maps.Clone(caps.Extensions)
		if caps.Extensions == nil {
			caps.Extensions = map[string]json.RawMessage{}
		}
		if _, ok := caps.Extensions[mcp.ExtensionTasks]; !ok {
			caps.Extensions[mcp.ExtensionTasks] = json.RawMessage(`{}`)
		}
		c.tasks.caps = mustJSON(caps)
	})
	return c.tasks.caps
}

// withTaskParam adds params.task (2025-11-25) to a tools/call.
func withTaskParam(out outgoing, ttl *time.Duration) (outgoing, error) {
	obj, err := paramsObject(out.params)
	if err != nil {
		return outgoing{}, err
	}
	var tp mcp.TaskParams
	if ttl != nil {
		ms := max(ttl.Milliseconds(), 0)
		tp.TTL = &ms
	}
	obj["task"] = mustJSON(tp)
	next := objectOutgoing(out.method, obj)
	next.known, next.tool, next.args = out.known, out.tool, out.args
	return next, nil
}

// legacyTaskCaps is what a 2025-11-25 server's tasks capability offers.
type legacyTaskCaps struct{ list, cancel, toolCall bool }

func legacyTasks(caps mcp.ServerCapabilities) legacyTaskCaps {
	var w struct {
		List     json.RawMessage `json:"list"`
		Cancel   json.RawMessage `json:"cancel"`
		Requests struct {
			Tools struct {
				Call json.RawMessage `json:"call"`
			} `json:"tools"`
		} `json:"requests"`
	}
	if len(caps.Tasks) == 0 || wirejson.Unmarshal(caps.Tasks, &w) != nil {
		return legacyTaskCaps{}
	}
	set := func(r json.RawMessage) bool { return len(r) > 0 && string(r) != "null" }
	return legacyTaskCaps{list: set(w.List), cancel: set(w.Cancel), toolCall: set(w.Requests.Tools.Call)}
}

// taskSupportOf is a tool's execution.taskSupport; absent is forbidden.
func taskSupportOf(t *mcp.Tool) mcp.TaskSupport {
	if t == nil || t.Execution == nil || t.Execution.TaskSupport == "" {
		return mcp.TaskForbidden
	}
	return t.Execution.TaskSupport
}
