package taskstore_test

import (
	"testing"

	"github.com/toolwire/toolwire/taskstore"
	"github.com/toolwire/toolwire/taskstore/storetest"
)

func BenchmarkMemory(b *testing.B) {
	storetest.Bench(b, func(b *testing.B) taskstore.Store {
		s := taskstore.NewMemory(taskstore.WithLimits(taskstore.Limits{MaxTasks: 1 << 30}))
		b.Cleanup(func() { s.Close() })
		return s
	})
}
