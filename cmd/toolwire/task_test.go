package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/toolwire/toolwire/internal/testmcp"
	"github.com/toolwire/toolwire/internal/testtools"
	"github.com/toolwire/toolwire/mcp"
	"github.com/toolwire/toolwire/server"
)

// taskCLIURL serves task tools over Streamable HTTP in-process: "slow"
// (optional) reports "halfway" and returns once release is closed, "ask"
// (optional) elicits a name, "must" (required) says whether it ran as a
// task, "oops" (optional) reports a tool error.
func taskCLIURL(t *testing.T, release <-chan struct{}) string {
	t.Helper()
	s := server.New(mcp.Implementation{Name: "cli-tasks", Version: "1"}, server.WithLimits(server.Limits{TaskPollInterval: 5e6}))
	testtools.AddTaskTools(t, s, release)
	if err := server.AddTool(s, &mcp.Tool{Name: "oops"}, func(ctx context.Context, req *server.CallRequest, _ struct{}) (*mcp.CallToolResult, error) {
		return mcp.ErrorResult("it went wrong"), nil
	}, server.WithTaskSupport(mcp.TaskOptional)); err != nil {
		t.Fatal(err)
	}
	return testmcp.ServeHTTP(t, s)
}

var taskIDPattern = regexp.MustCompile(`task ([0-9a-zA-Z_-]+): `)

// taskIDIn finds the task id in the CLI's status lines.
func taskIDIn(t *testing.T, stderr string) string {
	t.Helper()
	m := taskIDPattern.FindStringSubmatch(stderr)
	if m == nil {
		t.Fatalf("no task id in stderr:\n%s", stderr)
	}
	return m[1]
}

func TestCallTask(t *testing.T) {
	release := make(chan struct{})
	close(release)
	url := taskCLIURL(t, release)
	for _, era := range []string{"legacy", "modern"} {
		t.Run(era, func(t *testing.T) {
			stdout, stderr, err := runInProcess(t, strings.NewReader(""), "call", "--task", "--era", era, url, "slow")
			if err != nil || stdout != "slept\n" {
				t.Fatalf("%v: stdout %q\nstderr:\n%s", err, stdout, stderr)
			}
			id := taskIDIn(t, stderr)
			if !strings.Contains(stderr, "task "+id+": working") {
				t.Errorf("stderr lacks the status:\n%s", stderr)
			}
			// The task is there afterwards, completed.
			stdout, stderr, err = runInProcess(t, strings.NewReader(""), "task", "--era", era, url, id)
			if err != nil || !regexp.MustCompile(`(?m)^status: +completed$`).MatchString(stdout) || !strings.Contains(stdout, "id:") {
				t.Errorf("task %s: %v\nstdout:\n%s\nstderr:\n%s", id, err, stdout, stderr)
			}
			stdout, stderr, err = runInProcess(t, strings.NewReader(""), "task", "--era", era, "--wait", url, id)
			if err != nil || stdout != "slept\n" {
				t.Errorf("task --wait: %v: stdout %q\nstderr:\n%s", err, stdout, stderr)
			}
			stdout, _, err = runInProcess(t, strings.NewReader(""), "task", "--era", era, "--json", url, id)
			var d struct {
				TaskID string `json:"taskId"`
				Status string `json:"status"`
			}
			if err != nil || json.Unmarshal([]byte(stdout), &d) != nil || d.TaskID != id || d.Status != "completed" {
				t.Errorf("task --json: %v: %s", err, stdout)
			}
		})
	}
}

// TestCallRequiredToolRunsAsTask: a tool whose taskSupport is required runs
// as a task without --task, and the CLI says so.
func TestCallRequiredToolRunsAsTask(t *testing.T) {
	url := taskCLIURL(t, nil)
	for _, era := range []string{"legacy", "modern"} {
		stdout, stderr, err := runInProcess(t, strings.NewReader(""), "call", "--era", era, url, "must")
		if err != nil || stdout != "as a task: true\n" || !strings.Contains(stderr, "as a task") || !strings.Contains(stderr, "running it as one") {
			t.Errorf("--era %s: %v: stdout %q\nstderr:\n%s", era, err, stdout, stderr)
		}
	}
}

