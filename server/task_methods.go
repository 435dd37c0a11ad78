package server

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"time"

	"github.com/toolwire/toolwire/internal/wirejson"
	"github.com/toolwire/toolwire/jsonrpc"
	"github.com/toolwire/toolwire/mcp"
	"github.com/toolwire/toolwire/taskstore"
)

// findTask returns the caller's task, or -32602 for one that does not
// exist, has expired or is someone else's.
func (s *Server) findTask(ctx context.Context, r *Request, id string) (*taskstore.Record, *jsonrpc.Error) {
	if id == "" {
		return nil, jsonrpc.NewError(jsonrpc.CodeInvalidParams, `invalid %s params: "taskId" is required`, r.Method)
	}
	rec, err := s.tasks.store.Get(ctx, ownerOf(r), id)
	switch {
	case errors.Is(err, taskstore.ErrNotFound):
		return nil, taskNotFound(id)
	case err != nil:
		return nil, taskStoreError(err)
	}
	if rt := s.tasks.lookup(id); rt != nil && !rec.Status.Terminal() {
		if msg := rt.lastMessage(); msg != "" {
			rec.StatusMessage = msg
		}
	}
	return rec, nil
}

// detailed is a stored task as tasks/get and notifications/tasks show it.
func detailed(rec *taskstore.Record) *mcp.DetailedTask {
	d := &mcp.DetailedTask{Task: toTask(rec)}
	switch rec.Status {
	case mcp.TaskCompleted:
		d.Result = rec.Result
	case mcp.TaskFailed:
		d.Error = taskErrorOf(rec)
		if len(rec.Error) == 0 && len(rec.Result) > 0 {
			// A 2025-era task failed by an isError result: it has a result
			// and no protocol error.
			d.Error = nil
			d.Result = rec.Result
		}
	case mcp.TaskInputRequired:
		var reqs map[string]mcp.InputRequest
		if len(rec.InputRequests) > 0 && wirejson.Unmarshal(rec.InputRequests, &reqs) == nil {
			d.InputRequests = reqs
		}
	}
	return d
}

// taskErrorOf is the error a failed task failed with; one that failed
// without a JSON-RPC error (the server restarted or shut down, the TTL ran
// out) gets an internal error carrying its status message.
func taskErrorOf(rec *taskstore.Record) *mcp.TaskError {
	var te mcp.TaskError
	if len(rec.Error) > 0 && wirejson.Unmarshal(rec.Error, &te) == nil {
		return &te
	}
	msg := rec.StatusMessage
	if msg == "" {
		msg = "the task failed"
	}
	return &mcp.TaskError{Code: jsonrpc.CodeInternalError, Message: msg}
}

func (s *Server) getTask(ctx context.Context, r *Request, p *mcp.TaskIDParams) (*mcp.DetailedTask, error) {
	rec, jerr := s.findTask(ctx, r, p.TaskID)
	if jerr != nil {
		return nil, jerr
	}
	return detailed(rec), nil
}

// cancelTask ends a task: its status becomes cancelled before the answer,
// and its handler's context is cancelled. In 2025-era sessions the answer
// is the task, and a task already ended is -32602; in 2026-07-28 it is an
// empty acknowledgement either way.
func (s *Server) cancelTask(ctx context.Context, r *Request, p *mcp.TaskIDParams) (any, error) {
	rec, jerr := s.findTask(ctx, r, p.TaskID)
	if jerr != nil {
		return nil, jerr
	}
	if rec.Status.Terminal() {
		if r.Peer.Era == mcp.EraLegacy {
			return nil, jsonrpc.NewError(jsonrpc.CodeInvalidParams, "task %q has already ended (%s) and cannot be cancelled", rec.ID, rec.Status)
		}
		return &mcp.EmptyResult{}, nil
	}
	updated, err := s.tasks.store.Update(ctx, rec.ID, func(x *taskstore.Record) error {
		x.Status, x.StatusMessage, x.InputRequests = mcp.TaskCancelled, "cancelled by the client", nil
		return nil
	})
	switch {
	case errors.Is(err, taskstore.ErrTerminal):
		// It ended meanwhile.
		if r.Peer.Era == mcp.EraLegacy {
			return nil, jsonrpc.NewError(jsonrpc.CodeInvalidParams, "task %q has already ended and cannot be cancelled", rec.ID)
		}
		return &mcp.EmptyResult{}, nil
	case errors.Is(err, taskstore.ErrNotFound):
		return nil, taskNotFound(rec.ID)
	case err != nil:
		return nil, taskStoreError(err)
	}
	var session *Session
	if rt := s.tasks.lookup(rec.ID); rt != nil {
		session = rt.session
		rt.cancel(errTaskCancelled)
	}
	s.taskChanged(updated, session)
	if r.Peer.Era == mcp.EraLegacy {
		return &mcp.DetailedTask{Task: toTask(updated)}, nil
	}
	return &mcp.EmptyResult{}, nil
}

