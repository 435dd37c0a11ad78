package backoff

import (
	"context"
	"time"
)

// Sleep waits d, or until ctx ends, whichever comes first: the wait
// between two tries, or a step of work that a cancellation, a task's TTL
// or a shutdown must be able to cut short. It returns nil after the full
// wait and ctx's error otherwise; d <= 0 returns ctx's error at once.
func Sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
