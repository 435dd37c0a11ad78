package flow

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"cel.dev/cel-go/interpreter"

	"github.com/toolwire/toolwire/internal/backoff"
)

// Status is how a step ended.
type Status string

// The statuses of a step.
const (
	StatusOK      Status = "ok"
	StatusFailed  Status = "failed"
	StatusSkipped Status = "skipped" // its when was false
	StatusCaught  Status = "caught"  // a try whose error a catch handler absorbed
)

// Result is what a run of a flow produced.
type Result struct {
	Flow    string
	Outputs map[string]any
	// Err is the uncaught error; nil when the flow passed.
	Err      *Error
	Steps    []StepReport // every step executed, in order of completion
	Duration time.Duration
}

// StepReport is one executed step.
type StepReport struct {
	Path, Name, Kind string
	Pos              Pos
	Status           Status
	Attempts         int
	Duration         time.Duration
	Err              *Error
}

// Event tells an observer a step started (Started) or ended.
type Event struct {
	Flow, Path, Name, Kind string
	Target                 string // Step.Target: the tool, list, URI or prompt
	Pos                    Pos
	Started                bool
	Status                 Status
	Duration               time.Duration
	Err                    *Error
	Attempt                int
}

// scope is what expressions see while a flow runs: a CEL activation. The
// root holds inputs, env and step results; each for_each iteration and
// catch handler adds a child with its own variables and results.
type scope struct {
	parent *scope
	vars   map[string]any // keys as CEL resolves them: "inputs.x", "steps.s.result", "item"
	store  *varStore      // the root's: the flow variables (vars.<name>)
}

var _ interpreter.Activation = (*scope)(nil)

// ResolveName implements interpreter.Activation.
func (s *scope) ResolveName(name string) (any, bool) {
	if v, ok := strings.CutPrefix(name, "vars."); ok {
		if st := s.varStore(); st != nil {
			return st.get(v)
		}
	}
	for c := s; c != nil; c = c.parent {
		if v, ok := c.vars[name]; ok {
			return v, true
		}
	}
	return nil, false
}

// Parent implements interpreter.Activation; the chain is walked above.
func (s *scope) Parent() interpreter.Activation { return nil }

func (s *scope) child(n int) *scope { return &scope{parent: s, vars: make(map[string]any, n)} }

// run is the state of one run of a flow.
type run struct {
	fl      *Flow
	cfg     *runConfig
	clients *clientSet
	mu      sync.Mutex
	reports []StepReport
	mask    *Masker // the secret inputs' values, masked in what is reported
}

// Run runs the flow. The error is for problems that are not a flow
// failure (bad inputs, a flow that failed its check); a flow that fails
// returns Result.Err.
func (fl *Flow) Run(ctx context.Context, opts ...RunOption) (*Result, error) {
	start := time.Now()
	if fl.env == nil || fl.failed {
		return nil, fmt.Errorf("flow %s: the manifest failed its check; fix the diagnostics Load reported", fl.Name)
	}
	cfg := newRunConfig(opts)
	root, err := fl.rootScope(cfg)
	if err != nil {
		return nil, err
	}
	r := &run{fl: fl, cfg: cfg, mask: fl.Masker(cfg.inputs)}
	r.clients = newClientSet(fl, cfg, root)
	defer r.clients.close()
	res := &Result{Flow: fl.Name}
	if verr := fl.initVars(ctx, root); verr != nil {
		res.Err = verr
	} else if err := r.list(ctx, fl.Steps, root); err != nil {
		res.Err = errorOf(err)
	} else if len(fl.Outputs) > 0 {
		res.Outputs = make(map[string]any, len(fl.Outputs))
		for _, o := range fl.Outputs {
			v, err := o.val.eval(ctx, root)
			if err != nil {
				res.Err = errorOf(err)
				res.Err.Step = "outputs." + o.Name
				res.Err.Pos = o.Pos
				break
			}
			res.Outputs[o.Name] = clone(v) // the caller may change them
		}
	}
	res.Steps = r.reports
	res.Duration = time.Since(start)
	res.mask(r.mask)
	return res, nil
}

