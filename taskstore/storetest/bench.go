package storetest

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/toolwire/toolwire/mcp"
	"github.com/toolwire/toolwire/taskstore"
)

// Opener opens an empty store for one benchmark and closes it when the
// benchmark ends.
type Opener func(b *testing.B) taskstore.Store

// Bench measures a store's four operations as sub-benchmarks: Create (a
// working task), Get and Update (among 1,000 tasks of 10 owners) and List
// (20 of one owner's 100).
func Bench(b *testing.B, open Opener) {
	b.Run("Create", func(b *testing.B) {
		s, ctx := open(b), context.Background()
		b.ReportAllocs()
		b.ResetTimer()
		for i := range b.N {
			if err := s.Create(ctx, benchTask(i, "alice")); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("Get", func(b *testing.B) {
		s, ctx := filled(b, open), context.Background()
		b.ReportAllocs()
		b.ResetTimer()
		for i := range b.N {
			j := i % benchTasks
			if _, err := s.Get(ctx, benchOwner(j), benchID(j)); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("Update", func(b *testing.B) {
		s, ctx := filled(b, open), context.Background()
		b.ReportAllocs()
		b.ResetTimer()
		for i := range b.N {
			if _, err := s.Update(ctx, benchID(i%benchTasks), func(r *taskstore.Record) error {
				r.StatusMessage = fmt.Sprint("step ", i)
				return nil
			}); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("List", func(b *testing.B) {
		s, ctx := filled(b, open), context.Background()
		b.ReportAllocs()
		b.ResetTimer()
		for range b.N {
			if p, err := s.List(ctx, benchOwner(3), "", 20); err != nil || len(p.Records) != 20 {
				b.Fatal(len(p.Records), err)
			}
		}
	})
}

// benchTasks is how many tasks Get, Update and List run among.
const benchTasks = 1000

func benchID(i int) string    { return fmt.Sprintf("task-%09d", i) }
func benchOwner(i int) string { return fmt.Sprint("owner", i%10) }

func benchTask(i int, owner string) *taskstore.Record {
	return &taskstore.Record{
		ID: benchID(i), Owner: owner, Status: mcp.TaskWorking,
		ProtocolVersion: "2026-07-28", Method: "tools/call",
		Params: json.RawMessage(`{"name":"slow","arguments":{"n":1}}`),
	}
}

func filled(b *testing.B, open Opener) taskstore.Store {
	s, ctx := open(b), context.Background()
	for i := range benchTasks {
		if err := s.Create(ctx, benchTask(i, benchOwner(i))); err != nil {
			b.Fatal(err)
		}
	}
	return s
}
