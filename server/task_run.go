package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"sync"
	"time"

	"github.com/toolwire/toolwire/internal/wirejson"
	"github.com/toolwire/toolwire/jsonrpc"
	"github.com/toolwire/toolwire/mcp"
	"github.com/toolwire/toolwire/taskstore"
)

// taskPlan is how one tools/call runs: as a task or not, and for how long
// the task is kept.
type taskPlan struct {
	on       bool
	deferred bool // the handler starts the task (WithDeferredTask, 2026-07-28)
	ttl      time.Duration
}

// planTask decides whether a tools/call becomes a task, or refuses it as
// the spec says: in 2025-era sessions, -32601 for params.task on a tool
// that forbids tasks and for its absence on one that requires them; in
// 2026-07-28, -32021 when a tool requires a task and the request did not
// declare the tasks extension (params.task is a 2025 member and ignored).
func (s *Server) planTask(r *Request, t *tool, rawTask json.RawMessage) (taskPlan, *jsonrpc.Error) {
	if r.Peer.Era == mcp.EraModern {
		if t.tasks == mcp.TaskForbidden {
			return taskPlan{}, nil
		}
		if !r.Peer.ClientCapabilities.HasExtension(mcp.ExtensionTasks) {
			if t.tasks == mcp.TaskRequired {
				return taskPlan{}, missingTasksExtension("tool %q runs only as a task, and this request did not declare the %s extension", t.name, mcp.ExtensionTasks)
			}
			return taskPlan{}, nil
		}
		return taskPlan{on: true, deferred: t.deferTask, ttl: s.tasks.cfg.ttl}, nil
	}
	asked := len(rawTask) > 0 && string(rawTask) != "null"
	switch {
	case asked && t.tasks == mcp.TaskForbidden:
		return taskPlan{}, jsonrpc.NewError(jsonrpc.CodeMethodNotFound, "tool %q does not support task-augmented execution", t.name)
	case !asked && t.tasks == mcp.TaskRequired:
		return taskPlan{}, jsonrpc.NewError(jsonrpc.CodeMethodNotFound, "tool %q must be called as a task (params.task), its execution.taskSupport is required", t.name)
	case !asked:
		return taskPlan{}, nil
	}
	var tp mcp.TaskParams
	if rawTask[0] != '{' {
		return taskPlan{}, jsonrpc.NewError(jsonrpc.CodeInvalidParams, `invalid tools/call params: "task" must be an object`)
	}
	if err := wirejson.Unmarshal(rawTask, &tp); err != nil {
		return taskPlan{}, jsonrpc.NewError(jsonrpc.CodeInvalidParams, `invalid tools/call params: "task": %v`, err)
	}
	ttl := s.tasks.cfg.ttl
	if tp.TTL != nil {
		if *tp.TTL <= 0 {
			return taskPlan{}, jsonrpc.NewError(jsonrpc.CodeInvalidParams, `invalid tools/call params: "task.ttl" must be a positive number of milliseconds`)
		}
		ttl = min(time.Duration(min(*tp.TTL, int64(s.tasks.cfg.maxTTL/time.Millisecond)))*time.Millisecond, s.tasks.cfg.maxTTL)
	}
	return taskPlan{on: true, ttl: ttl}, nil
}

// runningTask is a task whose handler runs in this process.
type runningTask struct {
	e       *taskEngine
	s       *Server
	id      string
	owner   string
	era     mcp.Era
	version string // the protocol revision of the creating request
	ttl     time.Duration
	cancel  context.CancelCauseFunc
	session *Session // the 2025-era session that created it

	mu       sync.Mutex
	started  bool                       // stored and announced
	finished bool                       // the handler returned
	created  chan *mcp.CreateTaskResult // StartTask's announcement (deferred)
	result   chan taskOutcome           // a deferred handler that never started its task
	pending  map[string]*pendingInput   // 2026: wire key -> open request
	issued   map[string]int             // keys used so far: each wire key is used once
	message  string                     // the latest status message, from progress
	wrote    time.Time                  // when a status message was last stored
	streams  []jsonrpc.Sender           // 2025: tasks/result streams waiting on it
	done     chan struct{}              // closed when the handler has returned
}

