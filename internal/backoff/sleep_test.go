package backoff_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/toolwire/toolwire/internal/backoff"
)

// Sleep returns nil after a wait that ran out, and the context's error
// when the context ended first or was over already.
func TestSleep(t *testing.T) {
	if err := backoff.Sleep(context.Background(), time.Microsecond); err != nil {
		t.Fatalf("a short wait: %v", err)
	}
	if err := backoff.Sleep(context.Background(), 0); err != nil {
		t.Fatalf("no wait: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := backoff.Sleep(ctx, time.Hour); !errors.Is(err, context.Canceled) {
		t.Fatalf("a cancelled wait: %v", err)
	}
	if err := backoff.Sleep(ctx, 0); !errors.Is(err, context.Canceled) {
		t.Fatalf("no wait on a cancelled context: %v", err)
	}
}