// TestCallTaskElicits: a task's elicitation is answered on the terminal.
func TestCallTaskElicits(t *testing.T) {
	url := taskCLIURL(t, nil)
	for _, era := range []string{"legacy", "modern"} {
		stdout, stderr, err := runInProcess(t, ttyInput{strings.NewReader("Ada\n")}, "call", "--task", "--era", era, url, "ask")
		if err != nil || stdout != "hello Ada\n" || !strings.Contains(stderr, "Who are you?") {
			t.Errorf("--era %s: %v: stdout %q\nstderr:\n%s", era, err, stdout, stderr)
		}
	}
}

// TestCallTaskToolErrorExitStatus: an isError result of a task exits 6 as
// a plain call does; the content goes to stderr.
func TestCallTaskToolErrorExitStatus(t *testing.T) {
	url := taskCLIURL(t, nil)
	for _, era := range []string{"legacy", "modern"} {
		r := runCLIWith(t, "", nil, "call", "--task", "--era", era, url, "oops")
		if r.code != 6 || !strings.Contains(r.stderr, "it went wrong") || !strings.Contains(r.stderr, "ERR_MCP_TOOL_ERROR") {
			t.Errorf("--era %s: exit %d, stdout %q, stderr:\n%s", era, r.code, r.stdout, r.stderr)
		}
		id := taskIDIn(t, r.stderr)
		r = runCLIWith(t, "", nil, "task", "--wait", "--era", era, url, id)
		if r.code != 6 || !strings.Contains(r.stderr, "it went wrong") {
			t.Errorf("--era %s: task --wait: exit %d, stdout %q, stderr:\n%s", era, r.code, r.stdout, r.stderr)
		}
		r = runCLIWith(t, "", nil, "task", "--era", era, url, "no-such-task")
		if r.code != 5 {
			t.Errorf("--era %s: unknown task: exit %d, stderr:\n%s", era, r.code, r.stderr)
		}
	}
}

// watchedBuffer is a stderr that calls on once it holds want.
type watchedBuffer struct {
	mu   sync.Mutex
	buf  bytes.Buffer
	want string
	on   func()
	once sync.Once
}

func (w *watchedBuffer) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	n, err := w.buf.Write(p)
	if strings.Contains(w.buf.String(), w.want) {
		w.once.Do(w.on)
	}
	return n, err
}

func (w *watchedBuffer) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.String()
}

// interruptedCall runs `call --task ... slow` in-process and cancels its
// context (as Ctrl-C does) once the task reports "halfway".
func interruptedCall(t *testing.T, stdin io.Reader, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	root := newRootCmd()
	var out bytes.Buffer
	errb := &watchedBuffer{want: "halfway", on: cancel}
	root.SetArgs(args)
	root.SetIn(stdin)
	root.SetOut(&out)
	root.SetErr(errb)
	err = root.ExecuteContext(ctx)
	return out.String(), errb.String(), err
}

// TestCallTaskInterrupted: Ctrl-C while waiting asks on a terminal whether
// to cancel; without a terminal the task is left running. Either way the
// task id and how to pick it up again are printed.
func TestCallTaskInterrupted(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	url := taskCLIURL(t, release)
	for _, era := range []string{"legacy", "modern"} {
		t.Run(era, func(t *testing.T) {
			_, stderr, err := interruptedCall(t, strings.NewReader(""), "call", "--task", "--era", era, url, "slow")
			if err != errInterrupted {
				t.Fatalf("err %v, stderr:\n%s", err, stderr)
			}
			id := taskIDIn(t, stderr)
			if want := "left running; wait for its result with: toolwire task " + url + " " + id + " --wait"; !strings.Contains(stderr, want) || strings.Contains(stderr, "Cancel task") {
				t.Errorf("stderr lacks %q:\n%s", want, stderr)
			}
			stdout, _, err := runInProcess(t, strings.NewReader(""), "task", "--era", era, url, id)
			if err != nil || !strings.Contains(stdout, "working") {
				t.Errorf("left running: %v\n%s", err, stdout)
			}

			_, stderr, err = interruptedCall(t, ttyInput{strings.NewReader("c\n")}, "call", "--task", "--era", era, url, "slow")
			if err != errInterrupted {
				t.Fatalf("err %v, stderr:\n%s", err, stderr)
			}
			id = taskIDIn(t, stderr)
			if !strings.Contains(stderr, "Cancel task "+id+", or leave it running?") || !strings.Contains(stderr, "task "+id+" cancelled") ||
				!strings.Contains(stderr, "toolwire task "+url+" "+id) {
				t.Errorf("stderr:\n%s", stderr)
			}
			stdout, _, err = runInProcess(t, strings.NewReader(""), "task", "--era", era, url, id)
			if err != nil || !strings.Contains(stdout, "cancelled") {
				t.Errorf("cancelled: %v\n%s", err, stdout)
			}
		})
	}
}

