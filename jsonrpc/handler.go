package jsonrpc

import "context"

// Sender delivers messages to the peer. Transports implement it; a Send after
// the peer has gone returns an error and never blocks forever.
type Sender interface {
	Send(ctx context.Context, m Message) error
}

// SenderFunc adapts a function to Sender.
type SenderFunc func(ctx context.Context, m Message) error

// Send calls f.
func (f SenderFunc) Send(ctx context.Context, m Message) error { return f(ctx, m) }

// Session is the protocol side of one connection, as a transport sees it. The
// transport decodes messages and hands them over; it knows nothing of what the
// methods mean.
type Session interface {
	// HandleRequest serves one request. Notifications tied to the request
	// (progress, for example) go to w before the response is returned. A nil
	// Response means no reply must be sent (the peer cancelled the request).
	// Transports may call it concurrently.
	HandleRequest(ctx context.Context, req *Request, w Sender) *Response
	// HandleNotification consumes a notification; it never replies.
	HandleNotification(ctx context.Context, n *Notification)
	// HandleResponse consumes a reply to a request the session sent.
	HandleResponse(ctx context.Context, r *Response)
	// Close releases the session; in-flight requests are cancelled.
	Close()
}

// SessionOpener opens a Session for a new connection. out carries messages the
// session sends that belong to no request (list-changed notifications, for
// example).
type SessionOpener interface {
	OpenSession(out Sender) Session
}

// InlineHandler is optionally implemented by a Session whose requests must
// sometimes be served in arrival order, before later messages are read (the
// handshake that changes how everything after it is understood). Transports
// that serve requests concurrently check it.
type InlineHandler interface {
	HandleInline(req *Request) bool
}

// StatefulSession is a Session whose negotiated state can move to another
// process, so that several replicas behind one endpoint can each serve a
// 2025-era session opened on any of them (see SessionResumer).
type StatefulSession interface {
	Session
	// StateRevision changes whenever Snapshot would return something else:
	// a transport compares it after each message to know when to store a
	// new snapshot, without taking one.
	StateRevision() uint64
	// Snapshot returns the session's state; an error before the session is
	// established (nothing worth carrying yet).
	Snapshot() ([]byte, error)
	// ApplySnapshot brings the session up to a snapshot another process
	// took of the same session after it changed there.
	ApplySnapshot(state []byte) error
}

// SessionResumer is implemented by a SessionOpener that can rebuild a
// session from a StatefulSession's Snapshot, taken in this process or
// another. out is as for OpenSession.
type SessionResumer interface {
	ResumeSession(state []byte, out Sender) (Session, error)
}

// ResponseDeliverer is implemented by a Session that can tell whether a
// response answers a request it sent: a transport that shares a session
// between processes hands a response the session here does not await to
// the others.
type ResponseDeliverer interface {
	DeliverResponse(ctx context.Context, r *Response) bool
}
