package flow

import (
	"context"
	"fmt"
	"sync"

	"github.com/toolwire/toolwire/client"
	"github.com/toolwire/toolwire/internal/backoff"
)

// do runs one attempt of a step by its kind; the result is what
// steps.<name>.result holds.
func (r *run) do(ctx context.Context, s *Step, sc *scope) (any, Status, error) {
	switch s.Kind {
	case "call":
		return r.call(ctx, s, sc)
	case "list", "read", "prompt":
		c, err := r.clients.get(ctx, s.client)
		if err != nil {
			return nil, StatusFailed, err
		}
		v, err := r.mcpOther(ctx, c, s, sc)
		return v, status(err), err
	case "value":
		v, err := s.val.eval(ctx, sc)
		return v, status(err), err
	case "set":
		v, err := r.set(ctx, s, sc)
		return v, status(err), err
	case "if":
		ok, err := r.cond(ctx, s.cond, sc)
		if err != nil {
			return nil, StatusFailed, err
		}
		branch := s.els
		if ok {
			branch = s.then
		}
		err = r.list(ctx, branch, sc)
		return nil, status(err), err
	case "switch":
		x, err := s.cond.eval(ctx, sc)
		if err != nil {
			return nil, StatusFailed, err
		}
		key := formatValue(x)
		branch := s.def
		for _, c := range s.cases {
			if c.key == key {
				branch = c.steps
				break
			}
		}
		err = r.list(ctx, branch, sc)
		return nil, status(err), err
	case "for_each":
		v, err := r.forEach(ctx, s, sc)
		return v, status(err), err
	case "while":
		v, err := r.while(ctx, s, sc)
		return v, status(err), err
	case "try":
		return r.try(ctx, s, sc)
	case "throw":
		return nil, StatusFailed, r.throw(ctx, s, sc)
	case "assert":
		err := s.assert.run(ctx, s, sc, r.fl.file.Path)
		return nil, status(err), err
	case "sleep":
		err := backoff.Sleep(ctx, s.sleep)
		return nil, status(err), err
	}
	return nil, StatusFailed, fmt.Errorf("unknown step kind %q", s.Kind)
}

func status(err error) Status {
	if err != nil {
		return StatusFailed
	}
	return StatusOK
}

// call runs tools/call. An isError result throws ERR_MCP_TOOL_ERROR
// unless tool_errors is result.
func (r *run) call(ctx context.Context, s *Step, sc *scope) (any, Status, error) {
	c, err := r.clients.get(ctx, s.client)
	if err != nil {
		return nil, StatusFailed, err
	}
	toolV, err := s.tool.eval(ctx, sc)
	if err != nil {
		return nil, StatusFailed, err
	}
	tool, ok := toolV.(string)
	if !ok {
		return nil, StatusFailed, &Error{Code: CodeExpression, Message: "tool: want a string, got " + formatValue(toolV)}
	}
	var args any
	if s.args != nil {
		a, err := s.args.eval(ctx, sc)
		if err != nil {
			return nil, StatusFailed, err
		}
		if a != nil {
			if _, ok := a.(map[string]any); !ok {
				return nil, StatusFailed, &Error{Code: CodeExpression, Message: "arguments: want a mapping, got " + formatValue(a)}
			}
			args = a
		}
	}
	res, err := c.CallTool(ctx, tool, args)
	if err != nil {
		if res != nil && res.IsError && s.toolErrors == "result" && client.CodeOf(err) == client.CodeToolError {
			return callValue(res, true), StatusOK, nil
		}
		return nil, StatusFailed, err
	}
	return callValue(res, s.toolErrors == "result"), StatusOK, nil
}

