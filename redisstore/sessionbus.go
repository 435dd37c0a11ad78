package redisstore

import (
	"context"
	"fmt"
	"strings"
	"sync"

	"github.com/redis/go-redis/v9"
	"github.com/toolwire/toolwire/transport/streamable"
)

// SessionBus is streamable.SessionBus on Redis pub/sub: a channel per
// session under the client's prefix, and one pattern subscription per
// replica for all of them. Pub/sub keeps nothing: a replica that is not
// connected when a message is published never sees it, as the bus allows.
// go-redis reconnects and subscribes again after an outage.
type SessionBus struct{ c *Client }

var _ streamable.SessionBus = (*SessionBus)(nil)

// MaxBusMessage bounds a message published on the bus; a session's stream
// events are bounded by the event store's own limits, far below it.
const MaxBusMessage = 16 << 20

// SessionBus returns the client's session bus.
func (c *Client) SessionBus() *SessionBus { return &SessionBus{c: c} }

func (b *SessionBus) channel(session string) string { return b.c.prefix + "bus:" + session }

// Publish implements streamable.SessionBus: one round trip.
func (b *SessionBus) Publish(ctx context.Context, session string, msg []byte) error {
	if len(msg) > MaxBusMessage {
		return fmt.Errorf("redisstore: bus message of %d bytes, more than %d", len(msg), MaxBusMessage)
	}
	octx, cancel := context.WithTimeout(ctx, b.c.timeout)
	defer cancel()
	if err := b.c.observe(ctx, b.c.rdb.Publish(octx, b.channel(session), msg).Err()); err != nil {
		return fmt.Errorf("redisstore: publishing a session message: %w", err)
	}
	return nil
}

// Subscribe implements streamable.SessionBus: fn runs on one goroutine, in
// the order Redis delivers, until stop (which waits for it to return).
func (b *SessionBus) Subscribe(fn func(session string, msg []byte)) (func(), error) {
	ctx, cancel := b.c.opContext()
	defer cancel()
	prefix := b.c.prefix + "bus:"
	ps := b.c.rdb.PSubscribe(ctx, globEscape(prefix)+"*")
	if _, err := ps.Receive(ctx); err != nil {
		ps.Close()
		return nil, fmt.Errorf("redisstore: subscribing to the session bus: %w", b.c.observe(context.Background(), err))
	}
	var wg sync.WaitGroup
	wg.Add(1)
	ch := ps.Channel(redis.WithChannelSize(1024))
	go func() {
		defer wg.Done()
		for m := range ch {
			if session, ok := strings.CutPrefix(m.Channel, prefix); ok {
				fn(session, []byte(m.Payload))
			}
		}
	}()
	var once sync.Once
	return func() {
		once.Do(func() {
			ps.Close()
			wg.Wait()
		})
	}, nil
}

// globEscape escapes the glob characters of a Redis pattern.
func globEscape(s string) string {
	var b strings.Builder
	for _, r := range s {
		if strings.ContainsRune(`*?[]\`, r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}
