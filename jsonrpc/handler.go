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
