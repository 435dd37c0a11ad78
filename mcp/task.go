package mcp

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/toolwire/toolwire/internal/wirejson"
)

// Task methods and notifications. tasks/result and tasks/list exist in
// 2025-11-25 only; tasks/update and notifications/tasks in the 2026-07-28
// tasks extension only.
const (
	MethodGetTask          = "tasks/get"
	MethodTaskResult       = "tasks/result"
	MethodListTasks        = "tasks/list"
	MethodCancelTask       = "tasks/cancel"
	MethodUpdateTask       = "tasks/update"
	NotificationTaskStatus = "notifications/tasks/status"
	NotificationTasks      = "notifications/tasks"
)

// ExtensionTasks is the 2026-07-28 tasks extension (SEP-2663), declared
// under capabilities.extensions by a server that runs tasks and by a
// client that accepts a CreateTaskResult.
const ExtensionTasks = "io.modelcontextprotocol/tasks"

// RelatedTask is the value of _meta[MetaRelatedTask].
type RelatedTask struct {
	TaskID string `json:"taskId"`
}

// TaskStatus is where a task stands.
type TaskStatus string

// Task states; completed, failed and cancelled are terminal and never change.
const (
	TaskWorking       TaskStatus = "working"
	TaskInputRequired TaskStatus = "input_required"
	TaskCompleted     TaskStatus = "completed"
	TaskFailed        TaskStatus = "failed"
	TaskCancelled     TaskStatus = "cancelled"
)

// Terminal reports whether a task in this state is done for good.
func (s TaskStatus) Terminal() bool {
	return s == TaskCompleted || s == TaskFailed || s == TaskCancelled
}

// Valid reports whether s is one of the five task states.
func (s TaskStatus) Valid() bool {
	switch s {
	case TaskWorking, TaskInputRequired, TaskCompleted, TaskFailed, TaskCancelled:
		return true
	}
	return false
}

// Task is the state of a long-running request.
type Task struct {
	TaskID        string
	Status        TaskStatus
	StatusMessage string
	CreatedAt     time.Time
	LastUpdatedAt time.Time
	// TTL is how long the task and its result are kept after creation; nil
	// for no limit. On the wire: ttl (2025-11-25) or ttlMs (2026-07-28), in
	// whole milliseconds.
	TTL *time.Duration
	// PollInterval suggests how often to poll; nil for no suggestion.
	PollInterval *time.Duration
}

// taskWire is a task on the wire, in either era's spelling.
type taskWire struct {
	TaskID         string          `json:"taskId"`
	Status         TaskStatus      `json:"status"`
	StatusMessage  string          `json:"statusMessage,omitempty"`
	CreatedAt      string          `json:"createdAt"`
	LastUpdatedAt  string          `json:"lastUpdatedAt"`
	TTL            json.RawMessage `json:"ttl,omitempty"`
	PollInterval   *int64          `json:"pollInterval,omitempty"`
	TTLMs          json.RawMessage `json:"ttlMs,omitempty"`
	PollIntervalMs *int64          `json:"pollIntervalMs,omitempty"`
}

func millis(d *time.Duration) *int64 {
	if d == nil {
		return nil
	}
	v := d.Milliseconds()
	return &v
}

// wire spells t for era: ttl is always present (null for no limit).
func (t *Task) wire(era Era) taskWire {
	w := taskWire{TaskID: t.TaskID, Status: t.Status, StatusMessage: t.StatusMessage,
		CreatedAt: t.CreatedAt.UTC().Format(time.RFC3339Nano), LastUpdatedAt: t.LastUpdatedAt.UTC().Format(time.RFC3339Nano)}
	ttl := json.RawMessage("null")
	if t.TTL != nil {
		ttl = json.RawMessage(fmt.Sprint(t.TTL.Milliseconds()))
	}
	if era == EraModern {
		w.TTLMs, w.PollIntervalMs = ttl, millis(t.PollInterval)
	} else {
		w.TTL, w.PollInterval = ttl, millis(t.PollInterval)
	}
	return w
}

