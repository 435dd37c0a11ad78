package otc

import (
	"fmt"
	"time"

	"github.com/toolwire/toolwire/internal/limits"
)

// Limits are the numbers that bound what a Handler accepts and how long it
// waits on a client. A zero field means the default named beside it (or,
// after an earlier WithLimits, leaves what that one set); a negative one
// makes NewHandler fail. Names follow one rule: MaxX is an upper bound on
// X, XTimeout a bound on how long X may take, and a size in bytes ends in
// Bytes.
type Limits struct {
	// MaxRequestBytes bounds the request body (DefaultMaxRequestBytes,
	// 1 MiB); larger bodies get 413.
	MaxRequestBytes int64
	// WriteTimeout bounds the writing of each response
	// (DefaultWriteTimeout, 30 s): a client that stops reading loses its
	// connection instead of holding the handler. The clock starts when the
	// response is ready, not when the request arrives, so a long tool call
	// is not cut short by it.
	WriteTimeout time.Duration
	// MaxTokenAhead bounds how far ahead of now a JWT's exp may be
	// (DefaultMaxTokenAhead, 15 minutes, which is also the most it may be
	// set to).
	MaxTokenAhead time.Duration
}

// WithLimits sets the handler's limits. Its zero fields leave the value an
// earlier WithLimits set, or the default, so limits may be given in
// several options.
func WithLimits(l Limits) Option {
	return handlerOption(func(h *Handler) error {
		if l.MaxRequestBytes < 0 || l.WriteTimeout < 0 || l.MaxTokenAhead < 0 {
			return fmt.Errorf("otc: limits must not be negative (request bytes %d, write timeout %s, token ahead %s)", l.MaxRequestBytes, l.WriteTimeout, l.MaxTokenAhead)
		}
		if l.MaxTokenAhead > DefaultMaxTokenAhead {
			return fmt.Errorf("otc: max token lifetime %s must be in (0, %s]", l.MaxTokenAhead, DefaultMaxTokenAhead)
		}
		if l.MaxRequestBytes > 0 {
			h.maxBody = l.MaxRequestBytes
		}
		if l.WriteTimeout > 0 {
			h.writeTO = l.WriteTimeout
		}
		if l.MaxTokenAhead > 0 {
			h.auth.maxAhead = l.MaxTokenAhead
		}
		return nil
	})
}

// ClientLimits are the numbers that bound what a Client reads. (Limits are
// the Handler's.) A zero field means the default named beside it (or,
// after an earlier WithClientLimits, leaves what that one set); a negative
// one makes NewClient fail. A size in bytes ends in Bytes.
type ClientLimits struct {
	// MaxResponseBytes bounds a response body the client reads
	// (DefaultMaxResponseBytes, 16 MiB); a larger one fails the call
	// without being decoded.
	MaxResponseBytes int64
}

// WithClientLimits sets the client's limits. Its zero fields leave the
// value an earlier WithClientLimits set, or the default, so limits may be
// given in several options.
func WithClientLimits(l ClientLimits) ClientOption {
	return clientOption(func(c *Client) error {
		if l.MaxResponseBytes < 0 {
			return fmt.Errorf("otc: client limits must not be negative (response bytes %d)", l.MaxResponseBytes)
		}
		limits.Set(&c.maxResp, l.MaxResponseBytes)
		return nil
	})
}
