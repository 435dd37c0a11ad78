package main

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/toolwire/toolwire/client"
	"github.com/toolwire/toolwire/internal/testenv"
	"github.com/toolwire/toolwire/mcp"
	"github.com/toolwire/toolwire/server"
)

// durableDeadline bounds every wait of these tests: a failure bound, never
// a speed check.
const durableDeadline = 60 * time.Second

// servedProc is a `toolwire serve --addr 127.0.0.1:0` process.
type servedProc struct {
	cmd  *exec.Cmd
	url  string
	log  *testenv.SyncBuffer
	done chan struct{} // closed once stderr has been read to its end
}

// startServe runs `toolwire serve` over HTTP on a free loopback port with
// extra args and environment, and waits for its URL. t.Cleanup kills it
// (by its PID) if the test has not stopped it.
func startServe(t *testing.T, env []string, args ...string) *servedProc {
	t.Helper()
	cmd := exec.Command(testenv.Toolwire(t), append([]string{"serve", "--addr", "127.0.0.1:0", "--log-level", "info"}, args...)...)
	if env != nil {
		cmd.Env = append(os.Environ(), env...)
	}
	l := startLogged(t, cmd, regexp.MustCompile(`url=(\S+)`))
	p := &servedProc{cmd: cmd, log: l.log, done: l.done}
	p.url = l.wait(t, "toolwire serve's URL")
	return p
}

// kill ends the server with SIGKILL: no shutdown, nothing recorded.
func (p *servedProc) kill(t *testing.T) {
	t.Helper()
	if err := p.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = p.cmd.Wait()
	<-p.done
}

// interrupt ends the server with SIGINT and returns how it exited.
func (p *servedProc) interrupt(t *testing.T) error {
	t.Helper()
	if err := p.cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	err := p.cmd.Wait()
	<-p.done
	return err
}

