package reference

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/toolwire/toolwire/client"
	"github.com/toolwire/toolwire/internal/testwait"
	"github.com/toolwire/toolwire/mcp"
)

// eachEra runs f as a subtest per era, with a client connected to url in
// that era.
func eachEra(t *testing.T, url string, f func(t *testing.T, c *client.Client)) {
	for _, era := range []mcp.Era{mcp.EraLegacy, mcp.EraModern} {
		t.Run(era.String(), func(t *testing.T) { f(t, connect(t, url, era)) })
	}
}

// startTask calls a tool as a task and returns the created task.
func startTask(t *testing.T, c *client.Client, name string, args any) *mcp.Task {
	t.Helper()
	st, err := c.CallToolTask(t.Context(), name, args)
	if err != nil {
		t.Fatalf("%s as a task: %v", name, err)
	}
	if st.Task == nil {
		t.Fatalf("%s: the server answered at once instead of creating a task", name)
	}
	if st.Task.TaskID == "" || st.Task.Status != mcp.TaskWorking {
		t.Fatalf("%s: created task %+v, want a working task with an id", name, st.Task)
	}
	return st.Task
}

// pollTask polls tasks/get until done says the task is where the test
// wants it, and returns that state.
func pollTask(t *testing.T, c *client.Client, id, what string, done func(*mcp.DetailedTask) bool) *mcp.DetailedTask {
	t.Helper()
	var d *mcp.DetailedTask
	testwait.WaitForNil(t, what, func() error {
		var err error
		if d, err = c.GetTask(t.Context(), id); err != nil {
			t.Fatalf("tasks/get %s: %v", id, err)
		}
		if done(d) {
			return nil
		}
		if d.Status.Terminal() {
			t.Fatalf("task ended %s (%q, error %+v) while waiting for %s", d.Status, d.StatusMessage, d.Error, what)
		}
		return fmt.Errorf("the task is %s (%q)", d.Status, d.StatusMessage)
	})
	return d
}

// inlinedResult decodes the result a 2026-07-28 tasks/get carries for a
// completed task.
func inlinedResult(t *testing.T, d *mcp.DetailedTask) *mcp.CallToolResult {
	t.Helper()
	if len(d.Result) == 0 {
		t.Fatalf("completed task %s carries no result", d.TaskID)
	}
	var res mcp.CallToolResult
	if err := json.Unmarshal(d.Result, &res); err != nil {
		t.Fatalf("result of task %s: %v\n%s", d.TaskID, err, d.Result)
	}
	return &res
}

// taskOutcome waits for a task's result: tasks/result in a 2025-era
// session, tasks/get with the inlined result in 2026-07-28; it returns the
// result and the task's last state.
func taskOutcome(t *testing.T, c *client.Client, id string) (*mcp.CallToolResult, *mcp.DetailedTask) {
	t.Helper()
	if c.Era() == mcp.EraLegacy {
		res, err := c.WaitTask(testwait.Context(t), id)
		if err != nil {
			t.Fatalf("tasks/result %s: %v", id, err)
		}
		d, err := c.GetTask(t.Context(), id)
		if err != nil {
			t.Fatalf("tasks/get %s: %v", id, err)
		}
		return res, d
	}
	d := pollTask(t, c, id, "the task to complete", func(d *mcp.DetailedTask) bool { return d.Status == mcp.TaskCompleted })
	return inlinedResult(t, d), d
}

// Both task tools declare execution.taskSupport optional.
func TestTaskToolsAdvertised(t *testing.T) {
	_, _, url := testServer(t)
	c := connect(t, url, mcp.EraLegacy)
	tools, err := c.ListTools(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]bool{"trigger-long-running-operation": true, "simulate-research-query": true}
	for _, tool := range tools {
		support := mcp.TaskForbidden
		if tool.Execution != nil && tool.Execution.TaskSupport != "" {
			support = tool.Execution.TaskSupport
		}
		if want[tool.Name] {
			delete(want, tool.Name)
			if support != mcp.TaskOptional {
				t.Errorf("%s: taskSupport %q, want optional", tool.Name, support)
			}
		} else if support != mcp.TaskForbidden {
			t.Errorf("%s: taskSupport %q, want forbidden", tool.Name, support)
		}
	}
	if len(want) > 0 {
		t.Errorf("tools missing from tools/list: %v", want)
	}
}