// fromWire reads a task in either era's spelling: a client is precise, not
// brittle, about which revision's member names a server used.
func (t *Task) fromWire(w *taskWire) error {
	if w.TaskID == "" {
		return errors.New(`task: "taskId" is missing or empty`)
	}
	if !w.Status.Valid() {
		return fmt.Errorf("task: unknown status %q", w.Status)
	}
	created, err := time.Parse(time.RFC3339Nano, w.CreatedAt)
	if err != nil {
		return fmt.Errorf("task: createdAt: %v", err)
	}
	updated, err := time.Parse(time.RFC3339Nano, w.LastUpdatedAt)
	if err != nil {
		return fmt.Errorf("task: lastUpdatedAt: %v", err)
	}
	for _, ts := range []time.Time{created, updated} {
		if y := ts.UTC().Year(); y < 1 || y > 9999 {
			return fmt.Errorf("task: timestamp %s is outside the years 1 to 9999", ts.Format(time.RFC3339))
		}
	}
	ttl, err := durationMs("ttl", w.TTL, w.TTLMs)
	if err != nil {
		return err
	}
	poll := w.PollInterval
	if w.PollIntervalMs != nil {
		poll = w.PollIntervalMs
	}
	*t = Task{TaskID: w.TaskID, Status: w.Status, StatusMessage: w.StatusMessage, CreatedAt: created, LastUpdatedAt: updated, TTL: ttl}
	if poll != nil {
		if *poll < 0 || *poll > maxMillis {
			return fmt.Errorf("task: pollInterval %d is out of range (0 to %d milliseconds)", *poll, int64(maxMillis))
		}
		d := time.Duration(*poll) * time.Millisecond
		t.PollInterval = &d
	}
	return nil
}

// maxMillis is the longest duration a time.Duration holds, in milliseconds.
const maxMillis = int64(1<<63-1) / int64(time.Millisecond)

func durationMs(name string, legacy, modern json.RawMessage) (*time.Duration, error) {
	raw := legacy
	if modern != nil {
		raw = modern
	}
	if raw == nil || string(raw) == "null" {
		return nil, nil
	}
	var ms int64
	if err := wirejson.Unmarshal(raw, &ms); err != nil || ms < 0 || ms > maxMillis {
		return nil, fmt.Errorf("task: %s must be a non-negative whole number of milliseconds (at most %d) or null, not %s", name, int64(maxMillis), raw)
	}
	d := time.Duration(ms) * time.Millisecond
	return &d, nil
}

// MarshalJSON writes the task in its 2025-11-25 spelling.
func (t Task) MarshalJSON() ([]byte, error) { return json.Marshal(t.wire(EraLegacy)) }

// UnmarshalJSON reads a task in either revision's spelling.
func (t *Task) UnmarshalJSON(b []byte) error {
	var w taskWire
	if err := wirejson.Unmarshal(b, &w); err != nil {
		return err
	}
	return t.fromWire(&w)
}

// CreateTaskResult answers a request that became a task. In 2025-11-25 it is
// sent as {"task": {...}} with ttl and pollInterval in milliseconds; in
// 2026-07-28 as the task's members themselves with resultType "task", ttlMs
// and pollIntervalMs.
type CreateTaskResult struct {
	Task Task
	Meta Meta
}

// AppendEra implements EraEncoder.
func (r *CreateTaskResult) AppendEra(b []byte, era Era) ([]byte, error) {
	var v any
	if era == EraModern {
		v = struct {
			ResultType ResultType `json:"resultType"`
			taskWire
			Meta Meta `json:"_meta,omitempty"`
		}{ResultTask, r.Task.wire(era), r.Meta}
	} else {
		v = struct {
			Task taskWire `json:"task"`
			Meta Meta     `json:"_meta,omitempty"`
		}{r.Task.wire(era), r.Meta}
	}
	return appendMarshal(b, v)
}

// UnmarshalJSON reads either era's shape: {"task": {...}} or the flat task
// with resultType "task".
func (r *CreateTaskResult) UnmarshalJSON(b []byte) error {
	var head struct {
		Task       json.RawMessage `json:"task"`
		ResultType ResultType      `json:"resultType"`
		Meta       Meta            `json:"_meta"`
	}
	if err := wirejson.Unmarshal(b, &head); err != nil {
		return err
	}
	r.Meta = head.Meta
	if head.Task != nil {
		return r.Task.UnmarshalJSON(head.Task)
	}
	if head.ResultType != ResultTask {
		return fmt.Errorf("not a CreateTaskResult: resultType %q and no task", head.ResultType)
	}
	var w taskWire
	if err := wirejson.Unmarshal(b, &w); err != nil {
		return err
	}
	return r.Task.fromWire(&w)
}

