package mcp

import (
	"encoding/json"
	"time"
)

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

// Task is the state of a long-running request.
type Task struct {
	TaskID        string     `json:"taskId"`
	Status        TaskStatus `json:"status"`
	StatusMessage string     `json:"statusMessage,omitempty"`
	CreatedAt     time.Time  `json:"createdAt"`
	LastUpdatedAt time.Time  `json:"lastUpdatedAt"`
	// TTL is how long the task and its result are kept after creation; nil
	// for no limit.
	TTL *time.Duration `json:"-"`
	// PollInterval suggests how often to poll; nil for no suggestion.
	PollInterval *time.Duration `json:"-"`
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
	type wire struct {
		TaskID        string     `json:"taskId"`
		Status        TaskStatus `json:"status"`
		StatusMessage string     `json:"statusMessage,omitempty"`
		CreatedAt     string     `json:"createdAt"`
		LastUpdatedAt string     `json:"lastUpdatedAt"`
	}
	t := r.Task
	w := wire{t.TaskID, t.Status, t.StatusMessage, t.CreatedAt.UTC().Format(time.RFC3339Nano), t.LastUpdatedAt.UTC().Format(time.RFC3339Nano)}
	ms := func(d *time.Duration) *int64 {
		if d == nil {
			return nil
		}
		v := d.Milliseconds()
		return &v
	}
	var v any
	if era == EraModern {
		v = struct {
			ResultType ResultType `json:"resultType"`
			wire
			TTLMs          *int64 `json:"ttlMs,omitempty"`
			PollIntervalMs *int64 `json:"pollIntervalMs,omitempty"`
			Meta           Meta   `json:"_meta,omitempty"`
		}{ResultTask, w, ms(t.TTL), ms(t.PollInterval), r.Meta}
	} else {
		ttl := json.RawMessage("null")
		if t.TTL != nil {
			ttl, _ = json.Marshal(t.TTL.Milliseconds())
		}
		v = struct {
			Task struct {
				wire
				TTL          json.RawMessage `json:"ttl"`
				PollInterval *int64          `json:"pollInterval,omitempty"`
			} `json:"task"`
			Meta Meta `json:"_meta,omitempty"`
		}{Task: struct {
			wire
			TTL          json.RawMessage `json:"ttl"`
			PollInterval *int64          `json:"pollInterval,omitempty"`
		}{w, ttl, ms(t.PollInterval)}, Meta: r.Meta}
	}
	raw, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return append(b, raw...), nil
}
