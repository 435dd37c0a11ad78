package redisstore

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/fnv"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/toolwire/toolwire/internal/backoff"
	"github.com/toolwire/toolwire/mcp"
	"github.com/toolwire/toolwire/taskstore"
)

// Bounds and defaults of the task store.
const (
	// DefaultLeaseTTL is how long a replica's lease outlives its last
	// refresh: a replica that dies has its running tasks failed by another
	// replica's Sweep about this long after.
	DefaultLeaseTTL = 15 * time.Second
	// MinLeaseTTL is the shortest lease Limits.LeaseTTL accepts; shorter values
	// are raised to it, so that refreshes (every third of it) stay sane.
	MinLeaseTTL = 100 * time.Millisecond
	// MaxTaskOwnerLen bounds a task's owner, in bytes: it becomes part of a
	// key. Principal keys are far shorter.
	MaxTaskOwnerLen = 4096
	// MaxTaskBytes bounds a task as stored (its params, result, error,
	// input requests and strings together): Create and Update refuse more.
	MaxTaskBytes = 32 << 20
	// MaxTaskUpdateAttempts bounds how often Update runs fn when other
	// replicas change the task between its read and its write; past it
	// Update fails with ErrTaskConflict.
	MaxTaskUpdateAttempts = 32
	// DefaultOrphanMessage is the status message Sweep gives the tasks of a
	// dead replica before this store's first Recover (after it, Recover's).
	DefaultOrphanMessage = "the server running the task stopped"
	// sweepBatch bounds the expired tasks one script deletes, so that no
	// script blocks Redis for long; Sweep runs as many as it needs.
	sweepBatch = 500
	// listBatch is how many index entries the List script reads at a time.
	listBatch = 100
)

// ErrTaskConflict is returned by Update when other writers changed the task
// MaxTaskUpdateAttempts times in a row between its read and its write.
var ErrTaskConflict = errors.New("redisstore: the task kept changing during Update")

// TaskStore is a taskstore.Store kept in Redis, shared by every replica on
// the same Redis server and prefix: a task created on one replica can be
// read, listed and updated on any other.
//
// Durability is Redis's: Create returns once Redis has the task in memory,
// and it survives a Redis restart only as far as Redis's persistence
// (appendonly with appendfsync) keeps it; a Redis without persistence loses
// every task when it restarts.
//
// Each task is a hash under prefix+"task:t:"+id, expiring (by Redis) TTL
// after its creation; an index of all tasks by expiry ("task:all") bounds
// the store (Limits.MaxTasks, counted across all replicas) and drives Sweep,
// and a per-owner index ("task:o:"+owner) drives List. The store's own
// clock judges expiry too, so an expired task is gone at once even before
// Redis drops it.
//
// Replicas: each TaskStore has a replica id (WithReplicaID, else random)
// and holds a lease, prefix+"replica:"+id, refreshed every third of its
// TTL (Limits.LeaseTTL) until Close. A task records the replica that created
// it (and runs it). Recover fails the working and input_required tasks of
// this replica id (a previous life of it) and of every replica whose lease
// is gone (it died), never the tasks of live replicas; Sweep fails those of
// dead replicas too, so a replica's tasks end within about a lease TTL of
// its death even when nothing restarts. A replica cut off from Redis for
// longer than its lease is taken for dead: its tasks are failed, and its
// later updates to them get ErrTerminal.
//
// Get, Create, List and Recover are one round trip each; Update two (a
// read, then a compare-and-set on the task's version, repeated on
// conflict; fn may so run more than once, on a fresh copy each time);
// Sweep one per 500 expired tasks, plus one. The scripts touch keys
// they compute, so the store needs a single Redis server (or primary), not
// Redis Cluster.
type TaskStore struct {
	c        *Client
	cfg      taskConfig
	leaseKey string

	locks      [64]sync.Mutex // serialise this replica's Updates per task, so they do not conflict
	recoverMsg atomic.Pointer[string]
	closed     atomic.Bool

	stop      chan struct{}
	done      chan struct{}
	stopOnce  sync.Once
	closeOnce sync.Once
	closeErr  error
}

var _ taskstore.Store = (*TaskStore)(nil)

// casBackoff spaces the attempts of an Update that lost a race for its task:
// 1 ms, doubling to 10 ms, each drawn at random below that.
var casBackoff = backoff.Policy{Initial: time.Millisecond, Max: 10 * time.Millisecond, Jitter: backoff.FullJitter}

// TaskStoreOption configures Client.TaskStore. Options apply in order (a
// later one wins), nil options are ignored and defaults fill in the rest.
type TaskStoreOption interface{ applyTaskStore(*taskConfig) }

