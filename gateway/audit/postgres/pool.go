package postgres

import (
	"context"
	"errors"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/toolwire/toolwire/gateway/audit"
)

// pgPool is the Postgres store's bounded set of connections: at most max
// in use at once, idle ones kept for reuse. A connection found broken takes
// the idle ones with it, since they most likely share its fate (a server
// restarted or gone), so that the next use dials afresh.
type pgPool struct {
	cfg *pgx.ConnConfig
	sem chan struct{} // a token per connection in use

	mu     sync.Mutex
	idle   []*pgx.Conn
	closed bool
}

// pgCloseTimeout bounds the goodbye sent to the server when a connection
// is closed.
const pgCloseTimeout = 2 * time.Second

func newPGPool(cfg *pgx.ConnConfig, maxConns int) *pgPool {
	return &pgPool{cfg: cfg, sem: make(chan struct{}, maxConns)}
}

// acquire returns an idle connection, or dials one, once fewer than max
// are in use; the caller gives it back with release or broken.
func (p *pgPool) acquire(ctx context.Context) (*pgx.Conn, error) {
	select {
	case p.sem <- struct{}{}:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		<-p.sem
		return nil, audit.ErrClosed
	}
	for len(p.idle) > 0 {
		c := p.idle[len(p.idle)-1]
		p.idle = p.idle[:len(p.idle)-1]
		if !c.IsClosed() {
			p.mu.Unlock()
			return c, nil
		}
	}
	p.mu.Unlock()
	c, err := pgx.ConnectConfig(ctx, p.cfg)
	if err != nil {
		<-p.sem
		return nil, err
	}
	return c, nil
}

// release gives c back: kept for reuse when it is healthy and idle (no
// transaction open, nothing in flight), closed otherwise.
func (p *pgPool) release(c *pgx.Conn) {
	defer func() { <-p.sem }()
	if c.IsClosed() || c.PgConn().IsBusy() || c.PgConn().TxStatus() != 'I' {
		closeConn(c)
		return
	}
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		closeConn(c)
		return
	}
	p.idle = append(p.idle, c)
	p.mu.Unlock()
}

// broken gives back c, which failed, closing it and every idle connection.
func (p *pgPool) broken(c *pgx.Conn) {
	defer func() { <-p.sem }()
	closeConn(c)
	p.mu.Lock()
	idle := p.idle
	p.idle = nil
	p.mu.Unlock()
	for _, c := range idle {
		closeConn(c)
	}
}

// close closes the idle connections; those in use are closed as they come
// back. Later acquires fail with ErrClosed.
func (p *pgPool) close() {
	p.mu.Lock()
	p.closed = true
	idle := p.idle
	p.idle = nil
	p.mu.Unlock()
	for _, c := range idle {
		closeConn(c)
	}
}

func closeConn(c *pgx.Conn) {
	ctx, cancel := context.WithTimeout(context.Background(), pgCloseTimeout)
	defer cancel()
	c.Close(ctx)
}

// uncertainError is a failure after which a change may or may not have been
// committed (the connection broke during COMMIT): never retried, since a
// retry could append the records twice.
type uncertainError struct{ err error }

func (e *uncertainError) Error() string { return e.err.Error() }
func (e *uncertainError) Unwrap() error { return e.err }

// scrubbedError is an error whose text had the DSN's password taken out.
// Unwrap gives the original error, for errors.Is and errors.As; its own text
// is not to be shown.
type scrubbedError struct {
	msg string
	err error
}

func (e *scrubbedError) Error() string { return e.msg }
func (e *scrubbedError) Unwrap() error { return e.err }

// scrub returns err with "audit: <op>: " before its text and every
// occurrence of secret in that text replaced by Redacted; nil stays nil.
func scrub(op, secret string, err error) error {
	if err == nil {
		return nil
	}
	msg := "audit: " + op + ": " + err.Error()
	if secret != "" {
		msg = strings.ReplaceAll(msg, secret, audit.Redacted)
		if esc := url.QueryEscape(secret); esc != secret {
			msg = strings.ReplaceAll(msg, esc, audit.Redacted)
		}
		if esc := url.PathEscape(secret); esc != secret {
			msg = strings.ReplaceAll(msg, esc, audit.Redacted)
		}
	}
	return &scrubbedError{msg: msg, err: err}
}

// kvPassword finds password=... in a keyword/value DSN.
var kvPassword = regexp.MustCompile(`password\s*=\s*('(?:[^'\\]|\\.)*'|[^\s]+)`)

// dsnPassword returns the password written in dsn (URL or keyword/value
// form), "" when there is none: the text to keep out of errors even when
// dsn does not parse.
func dsnPassword(dsn string) string {
	if u, err := url.Parse(dsn); err == nil && u.User != nil {
		if pw, ok := u.User.Password(); ok {
			return pw
		}
	}
	if m := kvPassword.FindStringSubmatch(dsn); m != nil {
		return strings.Trim(m[1], "'")
	}
	if i := strings.Index(dsn, "://"); i >= 0 {
		// An unparsable URL: user:password@ before the host.
		rest := dsn[i+3:]
		if at := strings.LastIndexByte(rest, '@'); at >= 0 {
			if _, pw, ok := strings.Cut(rest[:at], ":"); ok {
				return pw
			}
		}
	}
	return ""
}

// errNoDSN is returned by Open for an empty DSN: pgx would read
// the PG* environment variables, which is never what an audit store wants
// by accident.
var errNoDSN = errors.New("empty DSN")
