package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/toolwire/toolwire/flow"
)

// palette colours the marks of step and test lines; every colour is empty
// when the output is not a terminal, NO_COLOR is set or TERM is dumb.
type palette struct{ green, red, yellow, dim, reset string }

func paletteFor(w io.Writer) palette {
	if !writerIsTerminal(w) || os.Getenv("NO_COLOR") != "" || os.Getenv("TERM") == "dumb" {
		return palette{}
	}
	return palette{green: "\033[32m", red: "\033[31m", yellow: "\033[33m", dim: "\033[2m", reset: "\033[0m"}
}

func (p palette) paint(color, s string) string {
	if color == "" {
		return s
	}
	return color + s + p.reset
}

// writerIsTerminal reports whether w is a terminal (a character device).
func writerIsTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && isTerminal(f)
}

// stepPrinter shows the steps of a running flow, one line each as it ends:
//
//	✓ name (call) 12ms
//	✗ name (assert) 0ms: ERR_ASSERTION: ...
//	- name (if) skipped
//	↻ name (call) retrying: attempt 2
//
// indented by nesting. On a terminal the step that is running is shown on a
// live line below them, with its elapsed time, redrawn until it ends;
// otherwise only the finished lines are written. Events may come from
// several goroutines (for_each with concurrency).
type stepPrinter struct {
	mu      sync.Mutex
	w       io.Writer
	live    bool
	pal     palette
	running []runningStep // in start order
	drawn   bool          // a live line is on the screen
	stop    chan struct{} // ends the redraw ticker
	done    chan struct{}
	closed  bool
}

type runningStep struct {
	ev    flow.Event
	start time.Time
}

// newStepPrinter writes to w; the live line is drawn only when term (the
// writer under w) is a terminal.
func newStepPrinter(w, term io.Writer) *stepPrinter {
	p := &stepPrinter{w: w, live: writerIsTerminal(term), pal: paletteFor(term)}
	if p.live {
		p.stop, p.done = make(chan struct{}), make(chan struct{})
		go p.tick()
	}
	return p
}

// tick redraws the live line so that its elapsed time moves.
func (p *stepPrinter) tick() {
	defer close(p.done)
	t := time.NewTicker(200 * time.Millisecond)
	defer t.Stop()
	for {
		select {
		case <-p.stop:
			return
		case <-t.C:
			p.mu.Lock()
			p.drawLive()
			p.mu.Unlock()
		}
	}
}

// observe is the flow's observer (flow.WithObserver).
func (p *stepPrinter) observe(ev flow.Event) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return
	}
	if ev.Started {
		if ev.Attempt > 1 {
			// A retry: the step is still the one running; say so.
			for i := len(p.running) - 1; i >= 0; i-- {
				if p.running[i].ev.Path == ev.Path {
					p.running[i].ev.Attempt = ev.Attempt
					break
				}
			}
			p.clearLive()
			fmt.Fprintf(p.w, "%s%s %s retrying: attempt %d\n", strings.Repeat("  ", stepDepth(ev.Path)),
				p.pal.paint(p.pal.yellow, "↻"), stepLabel(ev), ev.Attempt)
			p.drawLive()
			return
		}
		p.running = append(p.running, runningStep{ev: ev, start: time.Now()})
		p.drawLive()
		return
	}
	// The latest started instance of this step is the one that ended (a
	// loop body runs the same path once per iteration).
	for i := len(p.running) - 1; i >= 0; i-- {
		if p.running[i].ev.Path == ev.Path {
			p.running = append(p.running[:i], p.running[i+1:]...)
			break
		}
	}
	p.clearLive()
	fmt.Fprintln(p.w, p.line(ev))
	p.drawLive()
}

// line is the finished line of a step.
func (p *stepPrinter) line(ev flow.Event) string {
	indent := strings.Repeat("  ", stepDepth(ev.Path))
	what := stepLabel(ev)
	var s string
	switch ev.Status {
	case flow.StatusOK:
		s = fmt.Sprintf("%s %s %s", p.pal.paint(p.pal.green, "✓"), what, fmtDuration(ev.Duration))
	case flow.StatusSkipped:
		s = p.pal.paint(p.pal.dim, fmt.Sprintf("- %s skipped", what))
	case flow.StatusCaught:
		s = fmt.Sprintf("%s %s %s, error caught", p.pal.paint(p.pal.yellow, "✓"), what, fmtDuration(ev.Duration))
		if ev.Err != nil {
			s += ": " + oneLine(ev.Err.Code+": "+ev.Err.Message, 160)
		}
	default:
		s = fmt.Sprintf("%s %s %s", p.pal.paint(p.pal.red, "✗"), what, fmtDuration(ev.Duration))
		if ev.Err != nil {
			s += ": " + oneLine(ev.Err.Code+": "+ev.Err.Message, 160)
		}
	}
	if ev.Attempt > 1 {
		s += fmt.Sprintf(" (%d attempts)", ev.Attempt)
	}
	return indent + s
}