func TestTaskCancelFlag(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	url := taskCLIURL(t, release)
	for _, era := range []string{"legacy", "modern"} {
		_, stderr, err := interruptedCall(t, strings.NewReader(""), "call", "--task", "--era", era, url, "slow")
		if err != errInterrupted {
			t.Fatalf("--era %s: %v\n%s", era, err, stderr)
		}
		id := taskIDIn(t, stderr)
		stdout, stderr, err := runInProcess(t, strings.NewReader(""), "task", "--cancel", "--era", era, url, id)
		if err != nil || stdout != "task "+id+" cancelled\n" {
			t.Errorf("--era %s: %v: stdout %q\nstderr:\n%s", era, err, stdout, stderr)
		}
		r := runCLIWith(t, "", nil, "task", "--wait", "--era", era, url, id)
		if r.code != 5 || !strings.Contains(r.stderr, "was cancelled") {
			t.Errorf("--era %s: wait for a cancelled task: exit %d, stderr:\n%s", era, r.code, r.stderr)
		}
	}
	if _, _, err := runInProcess(t, strings.NewReader(""), "task", "--cancel", "--wait", url, "x"); err == nil || !strings.Contains(err.Error(), "exclude") {
		t.Errorf("--cancel --wait: %v", err)
	}
}

func TestTasksList(t *testing.T) {
	release := make(chan struct{})
	close(release)
	url := taskCLIURL(t, release)
	_, stderr, err := runInProcess(t, strings.NewReader(""), "call", "--task", "--era", "legacy", url, "slow")
	if err != nil {
		t.Fatal(err, stderr)
	}
	id := taskIDIn(t, stderr)
	stdout, stderr, err := runInProcess(t, strings.NewReader(""), "tasks", "--era", "legacy", url)
	if err != nil || !strings.HasPrefix(stdout, "ID") || !strings.Contains(stdout, "STATUS") || !regexp.MustCompile(id+` +completed +\d{4}-`).MatchString(stdout) {
		t.Errorf("%v\nstdout:\n%s\nstderr:\n%s", err, stdout, stderr)
	}
	stdout, _, err = runInProcess(t, strings.NewReader(""), "tasks", "--json", "--era", "legacy", url)
	var tasks []struct {
		TaskID string `json:"taskId"`
	}
	if err != nil || json.Unmarshal([]byte(stdout), &tasks) != nil || len(tasks) == 0 {
		t.Errorf("--json: %v\n%s", err, stdout)
	}
	_, _, err = runInProcess(t, strings.NewReader(""), "tasks", "--era", "modern", url)
	if err == nil || !strings.Contains(err.Error(), "has no task listing") {
		t.Errorf("modern: %v", err)
	}
}

func TestTaskCommand(t *testing.T) {
	for _, tc := range []struct {
		t    target
		flag string
		want string
	}{
		{target{url: "http://h/mcp"}, "--wait", "toolwire task http://h/mcp t1 --wait"},
		{target{command: []string{"node", "s.js"}}, "", "toolwire task t1 -- node s.js"},
	} {
		if got := taskCommand(tc.t, "t1", tc.flag); got != tc.want {
			t.Errorf("%q, want %q", got, tc.want)
		}
	}
}
