package client_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/toolwire/toolwire/client"
)

// TestTimeoutClientWideAndPerCall: WithTimeout given to Connect bounds every
// request; given to a call it overrides the client's for that call (zero:
// the client's, negative: no limit). The "wait" tool never answers, so each
// call ends with whichever limit applied, named in the error. The server is
// in memory and the test in a synctest bubble: the timeouts, the subject,
// fire at their time however busy the machine.
func TestTimeoutClientWideAndPerCall(t *testing.T) { synctest.Test(t, testTimeoutClientWideAndPerCall) }

func testTimeoutClientWideAndPerCall(t *testing.T) {
	c := connect(t, inProcess(t, serverRequestsServer(nil)), client.WithTimeout(50*time.Millisecond))
	wait := func(ctx context.Context, opts ...client.CallOption) error {
		_, err := c.CallTool(ctx, "wait", nil, opts...)
		if !errors.Is(err, context.DeadlineExceeded) || client.CodeOf(err) != client.CodeTransport {
			t.Fatalf("err = %v, want a transport error that is context.DeadlineExceeded", err)
		}
		return err
	}
	bg := context.Background()
	for _, tc := range []struct {
		name string
		opts []client.CallOption
		want string
	}{
		{"client-wide", nil, "no response within 50ms"},
		{"zero: the client's", []client.CallOption{client.WithTimeout(0)}, "no response within 50ms"},
		{"longer for this call", []client.CallOption{client.WithTimeout(120 * time.Millisecond)}, "no response within 120ms"},
		{"shorter for this call", []client.CallOption{client.WithTimeout(20 * time.Millisecond)}, "no response within 20ms"},
		{"later wins", []client.CallOption{client.WithTimeout(time.Hour), nil, client.WithTimeout(30 * time.Millisecond)}, "no response within 30ms"},
	} {
		if err := wait(bg, tc.opts...); !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err = %v, want %q", tc.name, err, tc.want)
		}
	}
	// No limit for this call: only the caller's context ends it.
	ctx, cancel := context.WithTimeout(bg, 200*time.Millisecond)
	defer cancel()
	start := time.Now()
	if err := wait(ctx, client.WithTimeout(-1)); strings.Contains(err.Error(), "no response within") || time.Since(start) < 200*time.Millisecond {
		t.Errorf("WithTimeout(-1): err = %v after %v, want the caller's deadline", err, time.Since(start))
	}
}
