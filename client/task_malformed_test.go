package client_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/toolwire/toolwire/client"
	"github.com/toolwire/toolwire/mcp"
	"github.com/toolwire/toolwire/server"
)

// TestTaskMalformedAnswers: a malformed task is a *ProtocolError, never a
// panic, in both eras and from every method reading one.
func TestTaskMalformedAnswers(t *testing.T) {
	const ok = `"createdAt":"2026-07-28T12:00:00Z","lastUpdatedAt":"2026-07-28T12:00:00Z"`
	bad := map[string]string{
		"bad status":         `{"taskId":"m","status":"sleeping",` + ok + `}`,
		"negative ttl":       `{"taskId":"m","status":"working","ttl":-5,` + ok + `}`,
		"negative ttlMs":     `{"taskId":"m","status":"working","ttlMs":-5,` + ok + `}`,
		"fractional ttl":     `{"taskId":"m","status":"working","ttl":1.5,` + ok + `}`,
		"negative poll":      `{"taskId":"m","status":"working","pollIntervalMs":-1,` + ok + `}`,
		"missing taskId":     `{"status":"working",` + ok + `}`,
		"taskId not string":  `{"taskId":7,"status":"working",` + ok + `}`,
		"bad createdAt":      `{"taskId":"m","status":"working","createdAt":"yesterday","lastUpdatedAt":"2026-07-28T12:00:00Z"}`,
		"result not object":  `{"taskId":"m","status":"completed","result":[1],` + ok + `}`,
		"result bad content": `{"taskId":"m","status":"completed","result":{"content":[{"type":"nope"}]},` + ok + `}`,
		"result no content":  `{"taskId":"m","status":"completed","result":{},` + ok + `}`,
		"duplicate member":   `{"taskId":"m","taskId":"n","status":"working",` + ok + `}`,
		"case variant":       `{"taskId":"m","TaskId":"n","status":"working",` + ok + `}`,
		"error without code": `{"taskId":"m","status":"failed","error":{"message":"x"},` + ok + `}`,
		"error not object":   `{"taskId":"m","status":"failed","error":"x",` + ok + `}`,
		"input not object":   `{"taskId":"m","status":"input_required","inputRequests":{"k":5},` + ok + `}`,
		"input no method":    `{"taskId":"m","status":"input_required","inputRequests":{"k":{"params":{}}},` + ok + `}`,
		"not an object":      `[]`,
		"other task":         `{"taskId":"zz","status":"working",` + ok + `}`,
	}
	// What reading the task alone cannot see: the result's own shape (the
	// wait checks it), an input request's (the wait answers it), the id
	// (tasks/get checks it against the one asked for).
	waitOnly := map[string]bool{"result bad content": true, "result no content": true, "input no method": true}
	notInCreate := func(what string) bool {
		return what == "other task" || strings.HasPrefix(what, "result") || strings.HasPrefix(what, "input") || strings.HasPrefix(what, "error")
	}
	var current, created atomic.Value
	answer := func(v *atomic.Value) standIn {
		return func(context.Context, *server.Request, json.RawMessage) (any, error) {
			return json.RawMessage(v.Load().(string)), nil
		}
	}
	s := taskStandIn(t, map[string]standIn{
		mcp.MethodGetTask:  answer(&current),
		mcp.MethodCallTool: answer(&created),
		mcp.MethodListTasks: func(context.Context, *server.Request, json.RawMessage) (any, error) {
			return json.RawMessage(`{"tasks":[` + current.Load().(string) + `]}`), nil
		},
		mcp.MethodCancelTask: answer(&current),
	}, legacyTasksCapability)
	for name, c := range promptTransports(t, s, client.WithOutputValidation(false), client.WithLimits(client.Limits{MinTaskPoll: time.Millisecond, MaxTaskPoll: time.Millisecond})) {
		for what, raw := range bad {
			if (what == "not an object" || what == "duplicate member") && isModern(name) {
				// A 2026-07-28 server cannot stamp it: toolwire's refuses
				// to send a result naming a member twice (-32603), so
				// the client's refusal of one is tested on its own
				// (strictread_test.go).
				continue
			}
			ctx := context.Background()
			current.Store(raw)
			var pe *client.ProtocolError
			_, err := c.GetTask(ctx, "m")
			if waitOnly[what] != (err == nil) {
				t.Errorf("%s: %s: tasks/get: %v", name, what, err)
			} else if err != nil && !errors.As(err, &pe) {
				t.Errorf("%s: %s: tasks/get: %v, want a *ProtocolError", name, what, err)
			}
			if isModern(name) {
				if _, err := c.WaitTask(ctx, "m"); !errors.As(err, &pe) {
					t.Errorf("%s: %s: wait: %v", name, what, err)
				}
			} else if what != "other task" {
				if _, err := c.ListTasks(ctx); waitOnly[what] != (err == nil) || err != nil && !errors.As(err, &pe) {
					t.Errorf("%s: %s: tasks/list: %v", name, what, err)
				}
				if err := c.CancelTask(ctx, "m"); waitOnly[what] != (err == nil) || err != nil && !errors.As(err, &pe) {
					t.Errorf("%s: %s: tasks/cancel: %v", name, what, err)
				}
			}
			if notInCreate(what) {
				continue
			}
			// A malformed task answering tools/call.
			if isModern(name) {
				created.Store(`{"resultType":"task",` + raw[1:])
			} else {
				created.Store(`{"task":` + raw + `}`)
			}
			if what == "duplicate member" && isModern(name) {
				continue // the server's stamping of a "task" result drops the duplicate
			}
			if _, err := c.CallToolTask(ctx, "x", nil); !errors.As(err, &pe) || !strings.Contains(err.Error(), "malformed") {
				t.Errorf("%s: %s: tools/call: %v", name, what, err)
			}
		}
	}
}