// trigger-long-running-operation runs as a task in both eras: the result is
// the plain call's, and the task's last status message is its last
// progress report.
func TestLongRunningAsTask(t *testing.T) {
	_, _, url := testServer(t)
	eachEra(t, url, func(t *testing.T, c *client.Client) {
		task := startTask(t, c, "trigger-long-running-operation", map[string]any{"duration": 0.2, "steps": 4})
		res, d := taskOutcome(t, c, task.TaskID)
		if res.IsError || !strings.Contains(text(t, res), "Long running operation completed. Duration: 0.2 seconds, Steps: 4.") {
			t.Errorf("result %s", text(t, res))
		}
		if d.Status != mcp.TaskCompleted || d.StatusMessage != "4/4: step 4 of 4" {
			t.Errorf("task ended %s with status message %q, want completed with %q", d.Status, d.StatusMessage, "4/4: step 4 of 4")
		}
		// A plain call is still a plain call.
		if res := call(t, c, "trigger-long-running-operation", map[string]any{"duration": 0, "steps": 1}); res.IsError ||
			!strings.Contains(text(t, res), "Steps: 1.") {
			t.Errorf("plain call: %s", text(t, res))
		}
	})
}

// A long task shows its progress as its status message while it runs, and
// tasks/cancel stops it.
func TestLongRunningTaskProgressAndCancel(t *testing.T) {
	_, _, url := testServer(t)
	eachEra(t, url, func(t *testing.T, c *client.Client) {
		task := startTask(t, c, "trigger-long-running-operation", map[string]any{"duration": 600, "steps": 1000})
		d := pollTask(t, c, task.TaskID, "a progress status message", func(d *mcp.DetailedTask) bool {
			return strings.Contains(d.StatusMessage, "/1000: step ")
		})
		if d.Status != mcp.TaskWorking {
			t.Errorf("status %s, want working", d.Status)
		}
		if err := c.CancelTask(t.Context(), task.TaskID); err != nil {
			t.Fatal(err)
		}
		d, err := c.GetTask(t.Context(), task.TaskID)
		if err != nil {
			t.Fatal(err)
		}
		if d.Status != mcp.TaskCancelled {
			t.Errorf("after tasks/cancel: %s, want cancelled", d.Status)
		}
	})
}

// simulate-research-query runs as a task in both eras; without an
// ambiguous topic it asks nothing, and its last status message says it is
// done.
func TestResearchAsTask(t *testing.T) {
	_, _, url := testServer(t)
	eachEra(t, url, func(t *testing.T, c *client.Client) {
		task := startTask(t, c, "simulate-research-query", map[string]any{"topic": "tides"})
		res, d := taskOutcome(t, c, task.TaskID)
		out := text(t, res)
		if res.IsError || !strings.Contains(out, "# Research report: tides") || !strings.Contains(out, "Stage 4: Generating report: done") ||
			strings.Contains(out, "Interpretation") {
			t.Errorf("result %s", out)
		}
		if d.Status != mcp.TaskCompleted || d.StatusMessage != "Research complete" {
			t.Errorf("task ended %s with %q, want completed with %q", d.Status, d.StatusMessage, "Research complete")
		}
	})
}

