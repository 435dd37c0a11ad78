package config

import (
	"strings"
	"time"

	"github.com/goccy/go-yaml/ast"

	"github.com/toolwire/toolwire/gateway"
	"github.com/toolwire/toolwire/transport"
)

// Limits is the limits section: what callers, together and each, may hold
// of the gateway. A zero field takes the default its library option
// documents (named on each); every one applies at start, a reload only
// logs that it changed.
type Limits struct {
	// MaxConns bounds the connections each listener (MCP, OTC) holds at
	// once (max_conns; streamable.DefaultMaxConns).
	MaxConns int
	// MaxInFlight bounds the requests served at once (max_in_flight;
	// streamable.DefaultMaxInFlight).
	MaxInFlight int
	// MaxBody bounds one request body (max_body;
	// streamable.DefaultMaxBodyBytes).
	MaxBody int
	// Memory is the budget of request bodies in flight, charged as bytes
	// arrive (memory; transport.DefaultMemoryBudget, shared with the
	// process's other handlers); AnonymousMemory is what callers without
	// credentials may hold of it together and AddressMemory what those
	// from one address may (anonymous_memory, address_memory; half and an
	// eighth of Memory, at least MaxBody).
	Memory, AnonymousMemory, AddressMemory int
	// MinBodyRate is the slowest a body may arrive, in bytes per second,
	// once BodyGrace has passed (min_body_rate, body_grace;
	// streamable.DefaultMinBodyRate, streamable.DefaultBodyGrace); -1
	// (off) leaves only the read timeout.
	MinBodyRate int
	BodyGrace   time.Duration
	// Sessions bounds 2025-11-25 sessions (sessions).
	Sessions SessionLimits
	// Inputs bounds calls waiting for their callers' answers (inputs).
	Inputs gateway.InputLimits
	// UpstreamLists bounds every list followed from an upstream
	// (upstream_lists: max_pages, max_items, max_bytes).
	UpstreamLists gateway.ListLimits
	// MaxExchangedTokens bounds the tokens obtained by token exchange kept
	// per upstream (max_exchanged_tokens;
	// gateway.DefaultMaxExchangedTokens).
	MaxExchangedTokens int
}

// SessionLimits is limits.sessions.
type SessionLimits struct {
	// Max is how many may be open at once (max;
	// streamable.DefaultMaxSessions); PerCaller how many one identity may
	// hold (per_caller; streamable.DefaultMaxSessionsPerPrincipal);
	// Anonymous how many callers without credentials may hold together
	// (anonymous; streamable.DefaultMaxAnonymousSessions).
	Max, PerCaller, Anonymous int
	// IdleTimeout ends a session unused this long (idle_timeout;
	// streamable.DefaultSessionIdleTimeout); UnusedTimeout one never used
	// after initialize (unused_timeout;
	// streamable.DefaultUnusedSessionTimeout).
	IdleTimeout, UnusedTimeout time.Duration
}

// The largest values the limits section accepts (durations other than the
// sessions' are at most MaxTimeout).
const (
	MaxLimitCount    = 1_000_000
	MaxLimitListItem = 10_000_000
	MaxSessionIdle   = 7 * 24 * time.Hour
)

var (
	limitsKeys = []string{"max_conns", "max_in_flight", "max_body", "memory", "anonymous_memory", "address_memory",
		"min_body_rate", "body_grace", "sessions", "inputs", "upstream_lists", "max_exchanged_tokens"}
	sessionLimitKeys = []string{"max", "per_caller", "anonymous", "idle_timeout", "unused_timeout"}
	inputLimitKeys   = []string{"pending", "per_caller", "timeout"}
	listLimitKeys    = []string{"max_pages", "max_items", "max_bytes"}
)