type taskConfig struct {
	maxTasks int
	now      func() time.Time
	replica  string
	leaseTTL time.Duration
}

type taskStoreOption func(*taskConfig)

func (f taskStoreOption) applyTaskStore(c *taskConfig) { f(c) }

// WithTaskClock sets the clock that stamps tasks and judges their expiry
// (default time.Now). For tests.
func WithTaskClock(now func() time.Time) TaskStoreOption {
	return taskStoreOption(func(c *taskConfig) {
		if now != nil {
			c.now = now
		}
	})
}

// WithReplicaID names the replica (default: random per TaskStore). A fixed
// id (a pod name) lets Recover after a restart fail the tasks the previous
// process left at once, without waiting for its lease to lapse. At most
// MaxNameLen bytes; "" means random.
func WithReplicaID(id string) TaskStoreOption {
	return taskStoreOption(func(c *taskConfig) { c.replica = id })
}

// TaskStore returns a task store on the client and takes its replica's
// lease (one round trip; an error if Redis does not answer). Close it to
// stop refreshing the lease; closing it leaves the client open.
func (c *Client) TaskStore(opts ...TaskStoreOption) (*TaskStore, error) {
	cfg := taskConfig{maxTasks: taskstore.DefaultMaxTasks, now: time.Now, leaseTTL: DefaultLeaseTTL}
	for _, o := range opts {
		if o != nil {
			o.applyTaskStore(&cfg)
		}
	}
	if cfg.replica == "" {
		var b [16]byte
		rand.Read(b[:])
		cfg.replica = hex.EncodeToString(b[:])
	}
	if err := checkName("replica", cfg.replica); err != nil {
		return nil, err
	}
	s := &TaskStore{
		c:        c,
		cfg:      cfg,
		leaseKey: c.prefix + "replica:" + cfg.replica,
		stop:     make(chan struct{}),
		done:     make(chan struct{}),
	}
	ctx, cancel := c.opContext()
	err := c.observe(context.Background(), c.rdb.Set(ctx, s.leaseKey, "1", cfg.leaseTTL).Err())
	cancel()
	if err != nil {
		return nil, fmt.Errorf("redisstore: taking the replica's lease: %w", err)
	}
	go s.refresh()
	return s, nil
}

// ReplicaID returns the id this store records in the tasks it creates.
func (s *TaskStore) ReplicaID() string { return s.cfg.replica }

// refresh renews the lease every third of its TTL until Close (of the
// store or of its client). While Redis is down the renewals fail; the next
// one after it is back takes the lease again.
func (s *TaskStore) refresh() {
	defer close(s.done)
	t := time.NewTicker(s.cfg.leaseTTL / 3)
	defer t.Stop()
	for {
		select {
		case <-s.stop:
			return
		case <-s.c.stop:
			return
		case <-t.C:
		}
		ctx, cancel := s.c.opContext()
		err := s.c.rdb.Set(ctx, s.leaseKey, "1", s.cfg.leaseTTL).Err()
		cancel()
		s.c.observe(context.Background(), err)
	}
}

// stopRefresh stops renewing the lease and waits for the refresher.
func (s *TaskStore) stopRefresh() {
	s.stopOnce.Do(func() {
		close(s.stop)
		<-s.done
	})
}

// Close implements taskstore.Store: it stops the lease's refresher and
// deletes the lease, so other replicas' Sweep fails this replica's
// unfinished tasks. Later calls fail with taskstore.ErrClosed.
func (s *TaskStore) Close() error {
	s.closeOnce.Do(func() {
		s.closed.Store(true)
		s.stopRefresh()
		ctx, cancel := s.c.opContext()
		defer cancel()
		if err := s.c.observe(context.Background(), s.c.rdb.Del(ctx, s.leaseKey).Err()); err != nil {
			s.closeErr = fmt.Errorf("redisstore: releasing the replica's lease: %w", err)
		}
	})
	return s.closeErr
}

