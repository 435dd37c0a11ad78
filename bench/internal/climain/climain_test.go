package climain

import (
	"context"
	"errors"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/toolwire/toolwire/bench/clients"
)

type fakeCaller struct {
	calls  atomic.Int64
	failAt int64 // the call that fails (1-based); 0: none
	closed bool
}

func (f *fakeCaller) Echo(ctx context.Context, msg string) error {
	if n := f.calls.Add(1); n == f.failAt {
		return errors.New("wrong echo")
	}
	return nil
}

func (f *fakeCaller) Close() error { f.closed = true; return nil }

func fakeConnect(f *fakeCaller) clients.Connect {
	return func(ctx context.Context, url string, hc *http.Client) (clients.Caller, error) {
		if hc == nil {
			return nil, errors.New("no shared HTTP client")
		}
		return f, nil
	}
}

func testConfig() *config {
	return &config{url: "http://x/mcp", callers: []int{1, 3}, latencyCalls: 20, allocs: 10, dur: 5 * time.Millisecond, warmup: time.Millisecond}
}

// TestRun: every figure is reported, and checked counts every call made.
func TestRun(t *testing.T) {
	f := &fakeCaller{}
	figs, err := run(context.Background(), testConfig(), fakeConnect(f))
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"p50", "p99", "allocs", "bytes", "cpu", "cps1", "cps3"} {
		if _, ok := figs[k]; !ok {
			t.Errorf("no %s in %v", k, figs)
		}
	}
	if figs["cps1"] <= 0 || figs["cps3"] <= 0 {
		t.Errorf("calls/s %v, %v", figs["cps1"], figs["cps3"])
	}
	if got, want := int64(figs["checked"]), f.calls.Load(); got != want {
		t.Errorf("checked %d, calls made %d", got, want)
	}
	if !f.closed {
		t.Error("the client was not closed")
	}
}

// TestRunFails: a wrong reply in any phase fails the run.
func TestRunFails(t *testing.T) {
	for _, at := range []int64{1, 15, 35, 45} { // warm-up (10), latency (20), cost (10), calls/s
		f := &fakeCaller{failAt: at}
		if _, err := run(context.Background(), testConfig(), fakeConnect(f)); err == nil {
			t.Errorf("call %d failed, the run did not", at)
		}
	}
}
