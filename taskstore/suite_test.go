package taskstore_test

import (
	"path/filepath"
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

func TestSQLite(t *testing.T) {
	storetest.Run(t, func(t *testing.T, opts ...taskstore.Option) taskstore.Store {
		s, err := taskstore.OpenSQLite(filepath.Join(t.TempDir(), "tasks.db"), opts...)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			if err := s.Close(); err != nil {
				t.Error(err)
			}
		})
		return s
	})
}
