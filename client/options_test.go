package client

import (
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/toolwire/toolwire"
	"github.com/toolwire/toolwire/jsonrpc"
	"github.com/toolwire/toolwire/mcp"
)

// Both-ways options are one value usable in either list.
var (
	_ Option     = WithTimeout(0)
	_ CallOption = WithTimeout(0)
	_ Option     = WithOutputValidation(false)
	_ CallOption = WithOutputValidation(false)
)

func TestConfigDefaults(t *testing.T) {
	c := newConfig(nil)
	if c.clientInfo.Name != "toolwire-client" || c.clientInfo.Version != toolwire.Version() {
		t.Errorf("clientInfo = %+v", c.clientInfo)
	}
	if c.era != mcp.EraAuto || c.protocolVersion != "" || c.noValidate {
		t.Errorf("era %v, version %q, noValidate %v", c.era, c.protocolVersion, c.noValidate)
	}
	if c.timeout != DefaultTimeout || c.limits.ProbeTimeout != DefaultProbeTimeout {
		t.Errorf("timeout %v, probe timeout %v", c.timeout, c.limits.ProbeTimeout)
	}
	if c.limits.MaxMessageBytes != DefaultMaxMessageSize || c.limits.MaxInputRounds != DefaultMaxInputRounds ||
		c.limits.MaxPages != DefaultMaxPages || c.limits.MaxResumes != DefaultMaxResumes || c.limits.MaxServerRequests != DefaultMaxServerRequests {
		t.Errorf("limits %d %d %d %d %d", c.limits.MaxMessageBytes, c.limits.MaxInputRounds, c.limits.MaxPages, c.limits.MaxResumes, c.limits.MaxServerRequests)
	}
	if c.logger == nil || c.logger.Enabled(context.Background(), slog.LevelError) {
		t.Error("the default logger is missing or logs")
	}
	if c.requestHandler != nil || c.onLog != nil || c.onNotification != nil || c.middleware != nil || c.receiving != nil {
		t.Error("a handler or middleware is set by default")
	}
}

func TestConfigOutOfRange(t *testing.T) {
	c := newConfig([]Option{
		WithClientInfo(mcp.Implementation{Version: "9"}), // no name: the default
		WithLimits(Limits{
			ProbeTimeout:      -time.Second,
			MaxMessageBytes:   -1,
			MaxInputRounds:    -1,
			MaxPages:          -1,
			MaxServerRequests: -1,
		}),
		WithLogger(nil),
	})
	if c.clientInfo.Name != "toolwire-client" || c.clientInfo.Version != toolwire.Version() {
		t.Errorf("clientInfo = %+v", c.clientInfo)
	}
	if c.limits.ProbeTimeout != DefaultProbeTimeout || c.limits.MaxMessageBytes != DefaultMaxMessageSize ||
		c.limits.MaxInputRounds != DefaultMaxInputRounds || c.limits.MaxPages != DefaultMaxPages || c.limits.MaxServerRequests != DefaultMaxServerRequests || c.logger == nil {
		t.Errorf("negative values not replaced by the defaults: %+v", c)
	}
	for _, tc := range []struct {
		timeout, want        time.Duration
		resumes, wantResumes int
	}{
		{0, DefaultTimeout, 0, DefaultMaxResumes},
		{-1, -1, -1, -1}, // no limit; no resumption
		{time.Second, time.Second, 2, 2},
	} {
		c := newConfig([]Option{WithTimeout(tc.timeout), WithLimits(Limits{MaxResumes: tc.resumes})})
		if c.timeout != tc.want || c.limits.MaxResumes != tc.wantResumes {
			t.Errorf("WithTimeout(%v), WithLimits(Limits{MaxResumes: %d}): timeout %v, resumes %d", tc.timeout, tc.resumes, c.timeout, c.limits.MaxResumes)
		}
	}
}

