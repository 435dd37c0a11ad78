package taskstore_test

import (
	"testing"

	"github.com/toolwire/toolwire/taskstore"
	"github.com/toolwire/toolwire/taskstore/storetest"
)

func TestMemory(t *testing.T) {
	storetest.Run(t, func(t *testing.T, opts ...taskstore.Option) taskstore.Store {
		s := taskstore.NewMemory(opts...)
		t.Cleanup(func() { s.Close() })
		return s
	})
}
