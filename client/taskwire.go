package client

import (
	"encoding/json"
	"sync"

	"github.com/toolwire/toolwire/internal/wirejson"
	"github.com/toolwire/toolwire/mcp"
)

// Reading tasks off the wire exactly, and the client's task bookkeeping
// (progress tokens kept past tools/call, status reporters).

// taskNames lists the members of a task (either era's spelling) and of
// what carries one, so that exact decoding refuses a member named twice or
// a case variant of one before the mcp types read them.
type taskNames struct {
	TaskID         json.RawMessage            `json:"taskId"`
	Status         json.RawMessage            `json:"status"`
	StatusMessage  json.RawMessage            `json:"statusMessage"`
	CreatedAt      json.RawMessage            `json:"createdAt"`
	LastUpdatedAt  json.RawMessage            `json:"lastUpdatedAt"`
	TTL            json.RawMessage            `json:"ttl"`
	PollInterval   json.RawMessage            `json:"pollInterval"`
	TTLMs          json.RawMessage            `json:"ttlMs"`
	PollIntervalMs json.RawMessage            `json:"pollIntervalMs"`
	ResultType     json.RawMessage            `json:"resultType"`
	Result         json.RawMessage            `json:"result"`
	Error          *taskErrorNames            `json:"error"`
	InputRequests  map[string]json.RawMessage `json:"inputRequests"`
	Meta           json.RawMessage            `json:"_meta"`
}

type taskErrorNames struct {
	Code    *int64          `json:"code"`
	Message *string         `json:"message"`
	Data    json.RawMessage `json:"data"`
}

// decodeDetailedTask reads a task (tasks/get, tasks/cancel, an entry of
// tasks/list) exactly.
func decodeDetailedTask(op string, raw json.RawMessage) (*mcp.DetailedTask, error) {
	var names taskNames
	if err := wirejson.Unmarshal(raw, &names); err != nil {
		return nil, &ProtocolError{Op: op, Reason: "malformed task", Err: err}
	}
	if names.Error != nil && (names.Error.Code == nil || names.Error.Message == nil) {
		return nil, &ProtocolError{Op: op, Reason: `malformed task: "error" needs "code" and "message"`, Path: "/error"}
	}
	d := new(mcp.DetailedTask)
	if err := d.UnmarshalJSON(raw); err != nil {
		return nil, &ProtocolError{Op: op, Reason: "malformed task", Err: err}
	}
	return d, nil
}

// decodeTaskAnswer tells a tools/call answer that created a task (2025-11-25
// {"task": {...}}, or 2026-07-28 resultType "task") from a result, and reads
// the task exactly. isTask is false for anything else, which is then read
// as a result.
func decodeTaskAnswer(op string, raw json.RawMessage) (task *mcp.Task, isTask bool, err error) {
	var head struct {
		Task       json.RawMessage `json:"task"`
		ResultType mcp.ResultType  `json:"resultType"`
		Content    json.RawMessage `json:"content"`
		Meta       json.RawMessage `json:"_meta"`
	}
	if err := wirejson.Unmarshal(raw, &head); err != nil {
		return nil, false, nil // not an object read exactly: the result decoder says why
	}
	inner := head.Task
	switch {
	case head.ResultType == mcp.ResultTask:
		inner = raw
	case inner == nil || head.Content != nil:
		return nil, false, nil
	}
	var names taskNames
	if err := wirejson.Unmarshal(inner, &names); err != nil {
		return nil, true, &ProtocolError{Op: op, Reason: "malformed task", Err: err}
	}
	var r mcp.CreateTaskResult
	if err := r.UnmarshalJSON(raw); err != nil {
		return nil, true, &ProtocolError{Op: op, Reason: "malformed task", Err: err}
	}
	return &r.Task, true, nil
}

// statusReporter calls a WithTaskStatus callback when the status or
// statusMessage changes; nil reports nothing.
type statusReporter struct {
	mu     sync.Mutex
	fn     func(mcp.Task)
	seen   bool
	status mcp.TaskStatus
	msg    string
}