// rootScope converts the inputs to their declared types and reads env.
func (fl *Flow) rootScope(cfg *runConfig) (*scope, error) {
	root := &scope{vars: make(map[string]any, len(fl.Inputs)+len(fl.Env)+fl.nsteps)}
	declared := map[string]*Input{}
	for _, in := range fl.Inputs {
		declared[in.Name] = in
	}
	var errs []error
	for k := range cfg.inputs {
		if declared[k] == nil {
			errs = append(errs, fmt.Errorf("unknown input %q", k))
		}
	}
	for _, in := range fl.Inputs {
		s, given := cfg.inputs[in.Name]
		switch {
		case given:
			v, err := parseInput(s, in.Type)
			if err != nil {
				errs = append(errs, fmt.Errorf("input %s: %v", in.Name, err))
				continue
			}
			root.vars["inputs."+in.Name] = v
		case in.Required:
			errs = append(errs, fmt.Errorf("input %s is required (type %s)", in.Name, in.Type))
		default:
			root.vars["inputs."+in.Name] = in.Default
		}
	}
	for _, n := range fl.Env {
		v, _ := cfg.lookupEnv(n)
		root.vars["env."+n] = v
	}
	if len(errs) > 0 {
		return nil, fmt.Errorf("flow %s: %w", fl.Name, errors.Join(errs...))
	}
	return root, nil
}

// parseInput converts a --input string to a declared type; object and
// array take JSON.
func parseInput(s, typ string) (any, error) {
	switch typ {
	case "string":
		return s, nil
	case "integer":
		n, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
		if err != nil {
			return nil, fmt.Errorf("%q is not an integer", s)
		}
		return n, nil
	case "number":
		f, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
		if err != nil {
			return nil, fmt.Errorf("%q is not a number", s)
		}
		return f, nil
	case "boolean":
		b, err := strconv.ParseBool(strings.TrimSpace(s))
		if err != nil {
			return nil, fmt.Errorf("%q is not a boolean", s)
		}
		return b, nil
	}
	v, err := fromJSON([]byte(s))
	if err != nil {
		return nil, fmt.Errorf("want JSON: %v", err)
	}
	return convertInput(v, typ)
}

// convertInput checks a default or parsed value against a declared type.
func convertInput(v any, typ string) (any, error) {
	ok := false
	switch typ {
	case "string":
		_, ok = v.(string)
	case "integer":
		if f, isF := v.(float64); isF && f == float64(int64(f)) {
			v = int64(f)
		}
		_, ok = v.(int64)
	case "number":
		if n, isN := number(v); isN {
			v, ok = n, true
		}
	case "boolean":
		_, ok = v.(bool)
	case "object":
		_, ok = v.(map[string]any)
	case "array":
		_, ok = v.([]any)
	default:
		ok = true
	}
	if !ok {
		return nil, fmt.Errorf("%s is not of type %s", formatValue(v), typ)
	}
	return v, nil
}

// list runs steps in order; the first error ends it.
func (r *run) list(ctx context.Context, steps []*Step, sc *scope) error {
	for _, s := range steps {
		if err := r.step(ctx, s, sc); err != nil {
			return err
		}
	}
	return nil
}

// lastResult is the result of the last step of a list that ran.
func lastResult(steps []*Step, sc *scope) any {
	for i := len(steps) - 1; i >= 0; i-- {
		if v, ok := sc.vars[steps[i].resultKey()]; ok {
			return v
		}
	}
	return nil
}

// resultKey is the name CEL resolves for steps.<name>.result; unnamed
// steps get a key no expression can name, so loops can still collect them.
func (s *Step) resultKey() string {
	if s.Name != "" {
		return "steps." + s.Name + ".result"
	}
	return "#" + s.Path
}

// timeoutCause marks the context of one step's timeout, so that the step
// (and only it) turns the expiry into ERR_STEP_TIMEOUT.
type timeoutCause struct{ s *Step }

func (t *timeoutCause) Error() string {
	return fmt.Sprintf("step %s exceeded its timeout of %v", t.s.describe(), t.s.Timeout)
}

