package flow

import (
	"testing"
	"time"
)

// TestRetryDelay: backoff grows by factor up to max_backoff; jitter stays
// within the delay.
func TestRetryDelay(t *testing.T) {
	r := &Retry{Attempts: 10, Backoff: 100 * time.Millisecond, Factor: 2, MaxBackoff: time.Second}
	want := []time.Duration{100 * time.Millisecond, 200 * time.Millisecond, 400 * time.Millisecond, 800 * time.Millisecond, time.Second, time.Second}
	for i, w := range want {
		if got := r.delay(i + 1); got != w {
			t.Errorf("delay(%d) = %v, want %v", i+1, got, w)
		}
	}
	r.Jitter = true
	for range 100 {
		if d := r.delay(3); d < 0 || d > 400*time.Millisecond {
			t.Fatalf("jittered delay %v out of [0, 400ms]", d)
		}
	}
}

// TestRetryable: non_retryable codes and cancellation stop retries.
func TestRetryable(t *testing.T) {
	r := &Retry{NonRetryable: []string{"ERR_ASSERTION"}}
	if r.retryable("ERR_ASSERTION") || r.retryable(CodeCancelled) || !r.retryable("ERR_MCP_TRANSPORT") {
		t.Fatal("retryable is wrong")
	}
}

// TestRetryDefaults: a retry mapping gets the documented defaults.
func TestRetryDefaults(t *testing.T) {
	f, err := Parse("r.flow.yaml", []byte("steps:\n  - retry: {attempts: 2}\n    value: 1\n"))
	if err != nil {
		t.Fatal(err)
	}
	r := f.Flows[0].Steps[0].Retry
	if r.Backoff != DefaultBackoff || r.Factor != DefaultFactor || r.MaxBackoff != DefaultMaxBackoff || !r.Jitter {
		t.Fatalf("defaults %+v", r)
	}
}

// TestAssertionRetried: ERR_ASSERTION is retried like any code unless
// listed: a failing assert runs all its attempts.
func TestAssertionRetried(t *testing.T) {
	f, err := Parse("r.flow.yaml", []byte(`steps:
  - retry: {attempts: 3, backoff: 1ms}
    assert: {that: 1, equals: 2}
`))
	if err != nil {
		t.Fatal(err)
	}
	res, err := f.Flows[0].Run(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if res.Err == nil || res.Err.Code != CodeAssertion || res.Steps[0].Attempts != 3 {
		t.Fatalf("%+v %+v", res.Err, res.Steps)
	}
}