func TestConfigLaterWinsAndNilIgnored(t *testing.T) {
	l := slog.New(slog.DiscardHandler)
	c := newConfig([]Option{
		nil,
		WithEra(mcp.EraModern), WithEra(mcp.EraLegacy),
		WithProtocolVersion("2025-11-25"), WithProtocolVersion("2025-06-18"),
		WithLimits(Limits{MaxPages: 3}), nil, WithLimits(Limits{MaxPages: 7}),
		WithTimeout(time.Second), WithTimeout(2 * time.Second),
		WithLogger(l),
	})
	if c.era != mcp.EraLegacy || c.protocolVersion != "2025-06-18" || c.limits.MaxPages != 7 || c.timeout != 2*time.Second || c.logger != l {
		t.Errorf("era %v, version %q, pages %d, timeout %v", c.era, c.protocolVersion, c.limits.MaxPages, c.timeout)
	}
	// A value that means "the default" resets an earlier option.
	c = newConfig([]Option{WithTimeout(time.Second), WithTimeout(0), WithLogger(l), WithLogger(nil)})
	if c.timeout != DefaultTimeout || c.logger == l || c.logger == nil {
		t.Errorf("timeout %v: not reset to the default", c.timeout)
	}
	// A zero field of a later WithLimits keeps an earlier one's value.
	c = newConfig([]Option{WithLimits(Limits{MaxPages: 3, MaxResumes: 2}), WithLimits(Limits{MaxResumes: -1})})
	if c.limits.MaxPages != 3 || c.limits.MaxResumes != -1 {
		t.Errorf("pages %d, resumes %d: want 3 and -1", c.limits.MaxPages, c.limits.MaxResumes)
	}
	if c := newConfig([]Option{nil, nil}); c.timeout != DefaultTimeout {
		t.Error("nil options broke the defaults")
	}
}

func TestConfigMiddlewareAccumulates(t *testing.T) {
	var order []string
	mw := func(name string) jsonrpc.Middleware {
		return func(next jsonrpc.MethodHandler) jsonrpc.MethodHandler {
			return func(ctx context.Context, req *jsonrpc.Request) (any, error) {
				order = append(order, name)
				return next(ctx, req)
			}
		}
	}
	mws := []jsonrpc.Middleware{mw("b"), mw("c")}
	c := newConfig([]Option{WithMiddleware(mw("a")), WithMiddleware(mws...), WithReceivingMiddleware(mw("r")), WithMiddleware()})
	mws[0] = mw("changed") // the option holds what it was given, not the caller's slice
	if len(c.middleware) != 3 || len(c.receiving) != 1 {
		t.Fatalf("%d sending, %d receiving middleware", len(c.middleware), len(c.receiving))
	}
	h := jsonrpc.Chain(func(context.Context, *jsonrpc.Request) (any, error) { return nil, nil }, c.middleware...)
	if _, err := h(context.Background(), &jsonrpc.Request{Method: "ping"}); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(order, " "); got != "a b c" {
		t.Errorf("order %q, want a b c (the first outermost)", got)
	}
}

func TestCallConfig(t *testing.T) {
	if cc := newCallConfig(nil); cc.hasTimeout || cc.timeout != 0 || cc.validate != nil || cc.progress != nil {
		t.Errorf("no options: %+v", cc)
	}
	var got []Progress
	cc := newCallConfig([]CallOption{nil, WithTimeout(time.Second), WithOutputValidation(false), WithProgress(func(p Progress) { got = append(got, p) }), nil})
	if !cc.hasTimeout || cc.timeout != time.Second || cc.validate == nil || *cc.validate || cc.progress == nil {
		t.Fatalf("%+v", cc)
	}
	cc.progress(Progress{Progress: 1})
	if len(got) != 1 {
		t.Error("WithProgress did not keep fn")
	}
	for _, tc := range []struct {
		opts    []CallOption
		has     bool
		timeout time.Duration
	}{
		{[]CallOption{WithTimeout(time.Second), WithTimeout(2 * time.Second)}, true, 2 * time.Second},
		{[]CallOption{WithTimeout(-1)}, true, -1},                          // no limit for this call
		{[]CallOption{WithTimeout(0)}, false, 0},                           // the client's timeout
		{[]CallOption{WithTimeout(time.Second), WithTimeout(0)}, false, 0}, // later wins: back to the client's
		{[]CallOption{WithProgress(nil)}, false, 0},
	} {
		cc := newCallConfig(tc.opts)
		if cc.hasTimeout != tc.has || cc.timeout != tc.timeout {
			t.Errorf("%d options: hasTimeout %v, timeout %v", len(tc.opts), cc.hasTimeout, cc.timeout)
		}
	}
	// WithOutputValidation as a client Option sets the client-wide switch,
	// and a call's own setting wins over it, either way.
	if c := newConfig([]Option{WithOutputValidation(false)}); !c.noValidate {
		t.Error("client-wide WithOutputValidation(false) not set")
	}
	if c := newConfig([]Option{WithOutputValidation(false), WithOutputValidation(true)}); c.noValidate {
		t.Error("a later WithOutputValidation(true) does not win")
	}
	off := &Client{cfg: newConfig([]Option{WithOutputValidation(false)})}
	on := &Client{cfg: newConfig(nil)}
	for _, tc := range []struct {
		c    *Client
		opts []CallOption
		want bool
	}{
		{on, nil, true},
		{off, nil, false},
		{off, []CallOption{WithOutputValidation(true)}, true},
		{on, []CallOption{WithOutputValidation(false)}, false},
	} {
		cc := newCallConfig(tc.opts)
		if got := cc.validates(tc.c); got != tc.want {
			t.Errorf("client off %v, %d call options: validates %v, want %v", tc.c.cfg.noValidate, len(tc.opts), got, tc.want)
		}
	}
}