// forEach runs the body once per item, concurrency at a time; the result
// is each iteration's last step result, in item order.
func (r *run) forEach(ctx context.Context, s *Step, sc *scope) (any, error) {
	x, err := s.cond.eval(ctx, sc)
	if err != nil {
		return nil, err
	}
	items, ok := x.([]any)
	if !ok {
		return nil, &Error{Code: CodeExpression, Message: fmt.Sprintf("%d:%d: for_each: want a list, got %s", s.cond.pos.Line, s.cond.pos.Column, formatValue(x))}
	}
	out := make([]any, len(items))
	iter := func(ctx context.Context, i int) error {
		isc := sc.child(len(s.body) + 2)
		isc.vars[s.as], isc.vars["index"] = items[i], int64(i)
		if err := r.list(ctx, s.body, isc); err != nil {
			return err
		}
		out[i] = lastResult(s.body, isc)
		return nil
	}
	if s.conc <= 1 || len(items) <= 1 {
		for i := range items {
			if err := iter(ctx, i); err != nil {
				return nil, err
			}
		}
		return out, nil
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		wg    sync.WaitGroup
		once  sync.Once
		first error
		next  = make(chan int)
	)
	for range min(s.conc, len(items)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				if err := iter(ctx, i); err != nil {
					once.Do(func() { first = err; cancel() })
				}
			}
		}()
	}
feed:
	for i := range items {
		select {
		case next <- i:
		case <-ctx.Done():
			break feed
		}
	}
	close(next)
	wg.Wait()
	if first != nil {
		return nil, first
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return out, nil
}

// while runs the body while the condition holds and, after each
// iteration, until its until: condition (seeing that iteration's steps)
// holds; at most max_iterations times. The result is the number of
// iterations.
func (r *run) while(ctx context.Context, s *Step, sc *scope) (any, error) {
	n := 0
	for {
		ok, err := r.cond(ctx, s.cond, sc)
		if err != nil {
			return nil, err
		}
		if !ok {
			return int64(n), nil
		}
		if n == s.maxIter {
			return nil, &Error{Code: CodeLoopLimit, Message: fmt.Sprintf("while ran %d iterations (max_iterations) and its condition still holds", n)}
		}
		n++
		isc := sc.child(len(s.body))
		if err := r.list(ctx, s.body, isc); err != nil {
			return nil, err
		}
		if s.until != nil {
			done, err := r.cond(ctx, s.until, isc)
			if err != nil {
				return nil, err
			}
			if done {
				return int64(n), nil
			}
		}
	}
}

// try runs the body; the first handler whose codes match handles an error
// (absorbing it when it completes); finally always runs and its error wins.
func (r *run) try(ctx context.Context, s *Step, sc *scope) (any, Status, error) {
	st := StatusOK
	err := r.list(ctx, s.try, sc)
	var failed *Error
	if err != nil {
		failed = errorOf(err)
		for _, h := range s.catches {
			if !h.matches(failed.Code) {
				continue
			}
			old, had := sc.vars["error"]
			sc.vars["error"] = failed.value()
			err = r.list(ctx, h.steps, sc)
			restore(sc, "error", old, had)
			if err == nil {
				st = StatusCaught
			}
			break
		}
	}
	if s.hasFinal {
		old, had := sc.vars["error"]
		if failed != nil {
			sc.vars["error"] = failed.value()
		} else {
			sc.vars["error"] = nil
		}
		ferr := r.list(ctx, s.finally, sc)
		restore(sc, "error", old, had)
		if ferr != nil {
			return nil, StatusFailed, ferr
		}
	}
	if err != nil {
		return nil, StatusFailed, err
	}
	return nil, st, nil
}

func restore(sc *scope, key string, old any, had bool) {
	if had {
		sc.vars[key] = old
	} else {
		delete(sc.vars, key)
	}
}

func (h *catchClause) matches(code string) bool {
	if h.anyCodes {
		return true
	}
	for _, c := range h.codes {
		if c == code {
			return true
		}
	}
	return false
}

// throw raises a user error.
func (r *run) throw(ctx context.Context, s *Step, sc *scope) error {
	cv, err := s.code.eval(ctx, sc)
	if err != nil {
		return err
	}
	code, ok := cv.(string)
	if !ok || !codeRE.MatchString(code) {
		return &Error{Code: CodeExpression, Message: fmt.Sprintf("throw: code %s: want [A-Z][A-Z0-9_]*", formatValue(cv))}
	}
	e := &Error{Code: code}
	if s.message != nil {
		m, err := s.message.eval(ctx, sc)
		if err != nil {
			return err
		}
		e.Message = formatValue(m)
	}
	if s.data != nil {
		d, err := s.data.eval(ctx, sc)
		if err != nil {
			return err
		}
		e.Data = clone(d)
	}
	return e
}