// stepLabel names a step: its name, or its path when it has none, its
// kind and what it addresses (the tool of a call, the URI of a read...).
func stepLabel(ev flow.Event) string {
	name := ev.Name
	if name == "" {
		name = ev.Path
	}
	if ev.Target != "" {
		return fmt.Sprintf("%s (%s %s)", name, ev.Kind, ev.Target)
	}
	return fmt.Sprintf("%s (%s)", name, ev.Kind)
}

// stepDepth is how deeply a step is nested: steps[1] is 0,
// steps[1].then[0] is 1.
func stepDepth(path string) int { return strings.Count(path, ".") }

// drawLive shows the latest running step on the live line (mu held).
func (p *stepPrinter) drawLive() {
	if !p.live {
		return
	}
	if len(p.running) == 0 {
		p.clearLive()
		return
	}
	// The latest step, after the steps it is nested in; any others
	// running (for_each with concurrency) are counted.
	r := p.running[len(p.running)-1]
	var chain []string
	others := 0
	for _, o := range p.running[:len(p.running)-1] {
		if strings.HasPrefix(r.ev.Path, o.ev.Path+".") {
			name := o.ev.Name
			if name == "" {
				name = o.ev.Path
			}
			chain = append(chain, name)
		} else {
			others++
		}
	}
	chain = append(chain, stepLabel(r.ev))
	line := fmt.Sprintf("%s %s %s", p.pal.paint(p.pal.dim, "…"), strings.Join(chain, " › "), fmtDuration(time.Since(r.start)))
	if r.ev.Attempt > 1 {
		line += fmt.Sprintf(" (attempt %d)", r.ev.Attempt)
	}
	if others > 0 {
		line += fmt.Sprintf(" (+%d more running)", others)
	}
	fmt.Fprintf(p.w, "\r\033[K%s", line)
	p.drawn = true
}

func (p *stepPrinter) clearLive() {
	if p.drawn {
		fmt.Fprint(p.w, "\r\033[K")
		p.drawn = false
	}
}

// close stops the live line and clears it.
func (p *stepPrinter) close() {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return
	}
	p.closed = true
	p.clearLive()
	p.mu.Unlock()
	if p.stop != nil {
		close(p.stop)
		<-p.done
	}
}

// fmtDuration prints a duration as milliseconds below a second, else as
// seconds with two decimals.
func fmtDuration(d time.Duration) string {
	if d < time.Second {
		return fmt.Sprintf("%dms", d.Milliseconds())
	}
	return fmt.Sprintf("%.2fs", d.Seconds())
}

// describeFlowError explains a flow's uncaught error on several lines, each
// prefixed with indent: the code and message, the failing step and its
// place in file, and for an assertion the expected and actual values (for
// other errors their data).
func describeFlowError(file string, e *flow.Error, indent string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s%s", indent, e.Code)
	if e.Message != "" {
		fmt.Fprintf(&b, ": %s", e.Message)
	}
	b.WriteString("\n")
	if e.Step != "" || e.Pos.Line > 0 {
		fmt.Fprintf(&b, "%sstep: %s", indent, dash(e.Step))
		if e.Pos.Line > 0 {
			fmt.Fprintf(&b, " at %s:%d:%d", file, e.Pos.Line, e.Pos.Column)
		}
		b.WriteString("\n")
	}
	if e.Code == flow.CodeAssertion {
		if m, ok := e.Data.(map[string]any); ok {
			if op, ok := m["operator"]; ok {
				fmt.Fprintf(&b, "%soperator: %s\n", indent, compactJSON(op, false))
			}
			fmt.Fprintf(&b, "%sexpected: %s\n", indent, compactJSON(m["expected"], true))
			fmt.Fprintf(&b, "%sactual:   %s\n", indent, compactJSON(m["actual"], true))
			return b.String()
		}
	}
	if e.Data != nil {
		fmt.Fprintf(&b, "%sdata: %s\n", indent, compactJSON(e.Data, true))
	}
	return b.String()
}

// compactJSON prints v as one line of JSON (strings quoted when quote is
// set), shortened past 2,000 characters.
func compactJSON(v any, quote bool) string {
	if s, ok := v.(string); ok && !quote {
		return s
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	const max = 2000
	if len(b) > max {
		return string(b[:max]) + "…"
	}
	return string(b)
}
