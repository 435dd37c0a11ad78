// Package taskstore keeps MCP tasks: the record of a request that runs on
// after its answer (a CreateTaskResult), its status as it moves to a
// terminal state, and its result. A Store must hold a task durably once
// Create returns, since the server announces the task only then.
package taskstore

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/toolwire/toolwire/mcp"
)

// ErrNotFound is returned for a task that does not exist, has expired, or
// belongs to another owner: a caller cannot tell these apart.
var ErrNotFound = errors.New("taskstore: no such task")

// ErrTerminal is returned by Update when fn tries to change a task that is
// already completed, failed or cancelled.
var ErrTerminal = errors.New("taskstore: the task has already ended")

// Record is one task as stored.
type Record struct {
	// ID is the task id: random, unguessable.
	ID string
	// Owner is the key of the principal that created the task
	// (auth.Principal.Key()); "" when the request carried none. Only the
	// same owner sees the task.
	Owner string
	// Status and StatusMessage are where the task stands.
	Status        mcp.TaskStatus
	StatusMessage string
	// CreatedAt and UpdatedAt are set by the store.
	CreatedAt time.Time
	UpdatedAt time.Time
	// TTL is how long after CreatedAt the task and its result are kept;
	// zero for no limit.
	TTL time.Duration
	// PollInterval is the polling pace suggested to clients; zero for none.
	PollInterval time.Duration
	// ProtocolVersion is the revision of the request that created the task.
	ProtocolVersion string
	// Method and Params are the request that became the task.
	Method string
	Params json.RawMessage
	// Result is the request's result once completed (or failed with an
	// isError result), as it would have been answered without a task.
	Result json.RawMessage
	// Error is the JSON-RPC error object the request failed with, if any.
	Error json.RawMessage
	// InputRequests are what the task waits for while input_required
	// (the inputRequests object of 2026-07-28), or nil.
	InputRequests json.RawMessage
}

// Expired reports whether the record's TTL has passed at now.
func (r *Record) Expired(now time.Time) bool {
	return r.TTL > 0 && !now.Before(r.CreatedAt.Add(r.TTL))
}

// Page is one page of a List.
type Page struct {
	Records []*Record
	// Next is the cursor of the following page; "" on the last.
	Next string
}

// Store keeps tasks. Implementations are safe for concurrent use.
type Store interface {
	// Create stores a new task; r.ID must be unique (else ErrExists). It
	// returns once the task is durable. The store sets r.CreatedAt and
	// r.UpdatedAt, and r.Status to working if empty; it keeps a copy of r.
	// A store at its bound returns ErrFull.
	Create(ctx context.Context, r *Record) error
	// Get returns the task id of owner, or ErrNotFound.
	Get(ctx context.Context, owner, id string) (*Record, error)
	// Update changes the task id (of any owner) atomically: fn gets a copy
	// of the record and changes it; UpdatedAt is then set by the store. An
	// error from fn aborts the update. Changes fn makes to ID, Owner and
	// CreatedAt are dropped. A terminal task cannot change: Update returns
	// ErrTerminal without calling fn. A missing or expired one is
	// ErrNotFound. fn runs while the store is locked and must not call it.
	Update(ctx context.Context, id string, fn func(*Record) error) (*Record, error)
	// List returns owner's unexpired tasks, newest first, at most limit
	// (values below 1 mean 1; at most MaxListLimit), starting after cursor
	// ("" for the first page; one the store did not issue is
	// ErrInvalidCursor).
	List(ctx context.Context, owner, cursor string, limit int) (Page, error)
	// Sweep deletes tasks expired at now and returns how many.
	Sweep(ctx context.Context, now time.Time) (int, error)
	// Recover marks every task still working or input_required as failed
	// with message: run at start, for tasks whose process died. It returns
	// how many it changed.
	Recover(ctx context.Context, message string) (int, error)
	// Close releases the store.
	Close() error
}