func connectServe(t *testing.T, url string, era mcp.Era, opts ...client.Option) *client.Client {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), durableDeadline)
	defer cancel()
	c, err := client.Connect(ctx, &client.HTTP{URL: url}, append([]client.Option{client.WithEra(era)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// createTask calls a tool as a task and returns the task's id.
func createTask(t *testing.T, c *client.Client, name string, args any) string {
	t.Helper()
	st, err := c.CallToolTask(t.Context(), name, args)
	if err != nil {
		t.Fatalf("%s as a task: %v", name, err)
	}
	if st.Task == nil || st.Task.TaskID == "" {
		t.Fatalf("%s: no task created (answered at once: %+v)", name, st.Result)
	}
	return st.Task.TaskID
}

// awaitStatus polls tasks/get until the task has status want.
func awaitStatus(t *testing.T, c *client.Client, id string, want mcp.TaskStatus) *mcp.DetailedTask {
	t.Helper()
	deadline := time.Now().Add(durableDeadline)
	for {
		d, err := c.GetTask(t.Context(), id)
		if err != nil {
			t.Fatalf("tasks/get %s: %v", id, err)
		}
		if d.Status == want {
			return d
		}
		if d.Status.Terminal() || time.Now().After(deadline) {
			t.Fatalf("task %s is %s (%q), want %s", id, d.Status, d.StatusMessage, want)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func resultText(t *testing.T, raw json.RawMessage) string {
	t.Helper()
	var res mcp.CallToolResult
	if err := json.Unmarshal(raw, &res); err != nil {
		t.Fatalf("result %s: %v", raw, err)
	}
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

const quickResult = "Long running operation completed. Duration: 0 seconds, Steps: 1."

// TestServeTasksSurviveKill runs the real binary on a data directory: a
// task completed before the server is killed with SIGKILL keeps its
// result across the restart, and a task that was running is found failed
// with server.RestartMessage (2026-07-28: with an error member), in both
// eras.
func TestServeTasksSurviveKill(t *testing.T) {
	for _, era := range []mcp.Era{mcp.EraLegacy, mcp.EraModern} {
		t.Run(era.String(), func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "data")
			first := startServe(t, nil, "--data-dir", dir)
			c := connectServe(t, first.url, era)
			quick := createTask(t, c, "trigger-long-running-operation", map[string]any{"duration": 0, "steps": 1})
			awaitStatus(t, c, quick, mcp.TaskCompleted)
			long := createTask(t, c, "trigger-long-running-operation", map[string]any{"duration": 3600, "steps": 1000})
			first.kill(t) // right after the CreateTaskResult
			c.Close()

			if st, err := os.Stat(dir); err != nil || st.Mode().Perm() != 0o700 {
				t.Errorf("data directory: %v, mode %v, want 0700", err, st.Mode().Perm())
			}
			if _, err := os.Stat(filepath.Join(dir, "tasks.db")); err != nil {
				t.Errorf("no task database: %v", err)
			}

			second := startServe(t, nil, "--data-dir", dir)
			c = connectServe(t, second.url, era)
			d, err := c.GetTask(t.Context(), long)
			if err != nil {
				t.Fatalf("tasks/get of the task running at the kill: %v", err)
			}
			if d.Status != mcp.TaskFailed || d.StatusMessage != server.RestartMessage {
				t.Errorf("task running at the kill: %s %q, want failed %q", d.Status, d.StatusMessage, server.RestartMessage)
			}
			if era == mcp.EraModern {
				if d.Error == nil || d.Error.Code != -32603 || d.Error.Message != server.RestartMessage {
					t.Errorf("task running at the kill: error %+v, want -32603 %q", d.Error, server.RestartMessage)
				}
			}

			d, err = c.GetTask(t.Context(), quick)
			if err != nil {
				t.Fatalf("tasks/get of the completed task: %v", err)
			}
			if d.Status != mcp.TaskCompleted {
				t.Errorf("completed task after the restart: %s", d.Status)
			}
			if era == mcp.EraModern {
				if got := resultText(t, d.Result); got != quickResult {
					t.Errorf("completed task's inlined result %q, want %q", got, quickResult)
				}
			} else {
				ctx, cancel := context.WithTimeout(t.Context(), durableDeadline)
				defer cancel()
				res, err := c.WaitTask(ctx, quick) // tasks/result
				if err != nil {
					t.Fatalf("tasks/result of the completed task: %v", err)
				}
				raw, _ := json.Marshal(res)
				if got := resultText(t, raw); got != quickResult {
					t.Errorf("tasks/result %q, want %q", got, quickResult)
				}
				// tasks/result of the lost task is its error.
				_, err = c.WaitTask(ctx, long)
				if err == nil || !strings.Contains(err.Error(), server.RestartMessage) {
					t.Errorf("tasks/result of the lost task: %v, want an error saying %q", err, server.RestartMessage)
				}
			}
			if !strings.Contains(second.log.String(), "marked failed") {
				t.Errorf("the restarted server did not log the recovered task:\n%s", second.log.String())
			}
			if err := second.interrupt(t); err != nil {
				t.Errorf("SIGINT: %v\n%s", err, second.log.String())
			}
		})
	}
}

// On SIGINT a running task is stopped and recorded failed with
// server.ShutdownMessage before the store is closed; the next server finds
// it so, not as lost work of a crash.
func TestServeTasksShutdownOnSignal(t *testing.T) {
	dir := t.TempDir()
	first := startServe(t, nil, "--data-dir", dir)
	c := connectServe(t, first.url, mcp.EraModern)
	long := createTask(t, c, "trigger-long-running-operation", map[string]any{"duration": 3600, "steps": 1000})
	if err := first.interrupt(t); err != nil {
		t.Fatalf("SIGINT: %v\n%s", err, first.log.String())
	}
	second := startServe(t, nil, "--data-dir", dir)
	c = connectServe(t, second.url, mcp.EraModern)
	d, err := c.GetTask(t.Context(), long)
	if err != nil {
		t.Fatal(err)
	}
	if d.Status != mcp.TaskFailed || d.StatusMessage != server.ShutdownMessage {
		t.Errorf("task running at SIGINT: %s %q, want failed %q", d.Status, d.StatusMessage, server.ShutdownMessage)
	}
}

// Without --data-dir the tasks go to toolwire under $XDG_STATE_HOME
// (created 0700); --data-dir "" keeps them in memory and writes nothing; a
// second server on a data directory in use keeps its tasks in memory, with
// a warning, and still serves them.
func TestServeDataDirDefaultAndMemory(t *testing.T) {
	state := t.TempDir()
	env := []string{"XDG_STATE_HOME=" + state}
	p := startServe(t, env)
	c := connectServe(t, p.url, mcp.EraModern)
	id := createTask(t, c, "trigger-long-running-operation", map[string]any{"duration": 0, "steps": 1})
	awaitStatus(t, c, id, mcp.TaskCompleted)
	dir := filepath.Join(state, "toolwire")
	if st, err := os.Stat(dir); err != nil || st.Mode().Perm() != 0o700 {
		t.Fatalf("default data directory %s: %v", dir, err)
	}
	if _, err := os.Stat(filepath.Join(dir, "tasks.db")); err != nil {
		t.Errorf("no tasks.db in the default data directory: %v", err)
	}

	// A second server on the same directory while the first runs.
	busy := startServe(t, env)
	if !strings.Contains(busy.log.String(), "in use by another toolwire process") {
		t.Errorf("no warning for a data directory in use:\n%s", busy.log.String())
	}
	cb := connectServe(t, busy.url, mcp.EraModern)
	id2 := createTask(t, cb, "trigger-long-running-operation", map[string]any{"duration": 0, "steps": 1})
	awaitStatus(t, cb, id2, mcp.TaskCompleted)
	if err := busy.interrupt(t); err != nil {
		t.Errorf("SIGINT: %v", err)
	}
	// The first server's tasks were left alone.
	awaitStatus(t, c, id, mcp.TaskCompleted)
	if err := p.interrupt(t); err != nil {
		t.Errorf("SIGINT: %v", err)
	}

	empty := t.TempDir()
	m := startServe(t, []string{"XDG_STATE_HOME=" + empty}, "--data-dir", "")
	cm := connectServe(t, m.url, mcp.EraModern)
	id3 := createTask(t, cm, "trigger-long-running-operation", map[string]any{"duration": 0, "steps": 1})
	awaitStatus(t, cm, id3, mcp.TaskCompleted)
	if err := m.interrupt(t); err != nil {
		t.Errorf("SIGINT: %v", err)
	}
	if ents, err := os.ReadDir(empty); err != nil || len(ents) != 0 {
		t.Errorf("--data-dir \"\" wrote to the state directory: %v %v", ents, err)
	}
}

// An unusable --data-dir is an error, not a silent fall back to memory.
func TestServeDataDirUnusable(t *testing.T) {
	file := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(testenv.Toolwire(t), "serve", "--addr", "127.0.0.1:0", "--data-dir", file).CombinedOutput()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() == 0 || !strings.Contains(string(out), "--data-dir") {
		t.Errorf("--data-dir naming a file: %v\n%s", err, out)
	}
}
