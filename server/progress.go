package server

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/toolwire/toolwire/jsonrpc"
	"github.com/toolwire/toolwire/mcp"
)

// Errors Progress returns; the call itself goes on.
var (
	// ErrProgressDone: the response has been sent, so no more progress may follow.
	ErrProgressDone = errors.New("server: progress after the request completed")
	// ErrProgressNotIncreasing: progress must strictly increase.
	ErrProgressNotIncreasing = errors.New("server: progress must increase with every notification")
)

// progress sends notifications/progress for one request.
type progress struct {
	untilAnswered
	token mcp.ProgressToken
	w     jsonrpc.Sender
	last  float64
	sent  bool
}

// untilAnswered keeps what a request sends of its own (progress, log
// messages) ahead of its response: every send holds mu and is refused once
// done is set, and close, called before the response is sent, takes mu and
// sets done, so nothing goes out after the response.
type untilAnswered struct {
	mu   sync.Mutex
	done bool
}

// close marks the request answered: what it would send from now on is
// refused.
func (u *untilAnswered) close() {
	u.mu.Lock()
	u.done = true
	u.mu.Unlock()
}

// HasProgress reports whether the caller asked for progress (sent a
// progressToken). Without one, Progress does nothing.
func (r *CallRequest) HasProgress() bool { return r.progress != nil }

// Progress reports how far the call has come; in a task it also becomes
// the task's status message. total is 0 when unknown.
// Values must strictly increase; a report that does not, or one made after
// the handler returned, is refused with an error and not sent. Without a
// progressToken from the caller it does nothing and returns nil.
func (r *CallRequest) Progress(ctx context.Context, value, total float64, message string) error {
	if rt := r.inTask(); rt != nil {
		rt.noteProgress(value, total, message) // tasks/get shows it
	}
	if r.progress == nil {
		return nil
	}
	return r.progress.report(ctx, value, total, message)
}

func (p *progress) report(ctx context.Context, value, total float64, message string) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.done {
		return ErrProgressDone
	}
	if p.sent && value <= p.last {
		return fmt.Errorf("%w: %v after %v", ErrProgressNotIncreasing, value, p.last)
	}
	params := mcp.ProgressParams{ProgressToken: p.token, Progress: value, Message: message}
	if total > 0 {
		params.Total = &total
	}
	n, err := jsonrpc.NewNotification(mcp.NotificationProgress, params)
	if err != nil {
		return err
	}
	// Sending under the lock keeps every notification ahead of the response.
	if err := p.w.Send(ctx, n); err != nil {
		return err
	}
	p.last, p.sent = value, true
	return nil
}

// finish stops further reports; it is called before the response is sent.
func (p *progress) finish() {
	if p == nil {
		return
	}
	p.close()
}
