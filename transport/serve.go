// Package transport carries JSON-RPC messages between peers. Its subpackages
// frame them (stdio: one per line; memory: in-process); Serve runs a
// jsonrpc.Session over any framed connection. Transports know nothing of what
// the methods mean.
package transport

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/toolwire/toolwire/jsonrpc"
)

// Conn is a connection that carries whole messages.
type Conn interface {
	// Read returns the next message. It returns io.EOF when the peer is done,
	// and a *TooLargeError for a message over the size limit, after which the
	// connection is still usable.
	Read(ctx context.Context) ([]byte, error)
	// Write sends one message. Concurrent calls are allowed.
	Write(ctx context.Context, msg []byte) error
	// Close releases the connection.
	Close() error
}

// TooLargeError reports a message over the connection's size limit; it was
// skipped.
type TooLargeError struct{ Limit int }

func (e *TooLargeError) Error() string {
	return fmt.Sprintf("message exceeds the size limit of %d bytes", e.Limit)
}

// Defaults for ServeOptions.
const (
	DefaultMaxConcurrency = 64
	DefaultMaxQueued      = 1024
	DefaultDrainTimeout   = 5 * time.Second
)

// ServeOptions bound a served connection. Zero values mean the defaults.
type ServeOptions struct {
	// MaxConcurrency is how many requests run at once.
	MaxConcurrency int
	// MaxQueued is how many more may wait for a slot; past that a request is
	// refused at once with -32603.
	MaxQueued int
	// DrainTimeout is how long requests still running at end of input may
	// finish before they are cancelled.
	DrainTimeout time.Duration
	// Logger receives transport diagnostics; nil logs nothing.
	Logger *slog.Logger
}

func (o *ServeOptions) withDefaults() ServeOptions {
	c := ServeOptions{}
	if o != nil {
		c = *o
	}
	if c.MaxConcurrency <= 0 {
		c.MaxConcurrency = DefaultMaxConcurrency
	}
	if c.MaxQueued < 0 {
		c.MaxQueued = 0
	} else if c.MaxQueued == 0 {
		c.MaxQueued = DefaultMaxQueued
	}
	if c.DrainTimeout <= 0 {
		c.DrainTimeout = DefaultDrainTimeout
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	return c
}

// sender writes messages to a Conn; it is what sessions send through.
type sender struct{ conn Conn }

func (s sender) Send(ctx context.Context, m jsonrpc.Message) error {
	b, err := jsonrpc.Encode(m)
	if err != nil {
		return err
	}
	return s.conn.Write(ctx, b)
}

// NewSender returns a jsonrpc.Sender that encodes onto conn.
func NewSender(conn Conn) jsonrpc.Sender { return sender{conn} }

// Serve reads messages from conn and hands them to a session opened on
// opener until the input ends (a clean exit, returning nil), ctx is
// cancelled, or writing fails. Requests run concurrently within the bounds of
// opts; notifications are handled in order as they arrive, so a cancellation
// is seen while its request runs. Bad input never stops the loop: it gets an
// error reply.
func Serve(ctx context.Context, conn Conn, opener jsonrpc.SessionOpener, opts *ServeOptions) error {
	o := opts.withDefaults()
	out := sender{conn}
	sess := opener.OpenSession(out)
	defer sess.Close()
	inline, _ := sess.(jsonrpc.InlineHandler)

	reqCtx, cancelReqs := context.WithCancel(context.WithoutCancel(ctx))
	defer cancelReqs()
	var wg sync.WaitGroup
	slots := make(chan struct{}, o.MaxConcurrency)
	var mu sync.Mutex
	pending := 0
	var writeErr error
	var writeOnce sync.Once
	fail := func(err error) { writeOnce.Do(func() { writeErr = err; cancelReqs() }) }

	reply := func(r *jsonrpc.Response) {
		if err := out.Send(reqCtx, r); err != nil {
			fail(err)
		}
	}
	busy := fmt.Sprintf("server busy: %d requests already in flight or queued", o.MaxConcurrency+o.MaxQueued)

	// The reader goroutine reads and dispatches itself: one hand-off less
	// per message than a reader feeding a loop. It stops dispatching once
	// Serve is on its way out; a Read blocked past that (stdin cannot be
	// interrupted) ends when its input does.
	var stopped atomic.Bool
	var dispatching sync.Mutex // held while a message is handed over
	var readErr, endErr error  // readErr: written before readDone closes
	readDone := make(chan struct{})
	readCtx, stopReading := context.WithCancel(ctx)
	defer stopReading()
	// dispatch hands one read over; it reports whether to go on reading.
	dispatch := func(data []byte, err error) bool {
		if err != nil {
			var tl *TooLargeError
			if errors.As(err, &tl) {
				reply(&jsonrpc.Response{Error: jsonrpc.NewError(jsonrpc.CodeInvalidRequest, "%s", tl.Error())})
				return true
			}
			if !errors.Is(err, io.EOF) {
				readErr = err
			}
			return false
		}
		msg, id, derr := jsonrpc.Decode(data)
		if derr != nil {
			o.Logger.Debug("bad message", "error", derr.Message)
			reply(&jsonrpc.Response{ID: id, Error: derr})
			return true
		}
		switch m := msg.(type) {
		case *jsonrpc.Notification:
			sess.HandleNotification(reqCtx, m)
		case *jsonrpc.Response:
			sess.HandleResponse(reqCtx, m)
		case *jsonrpc.Request:
			if inline != nil && inline.HandleInline(m) {
				if resp := sess.HandleRequest(reqCtx, m, out); resp != nil {
					reply(resp)
				}
				return true
			}
			mu.Lock()
			if pending >= o.MaxConcurrency+o.MaxQueued {
				mu.Unlock()
				reply(&jsonrpc.Response{ID: m.ID, Error: jsonrpc.NewError(jsonrpc.CodeInternalError, "%s", busy)})
				return true
			}
			pending++
			mu.Unlock()
			wg.Add(1)
			go func() {
				defer func() {
					mu.Lock()
					pending--
					mu.Unlock()
					wg.Done()
				}()
				select {
				case slots <- struct{}{}:
				case <-reqCtx.Done():
					return
				}
				defer func() { <-slots }()
				if resp := sess.HandleRequest(reqCtx, m, out); resp != nil {
					reply(resp)
				}
			}()
		}
		return true
	}

	go func() {
		defer close(readDone)
		for !stopped.Load() {
			data, err := conn.Read(readCtx)
			dispatching.Lock()
			if stopped.Load() {
				dispatching.Unlock()
				return
			}
			more := dispatch(data, err)
			dispatching.Unlock()
			if !more {
				return
			}
		}
	}()

	ended := false
	select {
	case <-readDone:
		ended = true
	case <-ctx.Done():
	case <-reqCtx.Done():
	}
	// After this, no message is handed over: a dispatch in progress
	// finishes first, and a Read still blocked returns to nothing.
	dispatching.Lock()
	stopped.Store(true)
	dispatching.Unlock()
	stopReading()
	if ended {
		endErr = readErr
	} else if ctx.Err() != nil {
		endErr = ctx.Err()
	}
	// Let running requests finish, within the drain timeout.
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(o.DrainTimeout):
		cancelReqs()
		<-done
	}
	if writeErr != nil {
		return fmt.Errorf("transport: write failed: %w", writeErr)
	}
	return endErr
}
