package gateway

import (
	"time"

	"github.com/toolwire/toolwire/internal/limits"
)

// Limits are the numbers that bound how the gateway waits on, retries and
// reads its upstreams, and how many calls wait for their callers' input. A
// zero field means the default named beside it (or, after an earlier
// WithLimits, leaves what that one set); a negative one means the default
// too. Names follow one rule: MaxX is an upper bound on X and MinX a lower
// one, XTimeout a bound on how long X may take, and a size in bytes ends in
// Bytes.
type Limits struct {
	// CallTimeout bounds each upstream call whose Upstream.Timeout is 0
	// (DefaultTimeout, 60 s): the whole call, from sending the request to
	// its last byte of answer.
	CallTimeout time.Duration
	// StartTimeout bounds how long New and Reload wait for new upstreams'
	// first connection attempt before going on without them
	// (DefaultStartTimeout, 30 s). An upstream not ready by then keeps
	// trying.
	StartTimeout time.Duration
	// MinBackoff and MaxBackoff are the reconnection delays: the first
	// retry after MinBackoff, doubling (with jitter) up to MaxBackoff
	// (DefaultMinBackoff, 100 ms; DefaultMaxBackoff, 30 s). A maximum
	// below the minimum is raised to it.
	MinBackoff, MaxBackoff time.Duration
	// MaxCrashes failures (failed connections or lost sessions) within
	// CrashWindow declare an upstream down (DefaultCrashLimit, 5;
	// DefaultCrashWindow, one minute). A down upstream is still retried,
	// every MaxBackoff.
	MaxCrashes  int
	CrashWindow time.Duration
	// MaxIdleConns is how many idle connections to each HTTP upstream are
	// kept for reuse (DefaultUpstreamConns, 256): calls in flight beyond it
	// open new connections that are closed afterwards. It should be at
	// least the number of calls expected in flight to one upstream.
	MaxIdleConns int
	// MaxMessageBytes bounds one message an upstream sends (a JSON body,
	// an SSE event, a stdio line) for upstreams whose
	// Upstream.MaxMessageSize is 0 (DefaultMaxUpstreamMessage, 16 MiB). A
	// larger result fails its call with an isError result naming the
	// upstream and the limit, after at most the limit has been held in
	// memory, so a hostile or broken upstream cannot make the gateway
	// buffer without bound. It wins over a client.Limits.MaxMessageBytes
	// given to WithClientOptions.
	MaxMessageBytes int
	// Inputs bounds the calls waiting for their clients' input
	// (InputLimits; its zero fields mean its defaults). Parked calls never
	// take the upstream session's own capacity for server requests: each
	// upstream client answers Inputs.Pending more of them at once than
	// client.DefaultMaxServerRequests. A non-zero Inputs replaces an
	// earlier one whole.
	Inputs InputLimits
	// Lists bounds each list the gateway follows from an upstream
	// (ListLimits; its zero fields mean its defaults). A non-zero Lists
	// replaces an earlier one whole.
	Lists ListLimits
	// MaxExchangedTokens bounds the tokens obtained by token exchange kept
	// for each upstream with a TokenExchange (DefaultMaxExchangedTokens);
	// past it the least recently used is dropped.
	MaxExchangedTokens int
}

// WithLimits sets the gateway's limits. Its zero fields leave the value an
// earlier WithLimits set, or the default, so limits may be given in
// several options.
func WithLimits(l Limits) Option {
	return option(func(o *options) { limits.Overlay(&o.limits, l) })
}
