package mcp_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/toolwire/toolwire/mcp"
)

func TestTaskWireBothEras(t *testing.T) {
	ttl, poll := time.Minute, 500*time.Millisecond
	at := time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC)
	ct := &mcp.CreateTaskResult{Task: mcp.Task{TaskID: "t1", Status: mcp.TaskWorking, CreatedAt: at, LastUpdatedAt: at, TTL: &ttl, PollInterval: &poll}}
	legacy, err := ct.AppendEra(nil, mcp.EraLegacy)
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"task":{"taskId":"t1","status":"working","createdAt":"2026-11-23T10:00:00Z","lastUpdatedAt":"2026-11-23T10:00:00Z","ttl":60000,"pollInterval":500}}`; string(legacy) != want {
		t.Errorf("legacy\n got %s\nwant %s", legacy, want)
	}
	modern, _ := ct.AppendEra(nil, mcp.EraModern)
	if want := `{"resultType":"task","taskId":"t1","status":"working","createdAt":"2026-11-23T10:00:00Z","lastUpdatedAt":"2026-11-23T10:00:00Z","ttlMs":60000,"pollIntervalMs":500}`; string(modern) != want {
		t.Errorf("modern\n got %s\nwant %s", modern, want)
	}
	for _, raw := range [][]byte{legacy, modern} {
		var back mcp.CreateTaskResult
		if err := json.Unmarshal(raw, &back); err != nil || back.Task.TaskID != "t1" || *back.Task.TTL != ttl || *back.Task.PollInterval != poll {
			t.Errorf("%s decodes as %+v, %v", raw, back.Task, err)
		}
	}
	// No TTL is null, always present.
	ct.Task.TTL = nil
	modern, _ = ct.AppendEra(nil, mcp.EraModern)
	if !strings.Contains(string(modern), `"ttlMs":null`) {
		t.Errorf("no TTL: %s", modern)
	}
	d := &mcp.DetailedTask{Task: ct.Task, Result: json.RawMessage(`{"content":[]}`), Error: &mcp.TaskError{Code: -32603, Message: "x"}}
	legacy, _ = d.AppendEra(nil, mcp.EraLegacy)
	if strings.Contains(string(legacy), "result") || strings.Contains(string(legacy), "error") {
		t.Errorf("2025 tasks/get carries 2026 members: %s", legacy)
	}
}

func TestTaskDecodeRefuses(t *testing.T) {
	for _, raw := range []string{
		`{"taskId":"","status":"working","createdAt":"2026-01-01T00:00:00Z","lastUpdatedAt":"2026-01-01T00:00:00Z"}`,
		`{"taskId":"a","status":"sleeping","createdAt":"2026-01-01T00:00:00Z","lastUpdatedAt":"2026-01-01T00:00:00Z"}`,
		`{"taskId":"a","status":"working","createdAt":"yesterday","lastUpdatedAt":"2026-01-01T00:00:00Z"}`,
		`{"taskId":"a","status":"working","createdAt":"2026-01-01T00:00:00Z","lastUpdatedAt":"2026-01-01T00:00:00Z","ttl":-1}`,
		`{"taskId":"a","status":"working","createdAt":"2026-01-01T00:00:00Z","lastUpdatedAt":"2026-01-01T00:00:00Z","ttlMs":1.5}`,
		`{"taskId":"a","status":"working","createdAt":"2026-01-01T00:00:00Z","lastUpdatedAt":"2026-01-01T00:00:00Z","ttlMs":9223372036854775807}`,
		`{"taskId":"a","status":"working","createdAt":"2026-01-01T00:00:00Z","lastUpdatedAt":"2026-01-01T00:00:00Z","pollIntervalMs":-5}`,
		`{"taskId":"a","taskId":"b","status":"working","createdAt":"2026-01-01T00:00:00Z","lastUpdatedAt":"2026-01-01T00:00:00Z"}`,
		`{"taskId":"a","status":"completed","createdAt":"2026-01-01T00:00:00Z","lastUpdatedAt":"2026-01-01T00:00:00Z","result":[1]}`,
	} {
		var d mcp.DetailedTask
		if err := json.Unmarshal([]byte(raw), &d); err == nil {
			t.Errorf("accepted %s", raw)
		}
	}
	var ct mcp.CreateTaskResult
	if err := json.Unmarshal([]byte(`{"resultType":"complete","content":[]}`), &ct); err == nil {
		t.Error("a complete result decoded as a CreateTaskResult")
	}
}

// FuzzDecodeTasks runs the task decoders (both eras' spellings) and checks
// that what they accept re-encodes to what they accept again, unchanged.
func FuzzDecodeTasks(f *testing.F) {
	for _, s := range []string{
		`{"task":{"taskId":"t","status":"working","createdAt":"2026-11-23T10:00:00Z","lastUpdatedAt":"2026-11-23T10:00:00Z","ttl":60000,"pollInterval":500}}`,
		`{"resultType":"task","taskId":"t","status":"working","createdAt":"2026-11-23T10:00:00.5+02:00","lastUpdatedAt":"2026-11-23T10:00:00Z","ttlMs":null}`,
		`{"taskId":"t","status":"completed","createdAt":"2026-11-23T10:00:00Z","lastUpdatedAt":"2026-11-23T10:00:00Z","ttlMs":1,"result":{"content":[]}}`,
		`{"taskId":"t","status":"failed","createdAt":"2026-11-23T10:00:00Z","lastUpdatedAt":"2026-11-23T10:00:00Z","ttlMs":1,"error":{"code":-32603,"message":"m"}}`,
		`{"taskId":"t","status":"input_required","createdAt":"2026-11-23T10:00:00Z","lastUpdatedAt":"2026-11-23T10:00:00Z","ttlMs":1,"inputRequests":{"k":{"method":"elicitation/create","params":{}}}}`,
		`{"taskId":"t","status":"working","createdAt":"2026-11-23T10:00:00Z","lastUpdatedAt":"2026-11-23T10:00:00Z","ttl":5,"ttlMs":7}`,
		`{"tasks":[{"taskId":"t","status":"cancelled","createdAt":"2026-11-23T10:00:00Z","lastUpdatedAt":"2026-11-23T10:00:00Z","ttl":null}],"nextCursor":"c"}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, era := range []mcp.Era{mcp.EraLegacy, mcp.EraModern} {
			wireRoundTrip(t, data, jsonInto[mcp.CreateTaskResult], func(v *mcp.CreateTaskResult) ([]byte, error) { return v.AppendEra(nil, era) })
			wireRoundTrip(t, data, jsonInto[mcp.DetailedTask], func(v *mcp.DetailedTask) ([]byte, error) {
				if era == mcp.EraLegacy {
					// 2025 tasks/get drops result, error and inputRequests.
					c := *v
					c.Result, c.Error, c.InputRequests = nil, nil, nil
					return c.AppendEra(nil, era)
				}
				return v.AppendEra(nil, era)
			})
		}
		wireRoundTrip(t, data, jsonInto[mcp.ListTasksResult], jsonOf)
	})
}
