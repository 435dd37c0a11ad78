package server

import (
	"time"

	"github.com/toolwire/toolwire/internal/limits"
)

// Limits are the numbers that bound what a server lists, keeps and accepts:
// pages, schema violations reported, tasks, 2026-07-28 input rounds and
// resource URIs and subscriptions. A zero field means the default named
// beside it (or, after an earlier WithLimits, leaves what that one set);
// what a negative value means is said per field. Names follow one rule: MaxX
// is an upper bound on X, XInterval a period, XTTL a lifetime, and a size in
// bytes ends in Bytes. How long one tools/call may run is WithTimeout.
type Limits struct {
	// PageSize is how many items one page of tools/list, prompts/list,
	// resources/list, resources/templates/list or tasks/list holds
	// (DefaultPageSize, 100). Negative means the default.
	PageSize int
	// MaxViolations bounds the violations of its inputSchema the isError
	// result of a tools/call with invalid arguments lists
	// (schema.DefaultMaxViolations, 100); the text ends "and more" when
	// there were more. It bounds the answer, and the memory spent building
	// it, for arguments that break the schema in every element. Negative
	// means the default.
	MaxViolations int

	// TaskTTL is how long a task and its result are kept after creation
	// when the client asks for nothing else (DefaultTaskTTL, one hour), and
	// MaxTaskTTL the most a client may ask for (DefaultMaxTaskTTL,
	// 24 hours); a TaskTTL above MaxTaskTTL is MaxTaskTTL. A task still
	// running at its TTL is stopped and marked failed. Negative means the
	// default.
	TaskTTL, MaxTaskTTL time.Duration
	// TaskPollInterval is the polling pace suggested to clients
	// (DefaultTaskPollInterval, 500 ms). Negative means the default.
	TaskPollInterval time.Duration
	// TaskSweepInterval is how often expired tasks are deleted from the
	// store (DefaultTaskSweep, one minute). Negative means the default.
	TaskSweepInterval time.Duration
	// MaxRunningTasks bounds the tasks running at once in this process
	// (DefaultMaxRunningTasks, 1000); a call that would start one more is
	// refused with jsonrpc.CodeOverloaded. Negative means the default.
	MaxRunningTasks int

	// InputStateTTL is how long a requestState is accepted after it was
	// made (DefaultInputStateTTL, 10 minutes). Negative means the default.
	InputStateTTL time.Duration
	// MaxInputRounds bounds the input_required rounds of one request
	// (DefaultMaxInputRounds, 16); past it the request fails with -32602.
	// Negative means the default.
	MaxInputRounds int
	// MaxInputStateBytes bounds a sealed requestState
	// (DefaultMaxInputStateBytes, 256 KiB); a handler whose answers would
	// not fit fails with -32603. Negative means the default.
	MaxInputStateBytes int
	// MaxUsedInputStates bounds how many used requestStates the server
	// remembers (DefaultInputReplayMemory, 100,000). A state is accepted
	// once: its replay is refused while remembered; the oldest are
	// forgotten first, and every state expires after InputStateTTL anyway.
	// Replays are detected per server process. Negative means the default.
	MaxUsedInputStates int

	// MaxURILength bounds the URIs matched against resource templates, in
	// resources/read and in a subscription filter's resourceSubscriptions
	// (DefaultMaxURILength, 8 KiB). Matching takes time linear in the
	// URI's length; the bound keeps one request's cost small. A longer
	// resources/read URI that is no static resource is refused with
	// -32602. Negative means the default.
	MaxURILength int
	// MaxSubscriptions bounds how many URIs one 2025-era session may be
	// subscribed to with resources/subscribe (DefaultMaxSubscriptions,
	// 1,000; one more is refused with -32602), and how many
	// resourceSubscriptions one 2026-07-28 subscriptions/listen request is
	// acknowledged for (the acknowledgement lists the first ones).
	// Negative means the default.
	MaxSubscriptions int
}

// WithLimits sets the server's limits. Its zero fields leave the value an
// earlier WithLimits set, or the default, so limits may be given in
// several options.
func WithLimits(l Limits) Option {
	return serverOption(func(c *config) {
		if l.PageSize != 0 {
			c.pageSize = l.PageSize
			if c.pageSize < 1 {
				c.pageSize = DefaultPageSize
			}
		}
		limits.Set(&c.maxViolations, l.MaxViolations)
		limits.Set(&c.tasks.ttl, l.TaskTTL)
		limits.Set(&c.tasks.maxTTL, l.MaxTaskTTL)
		limits.Set(&c.tasks.poll, l.TaskPollInterval)
		limits.Set(&c.tasks.sweep, l.TaskSweepInterval)
		limits.Set(&c.tasks.maxRunning, l.MaxRunningTasks)
		limits.Set(&c.input.ttl, l.InputStateTTL)
		limits.Set(&c.input.maxRounds, l.MaxInputRounds)
		limits.Set(&c.input.maxBytes, l.MaxInputStateBytes)
		limits.Set(&c.input.memory, l.MaxUsedInputStates)
		limits.Set(&c.resources.maxURILength, l.MaxURILength)
		limits.Set(&c.resources.maxSubscriptions, l.MaxSubscriptions)
	})
}
