package client

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/toolwire/toolwire/internal/wirejson"
	"github.com/toolwire/toolwire/mcp"
)

// legacyAccepted are the versions an initialize answer may name.
var legacyAccepted = append(mcp.LegacyVersions(), "2024-11-05")

// negotiate settles the era: modern via server/discover, legacy via
// initialize, or auto (probe modern, fall back to legacy). In auto, a stdio
// child that exits or closes its stdout in answer to the probe (a strict
// legacy server) is started again and initialized.
func (c *Client) negotiate(ctx context.Context) error {
	if _, ok := c.conn.(interface{ legacyOnly() }); ok {
		if c.cfg.era == mcp.EraModern {
			return &EraError{Version: c.preferred(mcp.EraModern), Err: errLegacyTransport}
		}
		return c.initialize(ctx) // no probe: the transport has no modern version
	}
	switch c.cfg.era {
	case mcp.EraLegacy:
		return c.initializeOrFallback(ctx)
	case mcp.EraModern:
		return c.discover(ctx, false)
	case mcp.EraAuto:
		err := c.discover(ctx, true)
		if err == nil {
			return nil
		}
		if restarted, rerr := c.restartAfterProbe(ctx); restarted {
			if rerr != nil {
				return rerr
			}
			return c.initialize(ctx)
		}
		if !c.fallbackable(ctx, err) {
			return err
		}
		c.cfg.logger.Debug("server/discover probe failed; falling back to initialize", "error", err)
		return c.initializeOrFallback(ctx)
	}
	return fmt.Errorf("client: unknown era %d", c.cfg.era)
}

// errNotModern: the server answered discover but speaks no modern version.
var errNotModern = errors.New("server speaks no modern protocol version toolwire knows")

// fallbackable says whether a failed probe means "not a modern server" (any
// answer that is not a DiscoverResult, an HTTP error status, a probe timeout)
// rather than "no server at all". It must not key on one error code.
func (c *Client) fallbackable(ctx context.Context, err error) bool {
	if ctx.Err() != nil || c.deadErr() != nil {
		return false
	}
	if errors.Is(err, errNotModern) {
		return true
	}
	switch CodeOf(err) {
	case CodeJSONRPC, CodeProtocol, CodeSessionInvalid:
		return true
	case CodeTransport:
		var te *TransportError
		if errors.As(err, &te) && te.StatusCode != 0 {
			return true
		}
		var to *timeoutError
		return errors.As(err, &to)
	}
	return false
}

func (c *Client) preferred(era mcp.Era) string {
	if v := c.cfg.protocolVersion; v != "" && mcp.EraOf(v) == era {
		return v
	}
	if era == mcp.EraModern {
		return mcp.LatestVersion
	}
	if v := c.cfg.protocolVersion; v != "" && slices.Contains(legacyAccepted, v) {
		return v
	}
	return mcp.LatestLegacyVersion
}

// discoverWire is a server/discover result as the client reads it: the
// server's identity is a typed member of _meta, so that it is read exactly.
type discoverWire struct {
	SupportedVersions []string               `json:"supportedVersions"`
	Capabilities      mcp.ServerCapabilities `json:"capabilities"`
	Instructions      string                 `json:"instructions"`
	Meta              struct {
		ServerInfo *mcp.Implementation `json:"io.modelcontextprotocol/serverInfo"`
	} `json:"_meta"`
}

// discover runs server/discover. In probe mode any failure is returned for
// the caller to fall back. Otherwise (the era forced to modern) a server
// that answers server/discover with anything but a DiscoverResult naming a
// modern version does not speak 2026-07-28: that is one outcome, an
// *EraError, whatever its way of saying so. A transport failure stays one,
// and a malformed DiscoverResult is a broken modern server (ProtocolError).
func (c *Client) discover(ctx context.Context, probe bool) error {
	c.setState(func(s *state) { s.era, s.version = mcp.EraModern, c.preferred(mcp.EraModern) })
	var opts []CallOption
	if probe {
		opts = append(opts, WithTimeout(c.cfg.limits.ProbeTimeout))
	}
	raw, err := c.Call(ctx, mcp.MethodDiscover, nil, opts...)
	if err != nil {
		if !probe && refusesDiscover(err) {
			return &EraError{Version: c.state().version, Err: err}
		}
		return err
	}
	var d discoverWire
	if err := wirejson.Unmarshal(raw, &d); err != nil {
		return &ProtocolError{Op: mcp.MethodDiscover, Reason: "result is not a DiscoverResult", Err: err}
	}
	version := c.state().version
	if len(d.SupportedVersions) > 0 && !slices.Contains(d.SupportedVersions, version) {
		version = pickVersion(d.SupportedVersions, mcp.ModernVersions())
	}
	if version == "" {
		if probe {
			return errNotModern
		}
		return &EraError{Version: c.state().version, Err: &ProtocolError{Op: mcp.MethodDiscover, Reason: fmt.Sprintf("server supports %v, none of them modern", d.SupportedVersions)}}
	}
	var info mcp.Implementation
	if d.Meta.ServerInfo != nil {
		info = *d.Meta.ServerInfo
	}
	c.setState(func(s *state) {
		s.version, s.server, s.caps, s.instructions = version, info, d.Capabilities, d.Instructions
	})
	return nil
}