type pendingInput struct {
	req    mcp.InputRequest
	key    string // the handler's key
	answer chan json.RawMessage
}

type taskOutcome struct {
	res  *mcp.CallToolResult
	herr error
}

// callAsTask runs a tools/call as a task: stored first, then answered with
// its CreateTaskResult while the handler runs on. A deferred handler runs
// first as a plain request until it calls StartTask.
func (s *Server) callAsTask(ctx context.Context, t *tool, req *CallRequest, args []byte, plan taskPlan) (any, error) {
	e := &s.tasks
	r := req.Request
	rt := &runningTask{e: e, s: s, id: newTaskID(), owner: ownerOf(r), era: r.Peer.Era, version: r.Peer.ProtocolVersion, ttl: plan.ttl,
		done: make(chan struct{})}
	if r.Peer.Era == mcp.EraLegacy {
		rt.session = r.session
	}
	e.mu.Lock()
	switch {
	case e.closed:
		e.mu.Unlock()
		return nil, jsonrpc.NewError(jsonrpc.CodeInternalError, "the server is shutting down and starts no more tasks")
	case len(e.running) >= e.cfg.maxRunning:
		e.mu.Unlock()
		return nil, jsonrpc.NewError(jsonrpc.CodeOverloaded, "the server runs %d tasks already, its limit; try again later", e.cfg.maxRunning)
	}
	e.running[rt.id] = rt
	e.wg.Add(1)
	e.mu.Unlock()

	// The handler's context outlives the request: it ends with tasks/cancel,
	// the TTL or Shutdown. Before a deferred handler starts its task, the
	// request's own end cancels it too.
	hctx, cancel := context.WithCancelCause(context.WithoutCancel(ctx))
	rt.cancel = cancel
	stopShutdown := context.AfterFunc(e.ctx, func() { cancel(ErrServerShutdown) })
	var stopRequest func() bool
	req.task = rt
	if r.Peer.Era == mcp.EraLegacy {
		// Requests to the client and progress go over the session (or a
		// tasks/result stream), the tools/call stream being closed.
		r.sender = rt
		if req.progress != nil {
			req.progress.w = rt
		}
	} else {
		req.progress = nil // no progress notifications for 2026 tasks
	}
	timeout := time.Duration(0)
	if t.hasTimeout {
		timeout = t.timeout
	}
	if !plan.deferred {
		created, jerr := rt.start(ctx)
		if jerr != nil {
			cancel(nil)
			stopShutdown()
			e.forget(rt)
			return nil, jerr
		}
		go rt.run(hctx, t, req, args, timeout, stopShutdown)
		return created, nil
	}
	rt.created = make(chan *mcp.CreateTaskResult, 1)
	rt.result = make(chan taskOutcome, 1)
	stopRequest = context.AfterFunc(ctx, func() {
		rt.mu.Lock()
		started := rt.started
		rt.mu.Unlock()
		if !started {
			cancel(context.Cause(ctx))
		}
	})
	go rt.run(hctx, t, req, args, timeout, stopShutdown)
	select {
	case created := <-rt.created:
		stopRequest()
		return created, nil
	case out := <-rt.result:
		stopRequest()
		req.progress.finish()
		return s.finishCall(r, t, out.res, out.herr)
	}
}