// callerLimits decodes the limits section.
func (d *decoder) callerLimits(n ast.Node, f *File) {
	m, ok := d.Mapping(n, "limits")
	if !ok || m == nil {
		return
	}
	l := &f.Limits
	keys := map[string]ast.Node{}
	// A setter decodes the value v of the key named w into its field.
	type setter func(v ast.Node, w string)
	count := func(hi int64, to *int) setter {
		return func(v ast.Node, w string) {
			if c, ok := d.integer(v, w, 1, hi); ok {
				*to = int(c)
			}
		}
	}
	size := func(to *int) setter {
		return func(v ast.Node, w string) {
			if n, ok := d.size(v, w); ok {
				*to = n
			}
		}
	}
	dur := func(hi time.Duration, to *time.Duration) setter {
		return func(v ast.Node, w string) {
			if t, _, ok := d.duration(v, w, false, func(t time.Duration) error { return checkDurationUpTo(t, hi) }); ok {
				*to = t
			}
		}
	}
	// Each key, by its path below limits (a section's keys as
	// section.key).
	set := map[string]setter{
		"max_conns":        count(MaxLimitCount, &l.MaxConns),
		"max_in_flight":    count(MaxLimitCount, &l.MaxInFlight),
		"max_body":         size(&l.MaxBody),
		"memory":           size(&l.Memory),
		"anonymous_memory": size(&l.AnonymousMemory),
		"address_memory":   size(&l.AddressMemory),
		"min_body_rate": func(v ast.Node, w string) {
			if s, ok := d.str(v, w); ok && s == "off" {
				l.MinBodyRate = -1
				return
			}
			count(MaxMessageSize, &l.MinBodyRate)(v, w)
		},
		"body_grace":               dur(MaxTimeout, &l.BodyGrace),
		"max_exchanged_tokens":     count(MaxLimitCount, &l.MaxExchangedTokens),
		"sessions.max":             count(MaxLimitCount, &l.Sessions.Max),
		"sessions.per_caller":      count(MaxLimitCount, &l.Sessions.PerCaller),
		"sessions.anonymous":       count(MaxLimitCount, &l.Sessions.Anonymous),
		"sessions.idle_timeout":    dur(MaxSessionIdle, &l.Sessions.IdleTimeout),
		"sessions.unused_timeout":  dur(MaxSessionIdle, &l.Sessions.UnusedTimeout),
		"inputs.pending":           count(MaxLimitCount, &l.Inputs.Pending),
		"inputs.per_caller":        count(MaxLimitCount, &l.Inputs.PerCaller),
		"inputs.timeout":           dur(MaxTimeout, &l.Inputs.Timeout),
		"upstream_lists.max_pages": count(MaxLimitCount, &l.UpstreamLists.Pages),
		"upstream_lists.max_items": count(MaxLimitListItem, &l.UpstreamLists.Items),
		"upstream_lists.max_bytes": func(v ast.Node, w string) {
			var b int
			size(&b)(v, w)
			l.UpstreamLists.Bytes = int64(b)
		},
	}
	sections := map[string][]string{"sessions": sessionLimitKeys, "inputs": inputLimitKeys, "upstream_lists": listLimitKeys}
	// Every key is recorded by its path, for the checks below.
	var decode func(m *ast.MappingNode, where string, known []string)
	decode = func(m *ast.MappingNode, where string, known []string) {
		d.fields(m, where, known, func(key string, mv *ast.MappingValueNode) {
			w := where + "." + key
			path := strings.TrimPrefix(w, "limits.")
			keys[path] = mv.Key
			if sub, ok := sections[path]; ok {
				sm, _ := d.Mapping(mv.Value, w)
				decode(sm, w, sub)
				return
			}
			set[path](mv.Value, w)
		})
	}
	decode(m, "limits", limitsKeys)
	// A part larger than its whole would be a limit that never applies:
	// say so rather than let the file promise it.
	within := func(part, whole string, p, w int) {
		if k := keys[part]; k != nil && p > 0 && w > 0 && p > w {
			d.Errorf(k, "limits.%s: %d is more than limits.%s (%d)", part, p, whole, w)
		}
	}
	memory := l.Memory
	if memory == 0 {
		memory = transport.DefaultMemoryBudget
	}
	within("anonymous_memory", "memory", l.AnonymousMemory, memory)
	within("address_memory", "memory", l.AddressMemory, memory)
	within("max_body", "memory", l.MaxBody, memory)
	within("sessions.per_caller", "sessions.max", l.Sessions.PerCaller, l.Sessions.Max)
	within("sessions.anonymous", "sessions.max", l.Sessions.Anonymous, l.Sessions.Max)
	within("inputs.per_caller", "inputs.pending", l.Inputs.PerCaller, l.Inputs.Pending)
	if k := keys["sessions.unused_timeout"]; k != nil && l.Sessions.IdleTimeout > 0 && l.Sessions.UnusedTimeout > l.Sessions.IdleTimeout {
		d.Errorf(k, "limits.sessions.unused_timeout: %v is more than limits.sessions.idle_timeout (%v)",
			l.Sessions.UnusedTimeout, l.Sessions.IdleTimeout)
	}
	if k := keys["body_grace"]; k != nil && l.MinBodyRate < 0 {
		d.Errorf(k, "limits.body_grace: applies only with a min_body_rate (it is off)")
	}
}
