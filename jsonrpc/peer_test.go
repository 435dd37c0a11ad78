package jsonrpc

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/toolwire/toolwire/internal/testwait"
)

func TestPeerMatchesResponsesAndProgress(t *testing.T) {
	p := NewPeer()
	var got []string
	a, err := p.Start(func(params json.RawMessage) { got = append(got, string(params)) })
	if err != nil {
		t.Fatal(err)
	}
	b, _ := p.Start(nil)
	if a.ID == b.ID || a.Token == "" || b.Token != "" {
		t.Fatalf("ids %s %s, tokens %q %q", a.ID, b.ID, a.Token, b.Token)
	}
	if p.Progress(json.RawMessage(`{"progressToken":"nope","progress":1}`)) {
		t.Error("unknown token routed")
	}
	if !p.Progress(json.RawMessage(`{"progressToken":"`+a.Token+`","progress":1}`)) || len(got) != 1 {
		t.Errorf("progress not routed: %v", got)
	}
	if p.Deliver(&Response{ID: Int64ID(12345), Result: json.RawMessage(`{}`)}) {
		t.Error("response to an unknown id delivered")
	}
	if !p.Deliver(&Response{ID: b.ID, Result: json.RawMessage(`{"b":1}`)}) {
		t.Fatal("response not delivered")
	}
	r, err := b.Outcome(context.Background())
	if err != nil || string(r.Result) != `{"b":1}` {
		t.Errorf("b: %v %v", r, err)
	}
	p.Finish(b)
	p.Finish(a)
	if p.Len() != 0 {
		t.Errorf("%d still pending", p.Len())
	}
	if p.Progress(json.RawMessage(`{"progressToken":"` + a.Token + `","progress":2}`)) {
		t.Error("progress routed after Finish")
	}
}

// The timeout is the subject: in a synctest bubble the call gives up at
// exactly its Timeout, however busy the machine.
func TestPeerCallTimeoutCancelsAndErrors(t *testing.T) {
	synctest.Test(t, testPeerCallTimeoutCancelsAndErrors)
}

func testPeerCallTimeoutCancelsAndErrors(t *testing.T) {
	p := NewPeer()
	var cancelled ID
	start := time.Now()
	_, err := p.Call(context.Background(), "slow", nil,
		func(context.Context, *Request, *Pending) error { return nil },
		&CallOptions{Timeout: 10 * time.Millisecond, Cancel: func(id ID, _ error) { cancelled = id }})
	var te *TimeoutError
	if !errors.As(err, &te) || !errors.Is(err, context.DeadlineExceeded) || !cancelled.IsValid() {
		t.Fatalf("timeout: %v, cancel called for %s", err, cancelled)
	}
	if took := time.Since(start); took != 10*time.Millisecond {
		t.Errorf("gave up after %v, want its Timeout, 10ms", took)
	}
	_, err = p.Call(context.Background(), "refused", nil, func(ctx context.Context, r *Request, _ *Pending) error {
		go p.Deliver(&Response{ID: r.ID, Error: NewError(-32001, "no")})
		return nil
	}, nil)
	if je, ok := AsError(err); !ok || je.Code != -32001 {
		t.Fatalf("error response: %v", err)
	}
	sendErr := errors.New("wire down")
	if _, err := p.Call(context.Background(), "x", nil, func(context.Context, *Request, *Pending) error { return sendErr }, nil); err != sendErr {
		t.Fatalf("send error: %v", err)
	}
	if p.Len() != 0 {
		t.Errorf("%d left pending", p.Len())
	}
}

func TestPeerCloseFailsWaitersAndRefusesNew(t *testing.T) {
	p := NewPeer()
	var wg sync.WaitGroup
	errs := make(chan error, 10)
	for range 10 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := p.Call(context.Background(), "wait", nil, func(context.Context, *Request, *Pending) error { return nil }, nil)
			errs <- err
		}()
	}
	testwait.WaitFor(t, "10 calls pending", func() bool { return p.Len() == 10 })
	gone := errors.New("connection lost")
	p.Close(gone)
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != gone {
			t.Errorf("waiter got %v", err)
		}
	}
	if _, err := p.Start(nil); err != gone {
		t.Errorf("Start after Close: %v", err)
	}
}