// In a 2025-era session the elicitation round of an ambiguous research
// task is an elicitation/create request to the client, tied to the task by
// the related-task _meta; the task completes with the chosen reading.
func TestResearchTaskElicitationLegacy(t *testing.T) {
	_, _, url := testServer(t)
	var mu sync.Mutex
	var asked []*mcp.ElicitParams
	c := connect(t, url, mcp.EraLegacy, client.WithElicitationHandler(func(_ context.Context, p *mcp.ElicitParams) (*mcp.ElicitResult, error) {
		mu.Lock()
		asked = append(asked, p)
		mu.Unlock()
		return &mcp.ElicitResult{Action: mcp.ActionAccept, Content: map[string]any{"interpretation": "historical"}}, nil
	}))
	task := startTask(t, c, "simulate-research-query", map[string]any{"topic": "quantum", "ambiguous": true})
	res, d := taskOutcome(t, c, task.TaskID)
	if out := text(t, res); res.IsError || !strings.Contains(out, "Interpretation: historical") || !strings.Contains(out, "Stage 4: Generating report: done") {
		t.Errorf("result %s", out)
	}
	if d.Status != mcp.TaskCompleted {
		t.Errorf("task %s, want completed", d.Status)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(asked) != 1 || !strings.Contains(asked[0].Message, "quantum") {
		t.Fatalf("elicitations %+v, want one about the topic", asked)
	}
	var related mcp.RelatedTask
	raw, _ := json.Marshal(asked[0].Meta[mcp.MetaRelatedTask])
	if err := json.Unmarshal(raw, &related); err != nil || related.TaskID != task.TaskID {
		t.Errorf("elicitation _meta %s, want the related task %s", raw, task.TaskID)
	}
}

// In 2026-07-28 the elicitation round of an ambiguous research task shows
// on tasks/get: input_required with the elicitation/create request under
// inputRequests; tasks/update answers it and the task completes with the
// chosen reading. The client's own handler is never called: the test
// answers the round itself.
func TestResearchTaskElicitationModern(t *testing.T) {
	_, _, url := testServer(t)
	var mu sync.Mutex
	handled := 0
	c := connect(t, url, mcp.EraModern, client.WithElicitationHandler(func(_ context.Context, p *mcp.ElicitParams) (*mcp.ElicitResult, error) {
		mu.Lock()
		handled++
		mu.Unlock()
		return &mcp.ElicitResult{Action: mcp.ActionDecline}, nil
	}))
	task := startTask(t, c, "simulate-research-query", map[string]any{"topic": "quantum", "ambiguous": true})
	d := pollTask(t, c, task.TaskID, "input_required", func(d *mcp.DetailedTask) bool { return d.Status == mcp.TaskInputRequired })
	if len(d.InputRequests) != 1 {
		t.Fatalf("inputRequests %+v, want one", d.InputRequests)
	}
	var key string
	var req mcp.InputRequest
	for key, req = range d.InputRequests {
	}
	if req.Method != mcp.MethodElicitationCreate {
		t.Fatalf("input request %q is %s, want %s", key, req.Method, mcp.MethodElicitationCreate)
	}
	var p mcp.ElicitParams
	if err := json.Unmarshal(req.Params, &p); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(p.Message, "quantum") || !strings.Contains(string(p.RequestedSchema), "interpretation") {
		t.Errorf("elicitation %+v", p)
	}
	answer, _ := json.Marshal(mcp.ElicitResult{Action: mcp.ActionAccept, Content: map[string]any{"interpretation": "practical"}})
	if err := c.UpdateTask(t.Context(), task.TaskID, mcp.InputResponses{key: answer}); err != nil {
		t.Fatal(err)
	}
	res, d := taskOutcome(t, c, task.TaskID)
	if out := text(t, res); res.IsError || !strings.Contains(out, "Interpretation: practical") || !strings.Contains(out, "Stage 4: Generating report: done") {
		t.Errorf("result %s", out)
	}
	if len(d.InputRequests) != 0 {
		t.Errorf("a completed task still lists input requests %+v", d.InputRequests)
	}
	mu.Lock()
	defer mu.Unlock()
	if handled != 0 {
		t.Errorf("the client's elicitation handler ran %d times; the test answered through tasks/update", handled)
	}
}