// refusesDiscover says whether a failed server/discover was the server's
// answer (rather than no answer): a JSON-RPC error (method not found, not
// initialized, unsupported protocol version even after the retry), a
// session demanded, or an HTTP 400, 404 or 405 with no JSON-RPC body, which
// legacy-only HTTP servers send for a request outside a session.
func refusesDiscover(err error) bool {
	switch CodeOf(err) {
	case CodeJSONRPC, CodeSessionInvalid:
		return true
	case CodeTransport:
		var te *TransportError
		if errors.As(err, &te) {
			switch te.StatusCode {
			case 400, 404, 405:
				return true
			}
		}
	}
	return false
}

// EraError: the era was forced to modern (WithEra(mcp.EraModern)) and the
// server does not speak 2026-07-28: it refused server/discover (a JSON-RPC
// error, a 400/404/405 status), or answered it with a DiscoverResult that
// names no modern version. Its code is CodeJSONRPC, as a
// legacy server's refusal mostly is; Err is the server's answer. Connecting
// in the auto era (the default) or the legacy era reaches such a server.
type EraError struct {
	Version string // the version asked for, e.g. "2026-07-28"
	Err     error
}

func (e *EraError) Error() string {
	return fmt.Sprintf("the server does not speak protocol version %s (%v); connect in the auto or legacy era", e.Version, e.Err)
}
func (e *EraError) Unwrap() error { return e.Err }

// MCPCode makes every such case one outcome, whatever the cause's own code.
func (*EraError) MCPCode() Code { return CodeJSONRPC }

// initialize opens a legacy session and sends notifications/initialized.
func (c *Client) initialize(ctx context.Context) error {
	want := c.preferred(mcp.EraLegacy)
	c.setState(func(s *state) { s.era, s.version = mcp.EraLegacy, want })
	raw, err := c.Call(ctx, mcp.MethodInitialize, mcp.InitializeParams{
		ProtocolVersion: want, Capabilities: c.cfg.capabilities, ClientInfo: c.cfg.clientInfo,
	})
	if err != nil {
		return err
	}
	var r mcp.InitializeResult
	if err := wirejson.Unmarshal(raw, &r); err != nil {
		return &ProtocolError{Op: mcp.MethodInitialize, Reason: "result is not an InitializeResult", Err: err}
	}
	if !slices.Contains(legacyAccepted, r.ProtocolVersion) {
		return &ProtocolError{Op: mcp.MethodInitialize, Reason: fmt.Sprintf("server chose protocol version %q, which this client does not speak (it speaks %v)", r.ProtocolVersion, legacyAccepted)}
	}
	c.setState(func(s *state) {
		s.version, s.server, s.caps, s.instructions = r.ProtocolVersion, r.ServerInfo, r.Capabilities, r.Instructions
	})
	if err := c.notify(ctx, mcp.NotificationInitialized, nil); err != nil {
		c.cfg.logger.Warn("cannot send notifications/initialized", "error", err)
	}
	if h, ok := c.conn.(interface{ sessionStarted(context.Context) }); ok {
		h.sessionStarted(ctx)
	}
	return nil
}

// sessionHolder is a link with a session (HTTP, and the HTTP+SSE
// transport, whose session is its event stream).
type sessionHolder interface {
	sessionID() string
	lostSession() string
	loseSession(gone string)
}

// lostSession is the session the server rejected that no re-initialization
// has replaced yet (one failed), "" when there is none.
func (c *Client) lostSession() string {
	if h, ok := c.conn.(sessionHolder); ok {
		return h.lostSession()
	}
	return ""
}

// reinitialize replaces a session the server forgot (gone), once per lost
// session however many calls noticed it. Until it has succeeded the
// client has no session, and each later call tries again, once.
func (c *Client) reinitialize(ctx context.Context, gone string) error {
	c.reinitMu.Lock()
	defer c.reinitMu.Unlock()
	h, ok := c.conn.(sessionHolder)
	if !ok {
		return &SessionInvalidError{Op: "re-initialize", SessionID: gone}
	}
	if h.lostSession() == "" && h.sessionID() != gone {
		return nil // another call already replaced it
	}
	h.loseSession(gone)
	c.tools.drop()
	if err := c.initialize(ctx); err != nil {
		return err
	}
	c.restoreLogLevel(ctx)
	return nil
}
