package taskstore_test

import (
	"context"
	"testing"

	"github.com/toolwire/toolwire/taskstore"
)

func TestMemoryClosed(t *testing.T) {
	s := taskstore.NewMemory()
	s.Close()
	if err := s.Create(context.Background(), &taskstore.Record{ID: "t", Owner: "a"}); err != taskstore.ErrClosed {
		t.Errorf("Create after Close = %v", err)
	}
}