// The reconnection floor and ceiling: defaults, range,
// and the delays they give.
func TestReconnectDelay(t *testing.T) {
	c := newConfig(nil)
	if c.limits.MinReconnectDelay != DefaultMinReconnectDelay || c.limits.MaxReconnectDelay != DefaultMaxReconnectDelay {
		t.Errorf("defaults: floor %v, ceiling %v", c.limits.MinReconnectDelay, c.limits.MaxReconnectDelay)
	}
	c = newConfig([]Option{WithLimits(Limits{MinReconnectDelay: -1, MaxReconnectDelay: -1})})
	if c.limits.MinReconnectDelay != DefaultMinReconnectDelay || c.limits.MaxReconnectDelay != DefaultMaxReconnectDelay {
		t.Errorf("negative values: floor %v, ceiling %v", c.limits.MinReconnectDelay, c.limits.MaxReconnectDelay)
	}
	c = newConfig([]Option{WithLimits(Limits{MinReconnectDelay: 2 * time.Second, MaxReconnectDelay: time.Second})})
	if c.limits.MinReconnectDelay != 2*time.Second || c.limits.MaxReconnectDelay != 2*time.Second {
		t.Errorf("a ceiling below the floor: floor %v, ceiling %v", c.limits.MinReconnectDelay, c.limits.MaxReconnectDelay)
	}
	ms := time.Millisecond
	for _, tc := range []struct {
		floor, ceiling time.Duration
		retry          time.Duration
		hasRetry       bool
		attempt        int
		want           time.Duration
	}{
		{100 * ms, 30 * time.Second, 0, true, 0, 100 * ms},              // retry: 0 gets the floor
		{100 * ms, 30 * time.Second, 0, true, 3, 800 * ms},              // doubled per attempt
		{100 * ms, 30 * time.Second, 0, false, 0, DefaultResumeDelay},   // no retry: the default
		{100 * ms, 30 * time.Second, 0, true, 100, 30 * time.Second},    // capped, no overflow
		{100 * ms, 30 * time.Second, time.Minute, true, 5, time.Minute}, // a longer server retry is honoured
		{10 * ms, 40 * ms, 0, true, 1, 20 * ms},                         // configured floor
		{10 * ms, 40 * ms, 0, true, 3, 40 * ms},                         // configured ceiling
		{time.Hour, 1<<63 - 1, 0, true, 1000, 1<<63 - 1},                // huge ceiling: no overflow
		{100 * ms, 30 * time.Second, 50 * ms, true, 0, 100 * ms},        // a retry below the floor
		{100 * ms, 30 * time.Second, 250 * ms, true, 1, 500 * ms},       // a retry above it
	} {
		h := &httpConn{c: &Client{cfg: newConfig([]Option{WithLimits(Limits{MinReconnectDelay: tc.floor, MaxReconnectDelay: tc.ceiling})})}}
		if got := h.reconnectDelay(tc.retry, tc.hasRetry, tc.attempt); got != tc.want {
			t.Errorf("floor %v ceiling %v retry %v/%v attempt %d: %v, want %v", tc.floor, tc.ceiling, tc.retry, tc.hasRetry, tc.attempt, got, tc.want)
		}
	}
}

// WithMinToolsTTL: the default, zero, and a negative value (the server's
// ttlMs as it is).
func TestMinToolsTTLConfig(t *testing.T) {
	for _, tc := range []struct{ in, want time.Duration }{
		{0, DefaultMinToolsTTL}, {-1, 0}, {time.Minute, time.Minute},
	} {
		if got := newConfig([]Option{WithLimits(Limits{MinToolsTTL: tc.in})}).limits.MinToolsTTL; got != tc.want {
			t.Errorf("WithLimits(Limits{MinToolsTTL: %v}) = %v, want %v", tc.in, got, tc.want)
		}
	}
	if got := newConfig(nil).limits.MinToolsTTL; got != DefaultMinToolsTTL {
		t.Errorf("default %v", got)
	}
}