// updateTask delivers tasks/update's answers to the open input requests of
// a task; answers to anything else are ignored, as the spec advises.
func (s *Server) updateTask(ctx context.Context, r *Request, p *mcp.UpdateTaskParams) (*mcp.EmptyResult, error) {
	rec, jerr := s.findTask(ctx, r, p.TaskID)
	if jerr != nil {
		return nil, jerr
	}
	for k, v := range p.InputResponses {
		if len(v) == 0 || v[0] != '{' {
			return nil, jsonrpc.NewError(jsonrpc.CodeInvalidParams, `invalid tasks/update params: inputResponses[%q] must be an object (the result of the request asked), not %s`, k, wirejson.KindOf(v))
		}
	}
	if rec.Status.Terminal() {
		return &mcp.EmptyResult{}, nil
	}
	if rt := s.tasks.lookup(rec.ID); rt != nil {
		rt.answer(p.InputResponses)
	}
	return &mcp.EmptyResult{}, nil
}

// taskResult serves 2025-era tasks/result: it waits for the task to end,
// then answers exactly as the plain call would have, with the related-task
// _meta. While it waits, the task's requests to the client go out on its
// stream.
func (s *Server) taskResult(ctx context.Context, r *Request, p *mcp.TaskIDParams) (any, error) {
	rec, jerr := s.findTask(ctx, r, p.TaskID)
	if jerr != nil {
		return nil, jerr
	}
	if !rec.Status.Terminal() {
		if rt := s.tasks.lookup(rec.ID); rt != nil {
			if r.sender != nil {
				defer rt.waitStream(r.sender)()
			}
			select {
			case <-rt.done:
			case <-ctx.Done():
				return nil, context.Cause(ctx)
			}
		}
		// Stored by another process, or just finished: wait for the store.
		for !rec.Status.Terminal() {
			t := time.NewTimer(s.tasks.cfg.poll)
			select {
			case <-t.C:
			case <-ctx.Done():
				t.Stop()
				return nil, context.Cause(ctx)
			}
			if rec, jerr = s.findTask(ctx, r, p.TaskID); jerr != nil {
				return nil, jerr
			}
		}
	}
	related := map[string]any{"taskId": rec.ID}
	switch {
	case len(rec.Result) > 0:
		raw, err := setMeta(rec.Result, mcp.MetaRelatedTask, related)
		if err != nil {
			return nil, jsonrpc.NewError(jsonrpc.CodeInternalError, "the stored result of task %q is damaged: %v", rec.ID, err)
		}
		return raw, nil
	case rec.Status == mcp.TaskCancelled:
		return nil, jsonrpc.NewError(jsonrpc.CodeInvalidParams, "task %q was cancelled and has no result", rec.ID).
			WithData(map[string]any{"taskId": rec.ID, "status": rec.Status})
	}
	te := taskErrorOf(rec)
	je := &jsonrpc.Error{Code: te.Code, Message: te.Message, Data: te.Data}
	return nil, je
}