func newStatusReporter(fn func(mcp.Task)) *statusReporter {
	if fn == nil {
		return nil
	}
	return &statusReporter{fn: fn}
}

func (r *statusReporter) report(t mcp.Task) {
	if r == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.seen && (r.status.Terminal() || r.status == t.Status && r.msg == t.StatusMessage) {
		return // a terminal status never changes: a late, stale report is dropped
	}
	r.seen, r.status, r.msg = true, t.Status, t.StatusMessage
	r.fn(t)
}

// taskState is the client's task bookkeeping: the encoded capabilities
// with the tasks extension, the progress tokens 2025-11-25 tasks keep, and
// the status reporters notifications/tasks/status and notifications/tasks
// go to.
type taskState struct {
	capsOnce sync.Once
	caps     json.RawMessage

	mu       sync.Mutex
	progress map[string]func(json.RawMessage) // by token
	tokens   map[string]string                // task id → token
	watchers map[string]map[*statusReporter]bool
}

func (ts *taskState) keepProgress(c *Client, id, token string, fn func(json.RawMessage)) {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	if len(ts.tokens) >= maxKeptProgress {
		c.cfg.logger.Warn("not keeping the task's progress token: too many tasks report progress", "task", id, "limit", maxKeptProgress)
		return
	}
	if ts.progress == nil {
		ts.progress, ts.tokens = map[string]func(json.RawMessage){}, map[string]string{}
	}
	ts.progress[token], ts.tokens[id] = fn, token
}

func (ts *taskState) dropProgress(id string) {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	if tok, ok := ts.tokens[id]; ok {
		delete(ts.progress, tok)
		delete(ts.tokens, id)
	}
}

// routeProgress hands a progress notification to the task whose token it
// carries; false when none has it.
func (ts *taskState) routeProgress(params json.RawMessage) bool {
	var head struct {
		Token json.RawMessage `json:"progressToken"`
	}
	if wirejson.Unmarshal(params, &head) != nil {
		return false
	}
	var tok string
	if wirejson.Unmarshal(head.Token, &tok) != nil {
		return false
	}
	ts.mu.Lock()
	fn := ts.progress[tok]
	ts.mu.Unlock()
	if fn == nil {
		return false
	}
	fn(params)
	return true
}

func (ts *taskState) watch(id string, r *statusReporter) (unwatch func()) {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	if ts.watchers == nil {
		ts.watchers = map[string]map[*statusReporter]bool{}
	}
	if ts.watchers[id] == nil {
		ts.watchers[id] = map[*statusReporter]bool{}
	}
	ts.watchers[id][r] = true
	return func() {
		ts.mu.Lock()
		defer ts.mu.Unlock()
		delete(ts.watchers[id], r)
		if len(ts.watchers[id]) == 0 {
			delete(ts.watchers, id)
		}
	}
}

// routeStatus reports the task a status notification carries to those
// waiting on it; a malformed one is ignored.
func (ts *taskState) routeStatus(params json.RawMessage) {
	ts.mu.Lock()
	n := len(ts.watchers)
	ts.mu.Unlock()
	if n == 0 {
		return
	}
	var head struct {
		TaskID string `json:"taskId"`
	}
	if wirejson.Unmarshal(params, &head) != nil || head.TaskID == "" {
		return
	}
	ts.mu.Lock()
	rs := make([]*statusReporter, 0, len(ts.watchers[head.TaskID]))
	for r := range ts.watchers[head.TaskID] {
		rs = append(rs, r)
	}
	ts.mu.Unlock()
	if len(rs) == 0 {
		return
	}
	// notifications/tasks (2026-07-28) may carry only taskId and status.
	var t mcp.Task
	if err := t.UnmarshalJSON(params); err != nil {
		var w struct {
			Status        mcp.TaskStatus `json:"status"`
			StatusMessage string         `json:"statusMessage"`
		}
		if wirejson.Unmarshal(params, &w) != nil || !w.Status.Valid() {
			return
		}
		t = mcp.Task{TaskID: head.TaskID, Status: w.Status, StatusMessage: w.StatusMessage}
	}
	for _, r := range rs {
		r.report(t)
	}
}