// Create implements taskstore.Store in one round trip. It sets r.Status
// to working if empty, and r.CreatedAt and r.UpdatedAt.
func (s *TaskStore) Create(ctx context.Context, r *taskstore.Record) error {
	if err := s.check(ctx); err != nil {
		return err
	}
	if r == nil || r.ID == "" {
		return errors.New("redisstore: a task needs an id")
	}
	if err := checkName("task", r.ID); err != nil {
		return err
	}
	if len(r.Owner) > MaxTaskOwnerLen {
		return fmt.Errorf("redisstore: task owner of %d bytes, longer than %d", len(r.Owner), MaxTaskOwnerLen)
	}
	status := r.Status
	if status == "" {
		status = mcp.TaskWorking
	}
	c := r.Clone()
	c.Status = status
	if err := checkRecord(c); err != nil {
		return err
	}
	now := s.clock()
	if now.UnixNano() < 0 {
		return errors.New("redisstore: the clock is before 1970")
	}
	c.CreatedAt, c.UpdatedAt = now, now
	exp := c.ExpiryNanos()
	set, _ := mutableFields(c)
	fields := append(set, fID, c.ID, fOwner, c.Owner, fCreated, nanos19(now.UnixNano()), fReplica, s.cfg.replica, fVersion, "1")
	active := "0"
	if !status.Terminal() {
		active = "1"
	}
	args := append([]any{
		s.c.prefix, s.cfg.maxTasks, now.UnixNano() / int64(time.Millisecond), nanos19(now.UnixNano()),
		pexpire(exp, now), allMember(c), expiryScore(exp), ownerMember(now.UnixNano(), c.ID),
		s.cfg.replica, c.ID, active,
	}, fields...)
	keys := []string{s.taskKey(c.ID), s.allKey(), s.ownerKey(c.Owner), s.activeKey(s.cfg.replica), s.replicasKey()}
	octx, cancel := context.WithTimeout(ctx, s.c.timeout)
	defer cancel()
	n, err := createTask.Run(octx, s.c.rdb, keys, args...).Int()
	if err = s.c.observe(ctx, err); err != nil {
		return fmt.Errorf("redisstore: storing a task: %w", err)
	}
	switch n {
	case 0:
		return taskstore.ErrExists
	case -1:
		return taskstore.ErrFull
	}
	r.Status, r.CreatedAt, r.UpdatedAt = status, now, now
	return nil
}

// taskMeta is what a stored task holds besides its record.
type taskMeta struct {
	version string // changes with every write: Update's compare-and-set
	replica string // the replica that created the task
}

// read returns the task id as stored; nil if there is none.
func (s *TaskStore) read(ctx context.Context, id string) (*taskstore.Record, taskMeta, error) {
	if id == "" || checkName("task", id) != nil {
		return nil, taskMeta{}, nil // never stored
	}
	octx, cancel := context.WithTimeout(ctx, s.c.timeout)
	defer cancel()
	h, err := s.c.rdb.HGetAll(octx, s.taskKey(id)).Result()
	if err = s.c.observe(ctx, err); err != nil {
		return nil, taskMeta{}, fmt.Errorf("redisstore: reading a task: %w", err)
	}
	if len(h) == 0 {
		return nil, taskMeta{}, nil
	}
	r, m, err := decodeTask(h)
	if err == nil && r.ID != id {
		return nil, taskMeta{}, fmt.Errorf("redisstore: task %q is stored damaged (its id is %q)", id, r.ID)
	}
	return r, m, err
}

// decodeTask rebuilds a record from its hash; a hash missing fields or
// holding bad values is an error.
func decodeTask(h map[string]string) (*taskstore.Record, taskMeta, error) {
	id := h[fID]
	damaged := func(why string) error {
		return fmt.Errorf("redisstore: task %q is stored damaged (%s)", id, why)
	}
	for _, f := range []string{fID, fOwner, fStatus, fCreated, fUpdated, fExpires, fTTL, fPoll, fReplica, fVersion} {
		if _, ok := h[f]; !ok {
			return nil, taskMeta{}, damaged("no field " + f)
		}
	}
	num := func(f string) (int64, error) {
		n, err := strconv.ParseInt(h[f], 10, 64)
		if err != nil || n < 0 {
			return 0, damaged("field " + f)
		}
		return n, nil
	}
	var ns [4]int64
	for i, f := range []string{fCreated, fUpdated, fTTL, fPoll} {
		n, err := num(f)
		if err != nil {
			return nil, taskMeta{}, err
		}
		ns[i] = n
	}
	if len(h[fCreated]) != timeDigits || len(h[fUpdated]) != timeDigits || len(h[fExpires]) != timeDigits {
		return nil, taskMeta{}, damaged("times")
	}
	r := &taskstore.Record{
		ID:              id,
		Owner:           h[fOwner],
		Status:          mcp.TaskStatus(h[fStatus]),
		StatusMessage:   h[fMessage],
		CreatedAt:       time.Unix(0, ns[0]),
		UpdatedAt:       time.Unix(0, ns[1]),
		TTL:             time.Duration(ns[2]),
		PollInterval:    time.Duration(ns[3]),
		ProtocolVersion: h[fProtocol],
		Method:          h[fMethod],
	}
	if !r.Status.Valid() {
		return nil, taskMeta{}, damaged("status")
	}
	for _, f := range []struct {
		name string
		dst  *[]byte
	}{{fParams, (*[]byte)(&r.Params)}, {fResult, (*[]byte)(&r.Result)}, {fError, (*[]byte)(&r.Error)}, {fInputReq, (*[]byte)(&r.InputRequests)}} {
		if v, ok := h[f.name]; ok {
			*f.dst = []byte(v)
		}
	}
	return r, taskMeta{version: h[fVersion], replica: h[fReplica]}, nil
}

