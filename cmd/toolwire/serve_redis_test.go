package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/toolwire/toolwire/internal/testenv"
	"github.com/toolwire/toolwire/internal/testhttp"
	"github.com/toolwire/toolwire/internal/testwait"
)

// rawPost sends one 2025-11-25 message on session sid ("" for none) and
// returns the status, the body and the session id answered (scalePost's
// request, read whole).
func rawPost(t *testing.T, url, sid, body string) (int, string, string) {
	t.Helper()
	resp := scalePost(t, url, "", sid, body, nil)
	return resp.StatusCode, testhttp.ReadBody(t, resp), resp.Header.Get("Mcp-Session-Id")
}

// TestServeReplicasShareSessions: two `toolwire serve --redis` processes on
// one Redis serve one endpoint: a session opened on A is used on B without
// a second initialize, and a task created on A is read on B.
func TestServeReplicasShareSessions(t *testing.T) {
	redis := testenv.Redis(t)
	args := []string{"--redis", redis.URL(), "--redis-prefix", "serve-test:"}
	a := startServe(t, nil, append(args, "--data-dir", t.TempDir())...)
	b := startServe(t, nil, append(args, "--data-dir", t.TempDir())...)
	if !strings.Contains(a.log.String(), "state shared with the other replicas through Redis") {
		t.Errorf("A does not say it shares its state:\n%s", a.log.String())
	}
	if strings.Contains(a.log.String(), "redis://127.0.0.1") {
		t.Errorf("A logged the Redis URL (it may hold a password):\n%s", a.log.String())
	}
	status, _, sid := rawPost(t, a.url, "", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	if status != http.StatusOK || sid == "" {
		t.Fatalf("initialize on A: %d", status)
	}
	rawPost(t, a.url, sid, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	status, body, _ := rawPost(t, b.url, sid, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"get-sum","arguments":{"a":7,"b":5}}}`)
	if status != http.StatusOK || !strings.Contains(body, "The sum of 7 and 5 is 12.") {
		t.Fatalf("a call on B in A's session: %d %s", status, body)
	}

	status, body, _ = rawPost(t, a.url, sid, `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"simulate-research-query","arguments":{"topic":"replicas"},"task":{"ttl":60000}}}`)
	if status != http.StatusOK {
		t.Fatalf("a task call on A: %d %s", status, body)
	}
	var created struct {
		Result struct {
			Task struct {
				TaskID string `json:"taskId"`
			} `json:"task"`
		} `json:"result"`
	}
	if err := json.Unmarshal([]byte(sseData(body)), &created); err != nil || created.Result.Task.TaskID == "" {
		t.Fatalf("no task created on A: %v %s", err, body)
	}
	id := created.Result.Task.TaskID
	testwait.WaitForNil(t, "the task to complete", func() error {
		status, body, _ = rawPost(t, b.url, sid, `{"jsonrpc":"2.0","id":4,"method":"tasks/get","params":{"taskId":"`+id+`"}}`)
		if status != http.StatusOK || !strings.Contains(body, id) {
			t.Fatalf("tasks/get on B of A's task: %d %s", status, body)
		}
		if !strings.Contains(body, `"completed"`) {
			return fmt.Errorf("tasks/get says %s", body)
		}
		return nil
	})
	status, body, _ = rawPost(t, b.url, sid, `{"jsonrpc":"2.0","id":5,"method":"tasks/result","params":{"taskId":"`+id+`"}}`)
	if status != http.StatusOK || !strings.Contains(body, "replicas") {
		t.Fatalf("tasks/result on B: %d %s", status, body)
	}
}

// sseData is the data of the last event of an SSE body, or the body itself
// when it is plain JSON.
func sseData(body string) string {
	last := body
	for _, line := range strings.Split(body, "\n") {
		if d, ok := strings.CutPrefix(line, "data: "); ok {
			last = d
		}
	}
	return last
}