// TaskIDParams are the params of tasks/get, tasks/result and tasks/cancel.
type TaskIDParams struct {
	TaskID string `json:"taskId"`
	Meta   Meta   `json:"_meta,omitempty"`
}

// UpdateTaskParams are the params of tasks/update (2026-07-28): answers to
// the input requests a task is waiting on, keyed as tasks/get listed them.
type UpdateTaskParams struct {
	TaskID         string         `json:"taskId"`
	InputResponses InputResponses `json:"inputResponses"`
	Meta           Meta           `json:"_meta,omitempty"`
}

// ListTasksParams are the params of tasks/list (2025-11-25).
type ListTasksParams struct {
	Cursor string `json:"cursor,omitempty"`
	Meta   Meta   `json:"_meta,omitempty"`
}

// ListTasksResult is one page of tasks/list.
type ListTasksResult struct {
	Tasks      []Task `json:"tasks"`
	NextCursor string `json:"nextCursor,omitempty"`
	Meta       Meta   `json:"_meta,omitempty"`
}

// TaskError is the JSON-RPC error a failed task ended with.
type TaskError struct {
	Code    int64           `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data,omitempty"`
}

// DetailedTask is a task with what it produced: the answer to tasks/get in
// 2025-11-25 (the task alone) and in 2026-07-28 (with the result once
// completed, the error once failed, the open input requests while
// input_required), and the params of task status notifications.
type DetailedTask struct {
	Task
	// Result is the request's own result, as a plain call would have
	// answered it (2026-07-28, completed).
	Result json.RawMessage
	// Error is the protocol error the task failed with (2026-07-28,
	// failed).
	Error *TaskError
	// InputRequests are the requests the task waits on (2026-07-28,
	// input_required), keyed by ids tasks/update answers to.
	InputRequests map[string]InputRequest
	Meta          Meta
}

// AppendEra implements EraEncoder: 2025-11-25 sends the task's members;
// 2026-07-28 adds result, error and inputRequests.
func (d *DetailedTask) AppendEra(b []byte, era Era) ([]byte, error) {
	var v any
	if era == EraModern {
		v = struct {
			taskWire
			Result        json.RawMessage         `json:"result,omitempty"`
			Error         *TaskError              `json:"error,omitempty"`
			InputRequests map[string]InputRequest `json:"inputRequests,omitempty"`
			Meta          Meta                    `json:"_meta,omitempty"`
		}{d.Task.wire(era), d.Result, d.Error, d.InputRequests, d.Meta}
	} else {
		v = struct {
			taskWire
			Meta Meta `json:"_meta,omitempty"`
		}{d.Task.wire(era), d.Meta}
	}
	return appendMarshal(b, v)
}

// UnmarshalJSON reads a task result of either era.
func (d *DetailedTask) UnmarshalJSON(b []byte) error {
	var w struct {
		taskWire
		Result        json.RawMessage         `json:"result"`
		Error         *TaskError              `json:"error"`
		InputRequests map[string]InputRequest `json:"inputRequests"`
		Meta          Meta                    `json:"_meta"`
		ResultType    ResultType              `json:"resultType"`
	}
	if err := wirejson.Unmarshal(b, &w); err != nil {
		return err
	}
	if err := d.Task.fromWire(&w.taskWire); err != nil {
		return err
	}
	if bytes.Equal(w.Result, []byte("null")) {
		w.Result = nil
	}
	if w.Result != nil && w.Result[0] != '{' {
		return fmt.Errorf("task: result must be an object, not %s", w.Result)
	}
	d.Result, d.Error, d.InputRequests, d.Meta = w.Result, w.Error, w.InputRequests, w.Meta
	return nil
}

// UnmarshalJSON decodes a tasks/list page exactly.
func (r *ListTasksResult) UnmarshalJSON(b []byte) error {
	type plain ListTasksResult
	var p plain
	if err := wirejson.Unmarshal(b, &p); err != nil {
		return err
	}
	*r = ListTasksResult(p)
	return nil
}