// Get implements taskstore.Store in one round trip.
func (s *TaskStore) Get(ctx context.Context, owner, id string) (*taskstore.Record, error) {
	if err := s.check(ctx); err != nil {
		return nil, err
	}
	r, _, err := s.read(ctx, id)
	if err != nil {
		return nil, err
	}
	if r == nil || r.Owner != owner || r.Expired(s.clock()) {
		return nil, taskstore.ErrNotFound
	}
	return r, nil
}

// Update implements taskstore.Store: it reads the task, runs fn on it and
// writes the result if the task's version is still the one read; else it
// tries again, at most MaxTaskUpdateAttempts times (then ErrTaskConflict).
// fn may so run more than once, each time on a fresh copy. Updates of one
// task through one TaskStore take turns, so they only conflict with other
// replicas.
func (s *TaskStore) Update(ctx context.Context, id string, fn func(*taskstore.Record) error) (*taskstore.Record, error) {
	if err := s.check(ctx); err != nil {
		return nil, err
	}
	h := fnv.New32a()
	h.Write([]byte(id))
	mu := &s.locks[h.Sum32()%uint32(len(s.locks))]
	mu.Lock()
	defer mu.Unlock()
	for attempt := range MaxTaskUpdateAttempts {
		if attempt > 0 {
			// Back off a little, at random, so that writers racing for
			// one task spread out.
			select {
			case <-ctx.Done():
				return nil, ctx.Err()
			case <-time.After(casBackoff.Delay(attempt)):
			}
		}
		old, meta, err := s.read(ctx, id)
		if err != nil {
			return nil, err
		}
		now := s.clock()
		if old == nil || old.Expired(now) {
			return nil, taskstore.ErrNotFound
		}
		if old.Status.Terminal() {
			return nil, taskstore.ErrTerminal
		}
		n := old.Clone()
		if err := fn(n); err != nil {
			return nil, err
		}
		n.ID, n.Owner, n.CreatedAt = old.ID, old.Owner, old.CreatedAt
		if err := checkRecord(n); err != nil {
			return nil, err
		}
		if now.Before(old.UpdatedAt) {
			now = old.UpdatedAt
		}
		n.UpdatedAt = now
		ok, err := s.write(ctx, old, n, meta)
		if err != nil {
			return nil, err
		}
		if ok {
			return n.Clone(), nil
		}
	}
	return nil, ErrTaskConflict
}

// write stores n over old if the task is still at the version read; false
// if not.
func (s *TaskStore) write(ctx context.Context, old, n *taskstore.Record, meta taskMeta) (bool, error) {
	exp := n.ExpiryNanos()
	set, del := mutableFields(n)
	terminal := "0"
	if n.Status.Terminal() {
		terminal = "1"
	}
	args := append([]any{meta.version, allMember(old), expiryScore(exp), pexpire(exp, s.clock()), terminal, n.ID, len(set)}, set...)
	args = append(args, del...)
	keys := []string{s.taskKey(n.ID), s.allKey(), s.activeKey(meta.replica)}
	octx, cancel := context.WithTimeout(ctx, s.c.timeout)
	defer cancel()
	ok, err := updateTask.Run(octx, s.c.rdb, keys, args...).Int()
	if err = s.c.observe(ctx, err); err != nil {
		return false, fmt.Errorf("redisstore: updating a task: %w", err)
	}
	return ok == 1, nil
}

// Recover implements taskstore.Store: it fails the working and
// input_required tasks of this replica id (left by a previous process with
// the same id, or created before this call) and of every replica whose
// lease is gone, never those of live replicas. Later Sweeps fail the tasks
// of replicas that die with message too.
func (s *TaskStore) Recover(ctx context.Context, message string) (int, error) {
	if err := s.check(ctx); err != nil {
		return 0, err
	}
	s.recoverMsg.Store(&message)
	return s.failOrphans(ctx, true, message)
}

