package redisstore

import (
	"context"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/toolwire/toolwire/internal/testenv"
	"github.com/toolwire/toolwire/internal/testhttp"
	"github.com/toolwire/toolwire/internal/testwait"
)

// inbox collects what a subscription receives.
type inbox struct {
	mu   sync.Mutex
	msgs []string
}

func (i *inbox) add(session string, msg []byte) {
	i.mu.Lock()
	i.msgs = append(i.msgs, session+"="+string(msg))
	i.mu.Unlock()
}

func (i *inbox) has(s string) bool {
	i.mu.Lock()
	defer i.mu.Unlock()
	for _, m := range i.msgs {
		if m == s {
			return true
		}
	}
	return false
}

// TestSessionBus: a message published by one replica reaches every
// subscribed replica (itself too) with its session and exact bytes; other
// prefixes (even with glob characters) see nothing; after stop nothing more
// arrives; after Redis restarts, the subscription carries on by itself.
func TestSessionBus(t *testing.T) {
	srv := testenv.Redis(t)
	a := open(t, srv.URL(), WithPrefix("app*[1]:"), WithLimits(Limits{HealthInterval: 50 * time.Millisecond}))
	b := open(t, srv.URL(), WithPrefix("app*[1]:"), WithLimits(Limits{HealthInterval: 50 * time.Millisecond}))
	other := open(t, srv.URL(), WithPrefix("appX1:"))
	var ia, ib, io inbox
	stopA, err := a.SessionBus().Subscribe(ia.add)
	if err != nil {
		t.Fatal(err)
	}
	defer stopA()
	stopB, err := b.SessionBus().Subscribe(ib.add)
	if err != nil {
		t.Fatal(err)
	}
	stopO, err := other.SessionBus().Subscribe(io.add)
	if err != nil {
		t.Fatal(err)
	}
	defer stopO()
	payload := "bin\x00\xff"
	if err := a.SessionBus().Publish(context.Background(), "s:1", []byte(payload)); err != nil {
		t.Fatal(err)
	}
	testwait.WaitFor(t, "both replicas to receive", func() bool { return ia.has("s:1="+payload) && ib.has("s:1="+payload) })
	stopB()
	stopB() // twice is fine
	a.SessionBus().Publish(context.Background(), "s:2", []byte("x"))
	testwait.WaitFor(t, "A to receive the second", func() bool { return ia.has("s:2=x") })
	if ib.has("s:2=x") || io.has("s:1="+payload) || io.has("s:2=x") {
		t.Errorf("delivered where it must not be: B %v, other prefix %v", ib.msgs, io.msgs)
	}
	if err := a.SessionBus().Publish(context.Background(), "s", make([]byte, MaxBusMessage+1)); err == nil {
		t.Error("a message past MaxBusMessage was published")
	}

	srv.Stop()
	if err := a.SessionBus().Publish(context.Background(), "s:3", []byte("down")); err == nil {
		t.Error("publish with Redis down succeeded")
	}
	srv.Start()
	testwait.WaitFor(t, "the subscription to carry on after Redis restarted", func() bool {
		if ia.has("s:4=back") {
			return true
		}
		a.SessionBus().Publish(context.Background(), "s:4", []byte("back")) // again, until one arrives
		return false
	})
}

// TestCancelAcrossReplicas: a call runs on A; its notifications/cancelled
// is posted to B; Redis pub/sub takes it to A, which stops the call.
func TestCancelAcrossReplicas(t *testing.T) {
	srv := testenv.Redis(t)
	a, _ := replica(t, srv.URL())
	b, _ := replica(t, srv.URL())
	_, _, sid := post(t, a, "", initBody)
	post(t, a, sid, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	go func() {
		r := testhttp.MCPPost(t, a, sid, `{"jsonrpc":"2.0","id":"w1","method":"tools/call","params":{"name":"wait"}}`)
		if resp, err := http.DefaultClient.Do(r); err == nil {
			resp.Body.Close()
		}
	}()
	testwait.Recv(t, waiting, "the call to start on A")
	status, body, _ := post(t, b, sid, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"w1"}}`)
	if status != http.StatusAccepted {
		t.Fatalf("cancellation on B: %d %s", status, body)
	}
	testwait.Recv(t, stopped, "the call on A to be cancelled from B")
}
