package taskstore_test

import (
	"testing"

	"github.com/toolwire/toolwire/taskstore"
)

// A later WithLimits that leaves MaxTasks zero keeps what an earlier one
// set; a negative MaxTasks means the default.
func TestLimitsMaxTasks(t *testing.T) {
	if got := taskstore.Resolve(taskstore.WithLimits(taskstore.Limits{MaxTasks: 3}), taskstore.WithLimits(taskstore.Limits{}), nil).Limits.MaxTasks; got != 3 {
		t.Fatalf("MaxTasks after a zero WithLimits = %d, want 3", got)
	}
	for _, n := range []int{0, -1} {
		if got := taskstore.Resolve(taskstore.WithLimits(taskstore.Limits{MaxTasks: n})).Limits.MaxTasks; got != taskstore.DefaultMaxTasks {
			t.Fatalf("MaxTasks %d resolved to %d, want DefaultMaxTasks", n, got)
		}
	}
}