func (s *TaskStore) failOrphans(ctx context.Context, own bool, message string) (int, error) {
	includeOwn := "0"
	if own {
		includeOwn = "1"
	}
	octx, cancel := context.WithTimeout(ctx, s.c.timeout)
	defer cancel()
	n, err := failOrphans.Run(octx, s.c.rdb, []string{s.replicasKey()},
		s.c.prefix, s.cfg.replica, includeOwn, message, nanos19(s.clock().UnixNano()),
		string(mcp.TaskFailed), string(mcp.TaskWorking), string(mcp.TaskInputRequired)).Int()
	if err = s.c.observe(ctx, err); err != nil {
		return 0, fmt.Errorf("redisstore: failing the tasks of stopped replicas: %w", err)
	}
	return n, nil
}

// Sweep implements taskstore.Store: it deletes the tasks expired at now
// (and the index entries of tasks Redis expired), a batch of at most 500
// per round trip, and returns how many. It also fails the unfinished tasks
// of replicas whose lease is gone, with the message of this store's latest
// Recover (DefaultOrphanMessage before any); those are not counted.
func (s *TaskStore) Sweep(ctx context.Context, now time.Time) (int, error) {
	if err := s.check(ctx); err != nil {
		return 0, err
	}
	ns := max(now.UnixNano(), 0)
	total, offset := 0, 0
	for {
		octx, cancel := context.WithTimeout(ctx, s.c.timeout)
		v, err := sweepTasks.Run(octx, s.c.rdb, []string{s.allKey()},
			s.c.prefix, ns/int64(time.Millisecond), nanos19(ns), offset).Int64Slice()
		cancel()
		if err = s.c.observe(ctx, err); err != nil {
			return total, fmt.Errorf("redisstore: sweeping tasks: %w", err)
		}
		if len(v) != 3 {
			return total, errors.New("redisstore: sweeping tasks: unexpected reply")
		}
		total += int(v[0])
		offset += int(v[1])
		if v[2] < sweepBatch {
			break
		}
	}
	msg := DefaultOrphanMessage
	if p := s.recoverMsg.Load(); p != nil {
		msg = *p
	}
	if _, err := s.failOrphans(ctx, false, msg); err != nil {
		return total, err
	}
	return total, nil
}

// List implements taskstore.Store in one round trip.
func (s *TaskStore) List(ctx context.Context, owner, cursor string, limit int) (taskstore.Page, error) {
	bound, err := decodeTaskCursor(cursor)
	if err != nil {
		return taskstore.Page{}, err
	}
	if err := s.check(ctx); err != nil {
		return taskstore.Page{}, err
	}
	limit = min(max(limit, 1), taskstore.MaxListLimit)
	if len(owner) > MaxTaskOwnerLen {
		return taskstore.Page{}, nil // never stored
	}
	octx, cancel := context.WithTimeout(ctx, s.c.timeout)
	defer cancel()
	v, err := listTasks.Run(octx, s.c.rdb, []string{s.ownerKey(owner)},
		s.c.prefix, bound, limit+1, nanos19(s.clock().UnixNano()), owner).Slice()
	if err = s.c.observe(ctx, err); err != nil {
		return taskstore.Page{}, fmt.Errorf("redisstore: listing tasks: %w", err)
	}
	var p taskstore.Page
	now := s.clock()
	for _, item := range v {
		flat, ok := item.([]any)
		if !ok || len(flat)%2 != 0 {
			return taskstore.Page{}, errors.New("redisstore: listing tasks: unexpected reply")
		}
		h := make(map[string]string, len(flat)/2)
		for i := 0; i < len(flat); i += 2 {
			k, ok1 := flat[i].(string)
			val, ok2 := flat[i+1].(string)
			if !ok1 || !ok2 {
				return taskstore.Page{}, errors.New("redisstore: listing tasks: unexpected reply")
			}
			h[k] = val
		}
		r, _, err := decodeTask(h)
		if err != nil {
			return taskstore.Page{}, err
		}
		if r.Expired(now) {
			continue // expired between the script and now
		}
		if len(p.Records) == limit {
			last := p.Records[limit-1]
			p.Next = taskstore.EncodeCursor(last.CreatedAt.UnixNano(), last.ID)
			break
		}
		p.Records = append(p.Records, r)
	}
	return p, nil
}

// decodeTaskCursor returns the exclusive upper bound, in the owner index,
// of the page after cursor (taskstore's cursors: the last task's creation
// time and id): "+" for the first page.
func decodeTaskCursor(cursor string) (string, error) {
	if cursor == "" {
		return "+", nil
	}
	created, id, err := taskstore.DecodeCursor(cursor)
	if err != nil || created < 0 || len(id) > MaxNameLen {
		return "", taskstore.ErrInvalidCursor
	}
	return "(" + ownerMember(created, id), nil
}
