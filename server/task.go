package server

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"sync"
	"time"

	"github.com/toolwire/toolwire/internal/limits"
	"github.com/toolwire/toolwire/jsonrpc"
	"github.com/toolwire/toolwire/mcp"
	"github.com/toolwire/toolwire/taskstore"
)

// A tool registered WithTaskSupport runs as a task when the client allows
// it: in a 2025-era session when tools/call carries params.task, in
// 2026-07-28 when the request declares the io.modelcontextprotocol/tasks
// extension (the server then decides, and always makes a task). The task is
// stored before its CreateTaskResult is sent; the same handler then runs
// detached from the request, under a context of its own that tasks/cancel,
// the task's TTL and Shutdown end.

// Defaults for tasks; every one can be changed by an Option.
const (
	DefaultTaskTTL          = time.Hour
	DefaultMaxTaskTTL       = 24 * time.Hour
	DefaultTaskPollInterval = 500 * time.Millisecond
	DefaultTaskSweep        = time.Minute
	DefaultMaxRunningTasks  = 1000
)

// RestartMessage is the status message of a task that was running when its
// server stopped without finishing it (found at the next start).
const RestartMessage = "the server restarted while the task was running; its work was lost"

// ShutdownMessage is the status message of a task ended by Shutdown.
const ShutdownMessage = "the server shut down before the task finished"

// ErrNotTask is returned by CallRequest.StartTask when the call cannot
// become a task: the tool was not registered WithTaskSupport, or the client
// did not allow tasks for this request.
var ErrNotTask = errors.New("server: this call cannot run as a task")

// ErrServerShutdown is the cause of a task's context when Shutdown ends it.
var ErrServerShutdown = errors.New("server: shut down")

// errTaskCancelled and errTaskExpired are the causes of a task's context
// when tasks/cancel or its TTL end it.
var (
	errTaskCancelled = errors.New("server: task cancelled by the client")
	errTaskExpired   = errors.New("server: task expired before it finished")
)

type taskConfig struct {
	store      taskstore.Store
	ttl        time.Duration
	maxTTL     time.Duration
	poll       time.Duration
	sweep      time.Duration
	maxRunning int
}

func (c *taskConfig) defaults() {
	limits.Default(&c.ttl, DefaultTaskTTL)
	limits.Default(&c.maxTTL, DefaultMaxTaskTTL)
	c.ttl = min(c.ttl, c.maxTTL)
	limits.Default(&c.poll, DefaultTaskPollInterval)
	limits.Default(&c.sweep, DefaultTaskSweep)
	limits.Default(&c.maxRunning, DefaultMaxRunningTasks)
}

// WithTaskStore sets where tasks are kept (default: in memory, lost with
// the process). The server recovers the store when tasks start: tasks it
// finds still working are marked failed with RestartMessage, so a store
// belongs to one server process at a time (toolwire serve locks its data
// directory). The caller closes the store after Shutdown.
func WithTaskStore(st taskstore.Store) Option {
	return serverOption(func(c *config) { c.tasks.store = st })
}

// taskSupportOption is the ToolOption of WithTaskSupport.
type taskSupportOption struct {
	level    mcp.TaskSupport
	deferred bool
}

func (o taskSupportOption) applyTool(t *toolConfig) {
	t.taskSupport, t.deferTask = o.level, o.deferred
}

// WithTaskSupport lets a tool run as a task: mcp.TaskOptional (the client
// chooses) or mcp.TaskRequired (calls that cannot be tasks are refused).
// The handler does not change; CallRequest.TaskID tells it whether it runs
// as one.
func WithTaskSupport(level mcp.TaskSupport) ToolOption {
	return taskSupportOption{level: level}
}

// WithDeferredTask is WithTaskSupport for a handler that decides itself
// when its call becomes a task: in 2026-07-28 it runs as a plain request
// (asking for input with input_required results) until it calls
// CallRequest.StartTask, which answers the request with the
// CreateTaskResult while the handler goes on. One that returns without
// calling it answers as a plain call. 2025-era calls with params.task are
// tasks from the start.
func WithDeferredTask(level mcp.TaskSupport) ToolOption {
	return taskSupportOption{level: level, deferred: true}
}

// taskEngine runs a server's tasks: the store, the tasks running in this
// process, and the sweeper.
type taskEngine struct {
	once    sync.Once
	cfg     taskConfig
	store   taskstore.Store
	ctx     context.Context // ended by Shutdown
	stop    context.CancelCauseFunc
	wg      sync.WaitGroup
	logf    func(msg string, args ...any)
	mu      sync.Mutex
	running map[string]*runningTask
	closed  bool
}