// start stores the task and returns its CreateTaskResult; the TTL timer
// starts with it.
func (rt *runningTask) start(ctx context.Context) (*mcp.CreateTaskResult, *jsonrpc.Error) {
	rec := &taskstore.Record{ID: rt.id, Owner: rt.owner, Status: mcp.TaskWorking, TTL: rt.ttl, PollInterval: rt.e.cfg.poll,
		ProtocolVersion: rt.version, Method: mcp.MethodCallTool}
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), storeTimeout)
	defer cancel()
	if err := rt.e.store.Create(sctx, rec); err != nil {
		if errors.Is(err, taskstore.ErrFull) {
			return nil, jsonrpc.NewError(jsonrpc.CodeOverloaded, "the task store is full; try again later")
		}
		return nil, taskStoreError(err)
	}
	rt.mu.Lock()
	rt.started = true
	rt.mu.Unlock()
	time.AfterFunc(time.Until(rec.CreatedAt.Add(rt.ttl)), func() { rt.expire() })
	return &mcp.CreateTaskResult{Task: toTask(rec)}, nil
}

// progressEvery bounds how often progress is written to the store.
const progressEvery = 250 * time.Millisecond

// storeTimeout bounds one store operation made on a task's behalf.
const storeTimeout = 30 * time.Second

// run calls the handler and records how it ended.
func (rt *runningTask) run(ctx context.Context, t *tool, req *CallRequest, args []byte, timeout time.Duration, stopShutdown func() bool) {
	defer rt.e.wg.Done()
	defer stopShutdown()
	res, herr := rt.s.run(ctx, rt.cancel, t, req, args, timeout)
	rt.mu.Lock()
	rt.finished = true
	started := rt.started
	rt.mu.Unlock()
	defer close(rt.done)
	defer rt.e.forget(rt)
	if !started {
		rt.result <- taskOutcome{res, herr}
		rt.cancel(nil)
		return
	}
	req.progress.finish()
	cause := context.Cause(ctx)
	rt.cancel(nil)
	switch {
	case errors.Is(cause, errTaskCancelled):
		return // tasks/cancel has recorded it
	case errors.Is(cause, errTaskExpired):
		rt.fail(nil, "the task's TTL ran out before it finished")
		return
	case errors.Is(cause, ErrServerShutdown):
		rt.fail(nil, ShutdownMessage)
		return
	}
	answer, err := rt.s.finishCall(req.Request, t, res, herr)
	if err != nil {
		je := errorOf(err)
		rt.fail(je, "")
		return
	}
	raw, eerr := encodeResult(answer, rt.era)
	if eerr != nil {
		rt.fail(jsonrpc.NewError(jsonrpc.CodeInternalError, "cannot encode the tools/call result: %v", eerr), "")
		return
	}
	status := mcp.TaskCompleted
	if rt.era == mcp.EraLegacy && isErrorResult(answer) {
		status = mcp.TaskFailed // 2025-11-25: an isError result fails the task
	}
	rt.update(func(rec *taskstore.Record) error {
		rec.Status, rec.Result, rec.InputRequests = status, raw, nil
		rec.StatusMessage = rt.lastMessage()
		return nil
	})
}

// fail records a failed task: with the JSON-RPC error it failed with, or
// only a message.
func (rt *runningTask) fail(je *jsonrpc.Error, message string) {
	var raw json.RawMessage
	if je != nil {
		raw, _ = json.Marshal(mcp.TaskError{Code: je.Code, Message: je.Message, Data: je.Data})
		if message == "" {
			message = je.Message
		}
	}
	rt.update(func(rec *taskstore.Record) error {
		rec.Status, rec.Error, rec.InputRequests, rec.StatusMessage = mcp.TaskFailed, raw, nil, message
		return nil
	})
}

// expire ends a task at its TTL.
func (rt *runningTask) expire() {
	rt.cancel(errTaskExpired)
}

func (rt *runningTask) lastMessage() string {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	return rt.message
}