// step runs one step: when, retries, timeout, events and the report.
func (r *run) step(ctx context.Context, s *Step, sc *scope) error {
	start := time.Now()
	r.emit(Event{Path: s.Path, Name: s.Name, Kind: s.Kind, Target: s.Target(), Pos: s.Pos, Started: true, Attempt: 1})
	if s.when != nil {
		ok, err := r.cond(ctx, s.when, sc)
		if err != nil {
			return r.finish(s, start, 1, StatusFailed, err)
		}
		if !ok {
			return r.finish(s, start, 0, StatusSkipped, nil)
		}
	}
	attempts := 1
	if s.Retry != nil {
		attempts = s.Retry.Attempts
	}
	var err error
	var status Status
	n := 0
	for n = 1; n <= attempts; n++ {
		if n > 1 {
			r.emit(Event{Path: s.Path, Name: s.Name, Kind: s.Kind, Target: s.Target(), Pos: s.Pos, Started: true, Attempt: n})
		}
		var res any
		res, status, err = r.attempt(ctx, s, sc)
		if err == nil {
			sc.vars[s.resultKey()] = res
			break
		}
		if n == attempts || ctx.Err() != nil || !s.Retry.retryable(errorOf(err).Code) {
			break
		}
		if serr := backoff.Sleep(ctx, s.Retry.delay(n)); serr != nil {
			break
		}
	}
	if err != nil {
		status = StatusFailed
		err = stoppedFromOutside(ctx, err)
	} else if s.expect != nil {
		if fe := s.expect.check(s, time.Since(start)); fe != nil {
			status, err = StatusFailed, fe
		}
	}
	return r.finish(s, start, min(n, attempts), status, err)
}

// stoppedFromOutside names why a step failed when its context ended around
// it: an enclosing step's timeout is ERR_STEP_TIMEOUT naming that step, the
// run's end ERR_CANCELLED; not whatever the interrupted work reported (a
// client call cut short says ERR_MCP_TRANSPORT).
func stoppedFromOutside(ctx context.Context, err error) error {
	if ctx.Err() == nil {
		return err
	}
	if errorOf(err).Code == CodeStepTimeout {
		return err // a timeout of its own, or of a step inside, came first
	}
	if tc, ok := context.Cause(ctx).(*timeoutCause); ok {
		return &Error{Code: CodeStepTimeout, Message: tc.Error()}
	}
	return &Error{Code: CodeCancelled, Message: "the run was cancelled: " + context.Cause(ctx).Error()}
}

// attempt runs a step once, under its timeout.
func (r *run) attempt(ctx context.Context, s *Step, sc *scope) (any, Status, error) {
	if s.Timeout > 0 {
		cause := &timeoutCause{s}
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeoutCause(ctx, s.Timeout, cause)
		defer cancel()
		res, st, err := r.do(ctx, s, sc)
		if err != nil && context.Cause(ctx) == cause {
			// This step's own timeout: the error is its, whatever the
			// steps inside reported as they were cut short.
			return nil, StatusFailed, &Error{Code: CodeStepTimeout, Message: cause.Error()}
		}
		return res, st, err
	}
	return r.do(ctx, s, sc)
}

// finish reports a step's end, placing its error at the step.
func (r *run) finish(s *Step, start time.Time, attempts int, status Status, err error) error {
	var fe *Error
	if err != nil {
		fe = errorOf(err)
		if fe.Step == "" {
			fe.Step, fe.Pos = s.describe(), s.Pos
		}
		err = fe
	}
	d := time.Since(start)
	rep := StepReport{Path: s.Path, Name: s.Name, Kind: s.Kind, Pos: s.Pos, Status: status, Attempts: attempts, Duration: d, Err: fe}
	r.mu.Lock()
	r.reports = append(r.reports, rep)
	r.mu.Unlock()
	r.emit(Event{Path: s.Path, Name: s.Name, Kind: s.Kind, Target: s.Target(), Pos: s.Pos, Status: status, Duration: d, Err: fe, Attempt: attempts})
	return err
}

func (r *run) emit(e Event) {
	if r.cfg.observer != nil {
		e.Flow = r.fl.Name
		e.Err = r.mask.MaskError(e.Err)
		r.cfg.observer(e)
	}
}

// cond evaluates a boolean condition (a literal or one expression).
func (r *run) cond(ctx context.Context, v *value, sc *scope) (bool, error) {
	x, err := v.eval(ctx, sc)
	if err != nil {
		return false, err
	}
	b, ok := x.(bool)
	if !ok {
		return false, &Error{Code: CodeExpression, Message: fmt.Sprintf("%d:%d: want a boolean, got %s", v.pos.Line, v.pos.Column, formatValue(x))}
	}
	return b, nil
}

// clone deep-copies a flow value, so that literals of the manifest never
// leave a run shared with its caller.
func clone(v any) any {
	if out, ok := mapElems(v, clone); ok {
		return out
	}
	return v
}

// mapElems returns a new list or object of f applied to each element or
// member of v, with ok false when v is neither.
func mapElems(v any, f func(any) any) (any, bool) {
	switch x := v.(type) {
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = f(e)
		}
		return out, true
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = f(e)
		}
		return out, true
	}
	return nil, false
}