// startTasks makes the engine ready and adds the task methods to the table:
// on the first tool registered WithTaskSupport.
func (s *Server) startTasks() error {
	e := &s.tasks
	var err error
	e.once.Do(func() {
		e.cfg = s.cfg.tasks
		e.cfg.defaults()
		e.store = e.cfg.store
		if e.store == nil {
			e.store = taskstore.NewMemory()
		}
		e.logf = s.cfg.logger.Warn
		e.running = map[string]*runningTask{}
		e.ctx, e.stop = context.WithCancelCause(context.Background())
		if n, rerr := e.store.Recover(e.ctx, RestartMessage); rerr != nil {
			s.cfg.logger.Error("cannot recover the task store", "error", rerr)
		} else if n > 0 {
			s.cfg.logger.Warn("tasks left running by an earlier process marked failed", "count", n)
		}
		e.wg.Add(1)
		go e.sweeper()
		err = s.addTaskMethods()
	})
	return err
}

// addTaskMethods puts the task methods in the table: tasks/get, tasks/cancel
// in both eras, tasks/result and tasks/list in 2025-era sessions,
// tasks/update in 2026-07-28.
func (s *Server) addTaskMethods() error {
	caps := json.RawMessage(`{"list":{},"cancel":{},"requests":{"tools":{"call":{}}}}`)
	spec := func(name string, eras Eras) MethodSpec {
		return MethodSpec{Name: name, Eras: eras, Capability: "tasks", CapabilityValue: caps, Extension: mcp.ExtensionTasks, NameParam: "taskId"}
	}
	for _, err := range []error{
		AddMethod(s, spec(mcp.MethodGetTask, AnyEra), s.getTask),
		AddMethod(s, spec(mcp.MethodCancelTask, AnyEra), s.cancelTask),
		AddMethod(s, spec(mcp.MethodUpdateTask, Modern), s.updateTask),
		AddMethod(s, spec(mcp.MethodTaskResult, Legacy), s.taskResult),
		AddMethod(s, MethodSpec{Name: mcp.MethodListTasks, Eras: Legacy, Capability: "tasks", CapabilityValue: caps, Extension: mcp.ExtensionTasks}, s.listTasks),
	} {
		if err != nil {
			return err
		}
	}
	return nil
}

func (e *taskEngine) sweeper() {
	defer e.wg.Done()
	t := time.NewTicker(e.cfg.sweep)
	defer t.Stop()
	for {
		select {
		case <-e.ctx.Done():
			return
		case now := <-t.C:
			if _, err := e.store.Sweep(e.ctx, now); err != nil && e.ctx.Err() == nil {
				e.logf("task sweep failed", "error", err)
			}
		}
	}
}

// Shutdown stops the server's tasks: each one still running is cancelled
// and marked failed with ShutdownMessage. It waits for their handlers to
// return until ctx ends. Tools stay registered; a task started after
// Shutdown is refused.
func (s *Server) Shutdown(ctx context.Context) error {
	e := &s.tasks
	e.mu.Lock()
	if e.running == nil || e.closed {
		e.closed = true
		e.mu.Unlock()
		return nil
	}
	e.closed = true
	e.mu.Unlock()
	e.stop(ErrServerShutdown)
	done := make(chan struct{})
	go func() { e.wg.Wait(); close(done) }()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// newTaskID returns a task id: 128 random bits.
func newTaskID() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails
	return hex.EncodeToString(b[:])
}

// ownerOf is the key tasks of a request are filed under: its principal's.
func ownerOf(r *Request) string { return r.principal.Key() }

// taskNotFound is the answer for a task that does not exist, has expired or
// belongs to someone else: the three cannot be told apart.
func taskNotFound(id string) *jsonrpc.Error {
	return jsonrpc.NewError(jsonrpc.CodeInvalidParams, "no task %q: it does not exist or has expired", id)
}

// taskStoreError is the answer when the store fails.
func taskStoreError(err error) *jsonrpc.Error {
	return jsonrpc.NewError(jsonrpc.CodeInternalError, "the task store failed: %v", err)
}

// missingTasksExtension is -32021 naming the tasks extension.
func missingTasksExtension(format string, args ...any) *jsonrpc.Error {
	return jsonrpc.NewError(mcp.CodeMissingRequiredClientCapability, format, args...).
		WithData(map[string]any{"requiredCapabilities": map[string]any{"extensions": map[string]any{mcp.ExtensionTasks: map[string]any{}}}})
}

// toTask is a stored record as the protocol's Task.
func toTask(rec *taskstore.Record) mcp.Task {
	t := mcp.Task{TaskID: rec.ID, Status: rec.Status, StatusMessage: rec.StatusMessage, CreatedAt: rec.CreatedAt, LastUpdatedAt: rec.UpdatedAt}
	if rec.TTL > 0 {
		ttl := rec.TTL
		t.TTL = &ttl
	}
	if rec.PollInterval > 0 {
		p := rec.PollInterval
		t.PollInterval = &p
	}
	return t
}
