package taskstore

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"math"
	"time"

	"github.com/toolwire/toolwire/mcp"
)

// Clone returns a deep copy of r.
func (r *Record) Clone() *Record {
	c := *r
	c.Params = bytes.Clone(r.Params)
	c.Result = bytes.Clone(r.Result)
	c.Error = bytes.Clone(r.Error)
	c.InputRequests = bytes.Clone(r.InputRequests)
	return &c
}

// ExpiryNanos is when the record expires, in Unix nanoseconds, or
// math.MaxInt64 for never (no TTL, or past the int64 range).
func (r *Record) ExpiryNanos() int64 {
	if r.TTL <= 0 {
		return math.MaxInt64
	}
	c := r.CreatedAt.UnixNano()
	if c > math.MaxInt64-int64(r.TTL) {
		return math.MaxInt64
	}
	return c + int64(r.TTL)
}

func validStatus(s mcp.TaskStatus) bool {
	switch s {
	case mcp.TaskWorking, mcp.TaskInputRequired, mcp.TaskCompleted, mcp.TaskFailed, mcp.TaskCancelled:
		return true
	}
	return false
}

// PrepareCreate checks r for Store.Create and returns the copy to store,
// stamped at now. It stamps r's CreatedAt and UpdatedAt too, so the caller
// can announce them. Stores outside this package share it to agree on what
// a valid task is.
func PrepareCreate(r *Record, now time.Time) (*Record, error) {
	if r == nil || r.ID == "" {
		return nil, fmt.Errorf("taskstore: a task needs an id")
	}
	if r.Status == "" {
		r.Status = mcp.TaskWorking
	}
	if !validStatus(r.Status) {
		return nil, fmt.Errorf("taskstore: unknown task status %q", r.Status)
	}
	if r.TTL < 0 || r.PollInterval < 0 {
		return nil, fmt.Errorf("taskstore: negative ttl or poll interval")
	}
	r.CreatedAt, r.UpdatedAt = now, now
	return r.Clone(), nil
}

// ApplyUpdate is Store.Update's step on one record: it runs fn on a copy
// of old and returns the changed record, stamped at now (never before old's
// UpdatedAt). ID, Owner and CreatedAt cannot change: fn's changes to them
// are dropped. A terminal old gives ErrTerminal.
func ApplyUpdate(old *Record, fn func(*Record) error, now time.Time) (*Record, error) {
	if old.Status.Terminal() {
		return nil, ErrTerminal
	}
	n := old.Clone()
	if err := fn(n); err != nil {
		return nil, err
	}
	n.ID, n.Owner, n.CreatedAt = old.ID, old.Owner, old.CreatedAt
	if !validStatus(n.Status) {
		return nil, fmt.Errorf("taskstore: unknown task status %q", n.Status)
	}
	if n.TTL < 0 || n.PollInterval < 0 {
		return nil, fmt.Errorf("taskstore: negative ttl or poll interval")
	}
	if now.Before(old.UpdatedAt) {
		now = old.UpdatedAt
	}
	n.UpdatedAt = now
	return n, nil
}

// A cursor is the position of the last record of a page: its creation time
// and id, so that paging stays stable while tasks are added (they sort
// before it) or removed. Its encoding is opaque to callers; stores outside
// this package use the same (EncodeCursor, DecodeCursor).
const cursorVersion = 1

// EncodeCursor returns the cursor of the page after the record created at
// created (Unix nanoseconds) with id.
func EncodeCursor(created int64, id string) string {
	b := make([]byte, 0, 9+len(id))
	b = append(b, cursorVersion)
	b = binary.BigEndian.AppendUint64(b, uint64(created))
	b = append(b, id...)
	return base64.RawURLEncoding.EncodeToString(b)
}

// DecodeCursor returns the position cursor names (for "", one before every
// record: math.MaxInt64), or ErrInvalidCursor for text EncodeCursor did not
// write.
func DecodeCursor(cursor string) (created int64, id string, err error) {
	if cursor == "" {
		return math.MaxInt64, "", nil
	}
	b, err := base64.RawURLEncoding.DecodeString(cursor)
	if err != nil || len(b) < 10 || b[0] != cursorVersion {
		return 0, "", ErrInvalidCursor
	}
	return int64(binary.BigEndian.Uint64(b[1:9])), string(b[9:]), nil
}

// ClampLimit brings a List limit into 1..MaxListLimit.
func ClampLimit(limit int) int {
	if limit < 1 {
		return 1
	}
	return min(limit, MaxListLimit)
}
