package audit

import (
	"context"
	"errors"
	"testing"
)

// Limits given in several WithLimits options add up: a zero field keeps what
// an earlier option set, a negative one means the default, and a Postgres
// store always has a connection for Append beside a Query.
func TestLimitsResolve(t *testing.T) {
	got := Resolve(WithLimits(Limits{MaxBatch: 5, MaxErrorBytes: 100}), WithLimits(Limits{MaxConns: 1}), nil).Limits
	want := Limits{MaxArgumentsBytes: DefaultMaxArgumentsBytes, MaxErrorBytes: 100, MaxBatch: 5, MaxConns: 2, MaxQueue: DefaultQueueSize}
	if got != want {
		t.Fatalf("resolved %+v, want %+v", got, want)
	}
	got = Resolve(WithLimits(Limits{MaxBatch: 5, MaxConns: 9}), WithLimits(Limits{MaxBatch: -1, MaxConns: -3})).Limits
	if got.MaxBatch != DefaultMaxBatch || got.MaxConns != DefaultMaxConns {
		t.Fatalf("negative limits: %+v, want the defaults", got)
	}
	if got := Resolve().Limits; got.MaxBatch != DefaultMaxBatch || got.MaxConns != DefaultMaxConns || got.MaxArgumentsBytes != DefaultMaxArgumentsBytes {
		t.Fatalf("no options: %+v, want the defaults", got)
	}
}

// NewAsync reads MaxQueue from the same Limits value a store takes, and a
// later WithLimits without MaxQueue keeps it.
func TestAsyncLimitsKeepQueue(t *testing.T) {
	st := newBlocking()
	a := NewAsync(st, WithLimits(Limits{MaxQueue: 3}), WithLimits(Limits{MaxBatch: 1}))
	ctx := context.Background()
	a.Append(ctx, sample(0))
	<-st.started
	for i := range 3 {
		if err := a.Append(ctx, sample(i+1)); err != nil {
			t.Fatalf("record %d of a queue of 3: %v", i, err)
		}
	}
	if err := a.Append(ctx, sample(9)); !errors.Is(err, ErrDropped) {
		t.Fatalf("past MaxQueue: %v", err)
	}
	close(st.gate)
	a.Close(ctx)
}