// update changes the stored task and tells whoever listens. A task that
// has already ended is left as it is.
func (rt *runningTask) update(fn func(*taskstore.Record) error) *taskstore.Record {
	ctx, cancel := context.WithTimeout(context.Background(), storeTimeout)
	defer cancel()
	rec, err := rt.e.store.Update(ctx, rt.id, fn)
	if err != nil {
		if !errors.Is(err, taskstore.ErrTerminal) && !errors.Is(err, taskstore.ErrNotFound) {
			rt.e.logf("cannot record a task's status", "task", rt.id, "error", err)
		}
		return nil
	}
	rt.s.taskChanged(rec, rt.session)
	return rec
}

func (e *taskEngine) forget(rt *runningTask) {
	e.mu.Lock()
	if e.running[rt.id] == rt {
		delete(e.running, rt.id)
	}
	e.mu.Unlock()
}

func (e *taskEngine) lookup(id string) *runningTask {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.running[id]
}

// Send implements jsonrpc.Sender for a 2025-era task's messages to the
// client: on the newest tasks/result request waiting on the task (over
// HTTP, the stream the client reads), else on the session.
func (rt *runningTask) Send(ctx context.Context, m jsonrpc.Message) error {
	rt.mu.Lock()
	var w jsonrpc.Sender
	if n := len(rt.streams); n > 0 {
		w = rt.streams[n-1]
	}
	rt.mu.Unlock()
	if w == nil && rt.session != nil {
		w = rt.session.out
	}
	if w == nil {
		return ErrNoBackChannel
	}
	return w.Send(ctx, m)
}

// waitStream adds a tasks/result stream while it waits; the returned func
// removes it.
func (rt *runningTask) waitStream(w jsonrpc.Sender) func() {
	rt.mu.Lock()
	rt.streams = append(rt.streams, w)
	rt.mu.Unlock()
	return func() {
		rt.mu.Lock()
		for i, x := range rt.streams {
			if x == w {
				rt.streams = append(rt.streams[:i], rt.streams[i+1:]...)
				break
			}
		}
		rt.mu.Unlock()
	}
}

// inputStatus moves a 2025-era task to input_required while one of its
// requests to the client is open, and back to working after.
func (rt *runningTask) inputStatus(waiting bool) {
	status := mcp.TaskWorking
	if waiting {
		status = mcp.TaskInputRequired
	}
	rt.update(func(rec *taskstore.Record) error {
		rec.Status = status
		return nil
	})
}

// ask is Request.Input in a 2026-07-28 task: the requests are listed on the
// task (tasks/get shows them as inputRequests, each under a key used once in
// the task's life) until tasks/update answers them all.
func (rt *runningTask) ask(ctx context.Context, keys []string, reqs map[string]mcp.InputRequest) (mcp.InputResponses, error) {
	rt.mu.Lock()
	if rt.pending == nil {
		rt.pending = map[string]*pendingInput{}
		rt.issued = map[string]int{}
	}
	waits := make(map[string]*pendingInput, len(keys))
	for _, k := range keys {
		wire := k
		if n := rt.issued[k]; n > 0 {
			wire = k + "." + strconv.Itoa(n+1)
		}
		rt.issued[k]++
		p := &pendingInput{req: reqs[k], key: k, answer: make(chan json.RawMessage, 1)}
		rt.pending[wire] = p
		waits[wire] = p
	}
	rt.mu.Unlock()
	rt.writeInputState()
	out := make(mcp.InputResponses, len(keys))
	for wire, p := range waits {
		select {
		case a := <-p.answer:
			out[p.key] = a
		case <-ctx.Done():
			rt.mu.Lock()
			for w := range waits {
				delete(rt.pending, w)
			}
			rt.mu.Unlock()
			return nil, fmt.Errorf("task input %q not answered: %w", wire, context.Cause(ctx))
		}
	}
	return out, nil
}

// openRequestsLocked encodes the open input requests.
func (rt *runningTask) openRequestsLocked() json.RawMessage {
	if len(rt.pending) == 0 {
		return nil
	}
	m := make(map[string]mcp.InputRequest, len(rt.pending))
	for k, p := range rt.pending {
		m[k] = p.req
	}
	raw, _ := json.Marshal(m)
	return raw
}

