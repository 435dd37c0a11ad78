package flow

import (
	"time"

	"github.com/goccy/go-yaml/ast"

	"github.com/toolwire/toolwire/internal/backoff"
)

// Retry defaults, as the format documents them.
const (
	DefaultBackoff    = 100 * time.Millisecond
	DefaultFactor     = 2.0
	DefaultMaxBackoff = 5 * time.Second
)

// retryKeys are the keys of a step's retry policy.
var retryKeys = []string{"attempts", "backoff", "factor", "max_backoff", "jitter", "non_retryable"}

func (p *parser) retry(n ast.Node) *Retry {
	r := &Retry{Attempts: 1, Backoff: DefaultBackoff, Factor: DefaultFactor, MaxBackoff: DefaultMaxBackoff, Jitter: true}
	fields, _ := p.mapping(n, "retry")
	for _, f := range fields {
		switch f.key {
		case "attempts":
			if a, ok := p.intVal(f.v, "retry.attempts"); ok {
				if a < 1 || a > MaxAttempts {
					p.Errorf(f.v, "retry.attempts %d: want 1 to %d", a, MaxAttempts)
				}
				r.Attempts = a
			}
		case "backoff":
			if d, ok := p.duration(f.v, "retry.backoff"); ok {
				r.Backoff = d
			}
		case "max_backoff":
			if d, ok := p.duration(f.v, "retry.max_backoff"); ok {
				r.MaxBackoff = d
			}
		case "factor":
			switch v := f.v.(type) {
			case *ast.IntegerNode, *ast.FloatNode:
				x := p.value(v, 1)
				fv, _ := number(x.lit)
				if fv < 1 || fv > 100 {
					p.Errorf(f.v, "retry.factor %v: want 1 to 100", fv)
				}
				r.Factor = fv
			default:
				p.Errorf(f.v, "retry.factor: want a number")
			}
		case "jitter":
			if b, ok := f.v.(*ast.BoolNode); ok {
				r.Jitter = b.Value
			} else {
				p.Errorf(f.v, "retry.jitter: want true or false")
			}
		case "non_retryable":
			items, _ := p.List(f.v, "retry.non_retryable")
			for _, it := range items {
				if c, ok := p.Scalar(it, "code"); ok {
					if !codeRE.MatchString(c) {
						p.Errorf(it, "retry.non_retryable: code %q: want [A-Z][A-Z0-9_]*", c)
					}
					r.NonRetryable = append(r.NonRetryable, c)
				}
			}
		default:
			p.unknown(f, "retry", retryKeys...)
		}
	}
	return r
}

// retryable reports whether an error with code may be tried again.
func (r *Retry) retryable(code string) bool {
	if code == CodeCancelled {
		return false
	}
	for _, c := range r.NonRetryable {
		if c == code {
			return false
		}
	}
	return true
}

// delay is the wait before attempt n+1 (n >= 1): backoff * factor^(n-1),
// at most MaxBackoff, with full jitter when on.
func (r *Retry) delay(n int) time.Duration {
	p := backoff.Policy{Initial: r.Backoff, Max: r.MaxBackoff, Factor: r.Factor}
	if r.Jitter {
		p.Jitter = backoff.FullJitter
	}
	return p.Delay(n)
}
