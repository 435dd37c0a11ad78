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
	for _, c := range []struct {
		name   string
		filled bool // among benchTasks tasks, or in an empty store
		op     func(ctx context.Context, s taskstore.Store, i int) error
	}{
		{"Create", false, func(ctx context.Context, s taskstore.Store, i int) error {
			return s.Create(ctx, benchTask(i, "alice"))
		}},
		{"Get", true, func(ctx context.Context, s taskstore.Store, i int) error {
			j := i % benchTasks
			_, err := s.Get(ctx, benchOwner(j), benchID(j))
			return err
		}},
		{"Update", true, func(ctx context.Context, s taskstore.Store, i int) error {
			_, err := s.Update(ctx, benchID(i%benchTasks), func(r *taskstore.Record) error {
				r.StatusMessage = fmt.Sprint("step ", i)
				return nil
			})
			return err
		}},
		{"List", true, func(ctx context.Context, s taskstore.Store, _ int) error {
			p, err := s.List(ctx, benchOwner(3), "", 20)
			if err == nil && len(p.Records) != 20 {
				err = fmt.Errorf("listed %d records, want 20", len(p.Records))
			}
			return err
		}},
	} {
		b.Run(c.name, func(b *testing.B) {
			s, ctx := open(b), context.Background()
			if c.filled {
				fill(b, s)
			}
			b.ReportAllocs()
			b.ResetTimer()
			for i := range b.N {
				if err := c.op(ctx, s, i); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
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

// fill creates the benchTasks tasks Get, Update and List run among.
func fill(b *testing.B, s taskstore.Store) {
	for i := range benchTasks {
		if err := s.Create(context.Background(), benchTask(i, benchOwner(i))); err != nil {
			b.Fatal(err)
		}
	}
}
