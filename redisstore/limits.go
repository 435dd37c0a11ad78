package redisstore

import (
	"time"

	"github.com/toolwire/toolwire/internal/limits"
)

// Limits are the numbers that bound the package's use of Redis: how long
// one command may take and how many connections it holds (the Client's),
// what the event store keeps (Client.EventStore's) and what the task store
// holds (Client.TaskStore's). A zero or negative field means the default
// named beside it (or, after an earlier WithLimits, leaves what that one
// set). Names follow one rule: MaxX is an upper bound on X, XTimeout a bound
// on how long X may take, XInterval a period, XTTL a lifetime, and a size in
// bytes says Bytes.
type Limits struct {
	// CommandTimeout bounds every operation on Redis, from waiting for a
	// pooled connection to reading the reply (DefaultTimeout, 2 s); past
	// it the operation fails and the client counts Redis as unavailable.
	CommandTimeout time.Duration
	// MaxConns is how many connections the client keeps to Redis (the
	// URL's pool_size parameter, else DefaultPoolSize, 32).
	MaxConns int
	// HealthInterval is how often a background PING checks Redis
	// (DefaultHealthInterval, 1 s), so that Healthy turns false while
	// Redis is down even when no request runs, and true again soon after
	// it is back.
	HealthInterval time.Duration

	// MaxEventsPerStream bounds the events kept per stream
	// (DefaultMaxEventsPerStream); past it the stream's oldest events are
	// evicted, and a client resuming from before them gets ErrEventsLost.
	MaxEventsPerStream int
	// MaxBytesPerSession bounds the event data kept per session
	// (DefaultMaxBytesPerSession); past it the oldest events of the
	// session's largest stream are evicted, as in the memory store. An
	// event larger than the bound is evicted at once.
	MaxBytesPerSession int
	// EventTTL is how long a session's events outlive its last Append
	// (DefaultEventTTL, one hour), so that the events of sessions no
	// replica dropped (a replica crashed) vanish on their own. Redis keeps
	// it to the millisecond.
	EventTTL time.Duration

	// MaxTasks bounds how many tasks the task store holds across all
	// replicas (taskstore.DefaultMaxTasks), expired ones counting until
	// swept; at the bound Create deletes up to 500 expired tasks and, if
	// none was, fails with taskstore.ErrFull. Replicas should agree on it.
	MaxTasks int
	// LeaseTTL is how long the replica's lease outlives its last refresh
	// (DefaultLeaseTTL, at least MinLeaseTTL): other replicas fail the
	// tasks of a replica about this long after it died. It should well
	// exceed CommandTimeout.
	LeaseTTL time.Duration
}

// LimitsOption sets Limits. It is an Option (CommandTimeout, MaxConns,
// HealthInterval), an EventStoreOption (MaxEventsPerStream,
// MaxBytesPerSession, EventTTL) and a TaskStoreOption (MaxTasks,
// LeaseTTL); one value may be passed to all three.
type LimitsOption struct{ l Limits }

// WithLimits sets the limits of the client, its event store or its task
// store, as passed. Its zero fields leave the value an earlier WithLimits
// set, or the default, so limits may be given in several options.
func WithLimits(l Limits) LimitsOption { return LimitsOption{l} }

func (o LimitsOption) applyClient(c *clientConfig) {
	limits.SetPositive(&c.timeout, o.l.CommandTimeout)
	limits.SetPositive(&c.poolSize, o.l.MaxConns)
	limits.SetPositive(&c.healthInterval, o.l.HealthInterval)
}

func (o LimitsOption) applyEventStore(e *eventLimits) {
	limits.SetPositive(&e.maxEventsPerStream, o.l.MaxEventsPerStream)
	limits.SetPositive(&e.maxBytesPerSession, o.l.MaxBytesPerSession)
	limits.SetPositive(&e.ttl, o.l.EventTTL)
}

func (o LimitsOption) applyTaskStore(c *taskConfig) {
	limits.SetPositive(&c.maxTasks, o.l.MaxTasks)
	if o.l.LeaseTTL > 0 {
		c.leaseTTL = max(o.l.LeaseTTL, MinLeaseTTL)
	}
}