// setMeta returns the object raw with _meta[key] = value added.
func setMeta(raw json.RawMessage, key string, value any) (json.RawMessage, error) {
	var obj map[string]json.RawMessage
	if err := wirejson.Unmarshal(raw, &obj); err != nil {
		return nil, err
	}
	meta := map[string]json.RawMessage{}
	if m, ok := obj["_meta"]; ok && string(m) != "null" {
		if err := wirejson.Unmarshal(m, &meta); err != nil {
			return nil, err
		}
	}
	v, err := json.Marshal(value)
	if err != nil {
		return nil, err
	}
	meta[key] = v
	if obj["_meta"], err = json.Marshal(meta); err != nil {
		return nil, err
	}
	return json.Marshal(obj)
}

// listTasks serves 2025-era tasks/list: the caller's tasks, newest first.
// Tasks belong to the authenticated principal; without authentication every
// caller is the same anonymous one and sees every anonymous task (ids stay
// unguessable, but a server whose tasks must be private authenticates).
func (s *Server) listTasks(ctx context.Context, r *Request, p *mcp.ListTasksParams) (*mcp.ListTasksResult, error) {
	page, err := s.tasks.store.List(ctx, ownerOf(r), p.Cursor, s.cfg.pageSize)
	switch {
	case errors.Is(err, taskstore.ErrInvalidCursor):
		return nil, jsonrpc.NewError(jsonrpc.CodeInvalidParams, "invalid tasks/list params: unknown cursor")
	case err != nil:
		return nil, taskStoreError(err)
	}
	out := &mcp.ListTasksResult{Tasks: make([]mcp.Task, 0, len(page.Records)), NextCursor: page.Next}
	for _, rec := range page.Records {
		out.Tasks = append(out.Tasks, toTask(rec))
	}
	return out, nil
}

// taskChanged tells clients a task's status changed: the 2025-era session
// that created it with notifications/tasks/status, and 2026-07-28
// subscriptions naming it with notifications/tasks. Delivery is best effort
// and never blocks the task.
func (s *Server) taskChanged(rec *taskstore.Record, session *Session) {
	if session != nil && session.out != nil {
		params, err := (&mcp.DetailedTask{Task: toTask(rec), Meta: mcp.Meta{mcp.MetaRelatedTask: map[string]any{"taskId": rec.ID}}}).AppendEra(nil, mcp.EraLegacy)
		if err == nil {
			out := session.out
			go func() {
				ctx, cancel := context.WithTimeout(context.Background(), notifyTimeout)
				defer cancel()
				_ = out.Send(ctx, &jsonrpc.Notification{Method: mcp.NotificationTaskStatus, Params: params})
			}()
		}
	}
	var targets []*listener
	s.sessMu.Lock()
	for ss := range s.sessions {
		ss.mu.Lock()
		for l := range ss.listeners {
			if slices.Contains(l.filter.TaskIDs, rec.ID) && l.owner == rec.Owner {
				targets = append(targets, l)
			}
		}
		ss.mu.Unlock()
	}
	s.sessMu.Unlock()
	if len(targets) == 0 {
		return
	}
	d := detailed(rec)
	for _, l := range targets {
		d.Meta = mcp.Meta{mcp.MetaSubscriptionID: l.id.Value()}
		params, err := d.AppendEra(nil, mcp.EraModern)
		if err != nil {
			continue
		}
		w := l.w
		go func() {
			ctx, cancel := context.WithTimeout(context.Background(), notifyTimeout)
			defer cancel()
			_ = w.Send(ctx, &jsonrpc.Notification{Method: mcp.NotificationTasks, Params: params})
		}()
	}
}

// honouredTasks is the part of a subscription's taskIds the server sends
// notifications/tasks for: the caller's own tasks that exist.
func (s *Server) honouredTasks(ctx context.Context, r *Request, ids []string) []string {
	if len(ids) == 0 || s.tasks.store == nil {
		return nil
	}
	var out []string
	for _, id := range ids {
		if len(out) >= maxListenTasks {
			break
		}
		if _, err := s.tasks.store.Get(ctx, ownerOf(r), id); err == nil && !slices.Contains(out, id) {
			out = append(out, id)
		}
	}
	return out
}

// maxListenTasks bounds the task ids one subscription follows.
const maxListenTasks = 100
