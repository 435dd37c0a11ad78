package client

import (
	"time"

	"github.com/toolwire/toolwire/internal/limits"
)

// Limits are the numbers that bound what one client reads, retries and
// answers. A zero field means the default named beside it (or, after an
// earlier WithLimits, leaves what that one set); what a negative value means
// is said per field. Names follow one rule: MaxX is an upper bound on X and
// MinX a lower one (a pair bounds a range), XTimeout a bound on how long X
// may take, and a size in bytes ends in Bytes. How long one request may wait
// for its answer is WithTimeout, which a call may override.
type Limits struct {
	// MaxMessageBytes bounds one incoming message (a JSON body, an SSE
	// event, a stdio line or a message read from a Conn)
	// (DefaultMaxMessageSize, 16 MiB); a larger one fails the request it
	// answers with a transport error. Negative means the default.
	MaxMessageBytes int
	// ProbeTimeout bounds the server/discover probe mcp.EraAuto sends
	// before falling back to initialize, and the wait for the endpoint
	// event that opens a session of the 2024-11-05 HTTP+SSE transport
	// (SSE, HTTP.SSEFallback) (DefaultProbeTimeout, 10 s). Negative
	// means the default.
	ProbeTimeout time.Duration
	// MaxInputRounds bounds the 2026-07-28 input_required round trips of
	// one request (DefaultMaxInputRounds, 8); past it the call fails with
	// a protocol error. Negative means the default.
	MaxInputRounds int
	// MaxPages bounds the pages one listing (tools/list, prompts/list,
	// resources/list, resources/templates/list) follows by nextCursor
	// (DefaultMaxPages, 1000); past it the listing fails with a protocol
	// error. Negative means the default.
	MaxPages int
	// MaxResumes bounds the Last-Event-ID reconnections of one request's
	// 2025-era SSE stream (DefaultMaxResumes, 5). Negative turns
	// resumption off.
	MaxResumes int
	// MinReconnectDelay and MaxReconnectDelay bound the wait before the
	// client reopens an SSE stream the server ended: the standalone GET
	// stream of a 2025-era session and a request's reply stream resumed
	// with Last-Event-ID. The wait starts at the server's SSE retry field
	// (DefaultResumeDelay when it sent none), raised to at least
	// MinReconnectDelay, so that "retry: 0" cannot make the client
	// reconnect in a tight loop, and doubles with each reconnection up to
	// MaxReconnectDelay (a server retry above it is honoured as it is).
	// The standalone stream's doubling starts over only after a stream
	// that stayed open for MaxReconnectDelay or longer. Defaults
	// DefaultMinReconnectDelay (100 ms) and DefaultMaxReconnectDelay
	// (30 s); negative means the default, and a maximum below the minimum
	// is raised to it.
	MinReconnectDelay, MaxReconnectDelay time.Duration
	// MinToolsTTL is the least time the client reuses a tools/list (for the
	// outputSchema check and 2026-07-28 Mcp-Param headers) before listing
	// again, whatever ttlMs the server gives: a ttlMs of 0, which some
	// servers send by default, would otherwise mean listing every page
	// before every call. A notifications/tools/list_changed, a lost
	// session, and a call to a tool the cached listing does not have (once
	// per listing) list again regardless. Default DefaultMinToolsTTL
	// (30 s); negative takes the server's ttlMs as it is.
	MinToolsTTL time.Duration
	// MaxServerRequests bounds the server-to-client requests (legacy:
	// ping, elicitation/create, sampling/createMessage, roots/list) the
	// client answers at once (DefaultMaxServerRequests, 16), each on a
	// goroutine of its own. A request that comes while that many are being
	// answered is not answered, so that a server flooding the client
	// cannot make it start unbounded work: when it came on the reply
	// stream of a call, that call fails at once with a transport error
	// naming the limit; else it is dropped and logged. The 2026-07-28
	// inputRequests of a call are answered on the call's own goroutine
	// and are not counted. Negative means the default.
	MaxServerRequests int
	// MinTaskPoll and MaxTaskPoll bound the wait between two tasks/get
	// while WaitTask polls a 2026-07-28 task (and between the status
	// reports of a 2025-11-25 task, see WithTaskStatus): the server's
	// pollInterval is raised to at least MinTaskPoll and lowered to at
	// most MaxTaskPoll; without a pollInterval DefaultTaskPoll is used,
	// within the bounds. Defaults DefaultMinTaskPoll (50 ms) and
	// DefaultMaxTaskPoll (5 s); negative means the default, and a maximum
	// below the minimum is raised to it.
	MinTaskPoll, MaxTaskPoll time.Duration
}

// WithLimits sets the client's limits. Its zero fields leave the value an
// earlier WithLimits set, or the default, so limits may be given in
// several options.
func WithLimits(l Limits) Option {
	return clientOption(func(c *config) { limits.Overlay(&c.limits, l) })
}
