package audit

import (
	"context"
	"testing"
	"time"
)

// TestBatchContext: a batch's context is done once every record's context
// is done, not before.
func TestBatchContext(t *testing.T) {
	ctxA, cancelA := context.WithCancel(context.Background())
	ctxB, cancelB := context.WithCancel(context.Background())
	defer cancelA()
	defer cancelB()
	ctx, release := batchContext([]*pending{{ctx: ctxA}, {ctx: ctxB}, {ctx: context.Background()}})
	defer release()
	cancelA()
	cancelB()
	select {
	case <-ctx.Done():
		t.Fatal("done while one record's context is not")
	case <-time.After(50 * time.Millisecond):
	}

	ctx, release = batchContext([]*pending{{ctx: ctxA}, {ctx: ctxB}})
	defer release()
	select {
	case <-ctx.Done():
	case <-time.After(30 * time.Second):
		t.Fatal("not done though every record's context is")
	}

	live, stop := context.WithCancel(context.Background())
	ctx, release = batchContext([]*pending{{ctx: live}})
	release()
	if ctx.Err() == nil {
		t.Error("release did not cancel the batch's context")
	}
	stop()
}
