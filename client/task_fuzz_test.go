package client

import (
	"errors"
	"testing"
)

// FuzzDecodeTask feeds arbitrary bytes to the client's task decoders.
// Invariants: no panic; a failure is a *ProtocolError; a task read has an
// id, a known status and no negative duration.
func FuzzDecodeTask(f *testing.F) {
	const times = `"createdAt":"2026-07-28T12:00:00Z","lastUpdatedAt":"2026-07-28T12:00:00Z"`
	for _, s := range []string{
		`{"taskId":"a","status":"working",` + times + `,"ttl":60000,"pollInterval":5}`,
		`{"taskId":"a","status":"completed",` + times + `,"ttlMs":null,"result":{"content":[]}}`,
		`{"taskId":"a","status":"failed",` + times + `,"error":{"code":-32000,"message":"x","data":{}}}`,
		`{"taskId":"a","status":"input_required",` + times + `,"inputRequests":{"k":{"method":"roots/list"}}}`,
		`{"task":{"taskId":"a","status":"working",` + times + `,"ttl":null}}`,
		`{"resultType":"task","taskId":"a","status":"working",` + times + `,"ttlMs":1,"pollIntervalMs":2}`,
		`{"taskId":"a","TaskId":"b"}`, `{"task":[]}`, `[]`, `null`, `{"ttl":-1}`, `{"result":7}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		check := func(what string, err error) {
			var pe *ProtocolError
			if err != nil && !errors.As(err, &pe) {
				t.Fatalf("%s: %T %v, want a *ProtocolError", what, err, err)
			}
		}
		d, err := decodeDetailedTask("tasks/get", b)
		check("detailed task", err)
		if err == nil {
			if d.TaskID == "" || !d.Status.Valid() || d.TTL != nil && *d.TTL < 0 || d.PollInterval != nil && *d.PollInterval < 0 {
				t.Fatalf("accepted a bad task: %+v", d)
			}
			if d.Result != nil && d.Result[0] != '{' {
				t.Fatalf("accepted a result that is not an object: %s", d.Result)
			}
		}
		task, isTask, err := decodeTaskAnswer("tools/call x", b)
		check("task answer", err)
		if err == nil && isTask && (task == nil || task.TaskID == "" || !task.Status.Valid()) {
			t.Fatalf("accepted a bad created task: %+v", task)
		}
		decodeTasksPage(b) // must not panic
	})
}