// answer delivers tasks/update's responses: those for open requests are
// taken, any other is ignored. The task is back to working once nothing is
// open. It reports how many were taken.
func (rt *runningTask) answer(resp mcp.InputResponses) int {
	rt.mu.Lock()
	keys := make([]string, 0, len(resp))
	for k := range resp {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	taken := 0
	for _, k := range keys {
		p, ok := rt.pending[k]
		if !ok {
			continue
		}
		delete(rt.pending, k)
		p.answer <- resp[k]
		taken++
	}
	rt.mu.Unlock()
	if taken > 0 {
		rt.writeInputState()
	}
	return taken
}

// writeInputState records the open input requests, read when the store
// writes (under its lock), not before: of a question asked and an answer
// taken racing to the store, the write that lands last holds the set as it
// is then, so a task is never left "working" with a question open, or
// "input_required" with none.
func (rt *runningTask) writeInputState() {
	rt.update(func(rec *taskstore.Record) error {
		rt.mu.Lock()
		open := rt.openRequestsLocked()
		rt.mu.Unlock()
		rec.InputRequests = open
		rec.Status = mcp.TaskInputRequired
		if open == nil {
			rec.Status = mcp.TaskWorking
		}
		return nil
	})
}

// noteProgress keeps a task's progress as its status message, written to
// the store at most once per progressEvery.
func (rt *runningTask) noteProgress(value, total float64, message string) {
	text := strconv.FormatFloat(value, 'f', -1, 64)
	if total > 0 {
		text += "/" + strconv.FormatFloat(total, 'f', -1, 64)
	}
	if message != "" {
		text += ": " + message
	}
	rt.setMessage(text)
}

func (rt *runningTask) setMessage(msg string) {
	rt.mu.Lock()
	rt.message = msg
	now := time.Now()
	write := now.Sub(rt.wrote) >= progressEvery
	if write {
		rt.wrote = now
	}
	rt.mu.Unlock()
	if !write {
		return // tasks/get shows it from memory meanwhile
	}
	rt.update(func(rec *taskstore.Record) error {
		rec.StatusMessage = msg
		return nil
	})
}

// TaskID returns the id of the task this call runs as, or "" when it runs as
// a plain request.
func (r *CallRequest) TaskID() string {
	rt := r.task
	if rt == nil {
		return ""
	}
	rt.mu.Lock()
	defer rt.mu.Unlock()
	if !rt.started {
		return ""
	}
	return rt.id
}

// SetTaskStatus records a status message on the call's task (tasks/get
// shows it); it does nothing when the call is not a task.
func (r *CallRequest) SetTaskStatus(message string) {
	if r.TaskID() != "" {
		r.task.setMessage(message)
	}
}

// StartTask turns a call of a tool registered WithDeferredTask into a task
// now: the task is stored, the client gets the CreateTaskResult, and the
// handler goes on detached (input it asks for from here on is asked
// through the task). It returns nil if the call already is a task and
// ErrNotTask if it cannot become one.
func (r *CallRequest) StartTask(ctx context.Context) error {
	rt := r.task
	if rt == nil {
		return ErrNotTask
	}
	rt.mu.Lock()
	started, finished := rt.started, rt.finished
	rt.mu.Unlock()
	if started {
		return nil
	}
	if finished {
		return ErrNotTask
	}
	created, jerr := rt.start(ctx)
	if jerr != nil {
		return jerr
	}
	r.progress.finish() // the request's stream ends with the CreateTaskResult
	r.progress = nil
	rt.created <- created
	return nil
}

// inTask reports whether r runs as a started task.
func (r *Request) inTask() *runningTask {
	if r.task == nil {
		return nil
	}
	r.task.mu.Lock()
	defer r.task.mu.Unlock()
	if !r.task.started {
		return nil
	}
	return r.task
}
