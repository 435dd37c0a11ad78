package streamable

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"time"

	"github.com/toolwire/toolwire/auth"
	"github.com/toolwire/toolwire/internal/wirejson"
	"github.com/toolwire/toolwire/jsonrpc"
	"github.com/toolwire/toolwire/mcp"
	"github.com/toolwire/toolwire/transport"
)

func (h *Handler) newStream(ls *legacySession, id string, final bool) *stream {
	return &stream{id: id, ls: ls, final: final, retry: h.o.retryInterval, log: h.o.logger}
}

// openSession creates and registers a session for owner, within the session
// cap.
func (h *Handler) openSession(owner string) (*legacySession, *jsonrpc.Error) {
	return h.register(newSessionID(), owner, nil)
}

// register makes a session with id for owner and registers it, within the
// session cap: a new one (resume nil), or, from a SessionStore's record,
// one opened elsewhere (resume rebuilds its jsonrpc.Session).
func (h *Handler) register(id, owner string, resume func(out jsonrpc.Sender) (jsonrpc.Session, error)) (*legacySession, *jsonrpc.Error) {
	h.mu.Lock()
	full := h.sessions[id] == nil && h.noRoomLocked(owner) != nil && h.sweepDueLocked()
	h.mu.Unlock()
	if full {
		h.sweep()
	}
	ls := &legacySession{h: h, id: id, owner: owner, lastActive: h.now(), busy: 1}
	out := jsonrpc.Sender(ls)
	if resume != nil {
		sess, err := resume(out)
		if err != nil {
			h.o.logger.Error("a stored session could not be resumed", "session", id, "error", err)
			return nil, jsonrpc.NewError(jsonrpc.CodeInternalError, "this session could not be resumed here; initialize a new one")
		}
		ls.sess = sess
	}
	h.mu.Lock()
	if h.draining {
		h.mu.Unlock()
		if ls.sess != nil {
			ls.sess.Close()
		}
		return nil, errShuttingDown
	}
	if e := h.noRoomLocked(owner); e != nil && h.sessions[ls.id] == nil {
		h.mu.Unlock()
		if ls.sess != nil {
			ls.sess.Close()
		}
		return nil, e
	}
	if other := h.sessions[ls.id]; other != nil {
		// Resumed by another request meanwhile: use that copy.
		h.mu.Unlock()
		if ls.sess != nil {
			ls.sess.Close()
		}
		other.mu.Lock()
		other.busy++
		other.mu.Unlock()
		return other, nil
	}
	h.sessions[ls.id] = ls
	h.owners[owner]++
	h.janitor.Do(h.startJanitor)
	h.mu.Unlock()
	if ls.sess == nil {
		ls.sess = h.opener.OpenSession(out)
	}
	return ls, nil
}

// noRoomLocked returns the error refusing one more session for owner:
// Limits.MaxSessions, MaxAnonymousSessions or MaxSessionsPerPrincipal
// reached; nil when there is room. h.mu is held.
func (h *Handler) noRoomLocked(owner string) *jsonrpc.Error {
	switch n := h.owners[owner]; {
	case len(h.sessions) >= h.o.maxSessions:
		return jsonrpc.NewError(jsonrpc.CodeOverloaded, "too many sessions: the limit of %d is reached; try again later", h.o.maxSessions)
	case owner == "" && n >= h.o.maxAnonymous:
		return jsonrpc.NewError(jsonrpc.CodeOverloaded, "too many sessions without credentials: their limit of %d is reached; try again later, or authenticate", h.o.maxAnonymous)
	case owner != "" && n >= h.o.maxPerPrincipal:
		return jsonrpc.NewError(jsonrpc.CodeOverloaded, "too many sessions for this principal: its limit of %d is reached; end one (DELETE) or try again later", h.o.maxPerPrincipal)
	}
	return nil
}

// sweepDueLocked reports whether a session cap may sweep for expired
// sessions now: at most once per janitor interval of the handler's clock,
// so a flood of refused initializes does not walk the table each. h.mu is
// held.
func (h *Handler) sweepDueLocked() bool {
	now := h.now()
	if !h.lastSweep.IsZero() && now.Sub(h.lastSweep) < h.sweepEvery() && !now.Before(h.lastSweep) {
		return false
	}
	h.lastSweep = now
	return true
}

// sweepEvery is how often expired sessions are looked for: a quarter of
// the shorter expiry, at least 10 ms.
func (h *Handler) sweepEvery() time.Duration {
	return max(min(h.o.sessionIdleTimeout, h.o.unusedTimeout)/4, 10*time.Millisecond)
}

// dropLocked unregisters the session under id. h.mu is held.
func (h *Handler) dropLocked(id string, ls *legacySession) {
	delete(h.sessions, id)
	if h.owners[ls.owner]--; h.owners[ls.owner] <= 0 {
		delete(h.owners, ls.owner)
	}
}

func (h *Handler) lookup(id string) *legacySession {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.sessions[id]
}

// endSession unregisters and closes a session.
func (h *Handler) endSession(ls *legacySession) {
	h.mu.Lock()
	if h.sessions[ls.id] == ls {
		h.dropLocked(ls.id, ls)
	}
	h.mu.Unlock()
	ls.close()
}

// sessionFor finds the session a request names, answering 400 or 404 itself
// when there is none, and 403 when the request's principal is not the one
// that opened the session: a session id alone never grants another caller's
// session.
func (h *Handler) sessionFor(w http.ResponseWriter, r *http.Request, id jsonrpc.ID) *legacySession {
	sid := strings.TrimSpace(r.Header.Get(HeaderSessionID))
	if sid == "" {
		writeError(w, http.StatusBadRequest, id, jsonrpc.NewError(jsonrpc.CodeInvalidRequest,
			"the Mcp-Session-Id header is required: open a session with initialize (2025-11-25), or send _meta and the MCP-Protocol-Version header (2026-07-28)"))
		return nil
	}
	ls := h.lookup(sid)
	if h.o.sessionStore != nil {
		var ok bool
		if ls, ok = h.sharedSession(w, r, id, sid, ls); !ok {
			return nil
		}
	}
	if ls == nil {
		writeError(w, http.StatusNotFound, id, jsonrpc.NewError(jsonrpc.CodeInvalidRequest, "session not found: it ended or never existed; initialize a new one"))
		return nil
	}
	if auth.PrincipalFrom(r.Context()).Key() != ls.owner {
		h.forbidden(w, id, ls.id)
		return nil
	}
	if !ls.used.Load() {
		ls.used.Store(true)
	}
	return ls
}

// forbidden answers a request on another principal's session: 403.
func (h *Handler) forbidden(w http.ResponseWriter, id jsonrpc.ID, sid string) {
	h.o.logger.Warn("request refused: the session belongs to another principal", "session", sid)
	writeError(w, http.StatusForbidden, id, jsonrpc.NewError(jsonrpc.CodeInvalidRequest, "forbidden: this session was opened by another principal"))
}

// sharedSession checks a session with the SessionStore (one Touch): a
// session the store no longer holds ends here too (nil: 404); one this
// replica does not hold yet is resumed from its record; a stored state newer
// than this replica's copy is applied to it. With the store unreachable a
// session this replica holds is served as it is, and any other gets 503
// (false: the answer is written).
func (h *Handler) sharedSession(w http.ResponseWriter, r *http.Request, id jsonrpc.ID, sid string, local *legacySession) (*legacySession, bool) {
	rec, err := h.o.sessionStore.Touch(r.Context(), sid, h.o.sessionIdleTimeout)
	switch {
	case errors.Is(err, ErrSessionNotFound):
		if local != nil {
			h.endSession(local)
		}
		return nil, true
	case err != nil:
		h.storeFailed("touch", err)
		if local != nil {
			return local, true
		}
		writeError(w, http.StatusServiceUnavailable, id, jsonrpc.NewError(jsonrpc.CodeInternalError,
			"the session store is unavailable, so this replica cannot serve this session now; try again shortly"))
		return nil, false
	}
	if local != nil {
		local.applyStored(rec.State)
		return local, true
	}
	if auth.PrincipalFrom(r.Context()).Key() != rec.Owner {
		h.forbidden(w, id, sid) // checked before anything is built for it
		return nil, false
	}
	resumer, ok := h.opener.(jsonrpc.SessionResumer)
	if !ok {
		h.o.logger.Error("a session store is configured but the server cannot resume sessions (no jsonrpc.SessionResumer)")
		writeError(w, http.StatusInternalServerError, id, jsonrpc.NewError(jsonrpc.CodeInternalError, "this replica cannot resume sessions opened elsewhere"))
		return nil, false
	}
	ls, jerr := h.register(sid, rec.Owner, func(out jsonrpc.Sender) (jsonrpc.Session, error) {
		return resumer.ResumeSession(rec.State, out)
	})
	if jerr != nil {
		writeUnavailable(w, id, jerr)
		return nil, false
	}
	defer ls.release()
	ls.mu.Lock()
	ls.prime = rec.Prime
	ls.mu.Unlock()
	ls.applied(rec.State)
	return ls, true
}

// storeFailed logs a failed SessionStore operation, at most once a
// storeLogEvery: an outage fails every request.
func (h *Handler) storeFailed(op string, err error) {
	now := h.now()
	h.mu.Lock()
	quiet := now.Sub(h.storeLogged) < storeLogEvery
	if !quiet {
		h.storeLogged = now
	}
	h.mu.Unlock()
	if !quiet {
		h.o.logger.Error("session store unavailable: new 2025-era sessions are refused (503) and sessions opened on other replicas cannot be served here until it is back",
			"operation", op, "error", err)
	}
}

// storeLogEvery spaces the log lines of a session store outage.
const storeLogEvery = 10 * time.Second

// requestContext is the context a 2025-era message is served under: the
// HTTP request's values (an authenticated principal, a trace) without its
// cancellation, since a dropped response stream does not cancel the request;
// the session's end or a notifications/cancelled does.
func requestContext(r *http.Request) context.Context {
	return transport.WithHTTPRequest(context.WithoutCancel(r.Context()), r)
}

// legacyVersionOK checks the MCP-Protocol-Version header of a 2025-era
// request: absent means 2025-03-26; anything else must be a revision served.
func legacyVersionOK(w http.ResponseWriter, r *http.Request, id jsonrpc.ID) bool {
	v := strings.TrimSpace(r.Header.Get(HeaderProtocolVersion))
	if v == "" || mcp.EraOf(v) == mcp.EraLegacy {
		return true
	}
	writeError(w, http.StatusBadRequest, id, jsonrpc.NewError(jsonrpc.CodeInvalidRequest,
		"unsupported MCP-Protocol-Version %q: this server speaks %s", v, strings.Join(mcp.SupportedVersions(), ", ")))
	return false
}

// postLegacy serves one 2025-era POST. It reports whether a call took over
// the body's charge to the memory budget (its worker releases it).
func (h *Handler) postLegacy(w http.ResponseWriter, r *http.Request, msg jsonrpc.Message, c *charge) bool {
	var id jsonrpc.ID
	req, isReq := msg.(*jsonrpc.Request)
	if isReq {
		id = req.ID
	}
	if !legacyVersionOK(w, r, id) {
		return false
	}
	if isReq && req.Method == mcp.MethodInitialize {
		if r.Header.Get(HeaderSessionID) != "" {
			writeError(w, http.StatusBadRequest, id, jsonrpc.NewError(jsonrpc.CodeInvalidRequest, "initialize opens a new session: it must not carry Mcp-Session-Id"))
			return false
		}
		h.initialize(w, r, req)
		return false
	}
	ls := h.sessionFor(w, r, id)
	if ls == nil {
		return false
	}
	switch m := msg.(type) {
	case *jsonrpc.Notification:
		ls.touch()
		ls.sess.HandleNotification(requestContext(r), m)
		if forwards(m.Method) {
			if b, err := jsonrpc.Encode(m); err == nil {
				ls.publish(busMessage{Kind: busNotification, Msg: b})
			}
		}
		ls.syncState(r.Context())
		w.Header().Set(HeaderSessionID, ls.id)
		w.WriteHeader(http.StatusAccepted)
	case *jsonrpc.Response:
		ls.touch()
		if d, ok := ls.sess.(jsonrpc.ResponseDeliverer); ok && h.bused() {
			if !d.DeliverResponse(requestContext(r), m) {
				// Not a request of this copy's: the one that asked is
				// elsewhere.
				if b, err := jsonrpc.Encode(m); err == nil {
					ls.publish(busMessage{Kind: busResponse, Msg: b})
				}
			}
		} else {
			ls.sess.HandleResponse(requestContext(r), m)
		}
		w.Header().Set(HeaderSessionID, ls.id)
		w.WriteHeader(http.StatusAccepted)
	case *jsonrpc.Request:
		return h.serveLegacyRequest(w, r, ls, m, c)
	}
	return false
}

// serveLegacyRequest runs a request with its HTTP request's values but not
// its cancellation: if the client drops the response stream the request goes
// on. When the client got an event id of the stream first (its priming
// event, or any event), the remaining events, the reply among them, wait in
// the event store for a GET with Last-Event-ID; when it got none (a plain
// JSON reply not yet begun), nothing could ever resume the stream, so its
// events are not stored at all.
func (h *Handler) serveLegacyRequest(w http.ResponseWriter, r *http.Request, ls *legacySession, req *jsonrpc.Request, charged *charge) bool {
	if !ls.beginCall() {
		w.Header().Set("Retry-After", retryAfterBusy)
		w.Header().Set(HeaderSessionID, ls.id)
		writeError(w, http.StatusTooManyRequests, req.ID, jsonrpc.NewError(jsonrpc.CodeOverloaded,
			"too many requests in flight on this session: the per-session limit of %d is reached; wait for a reply or cancel a request, then try again", h.o.maxPerSession))
		return false
	}
	if e := h.begin(); e != nil {
		ls.endCall()
		writeUnavailable(w, req.ID, e)
		return false
	}
	c := newConn(w, &h.o, h.wd, ls.id)
	st := ls.addStream(c, req.ID)
	if st == nil {
		ls.endCall()
		h.finish()
		writeError(w, http.StatusNotFound, req.ID, jsonrpc.NewError(jsonrpc.CodeInvalidRequest, "session not found: it has ended"))
		return false
	}
	ctx := context.WithValue(requestContext(r), streamKey{}, st)
	h.workers.run(func() {
		defer charged.release()
		defer h.finish()
		defer ls.endCall()
		defer ls.release()
		resp := ls.sess.HandleRequest(ctx, req, st)
		ls.syncState(ctx)
		if resp != nil {
			_ = st.send(resp, true)
		} else {
			st.finishNoReply()
		}
	})
	select {
	case <-c.done:
	case <-r.Context().Done():
		st.detach(c)
	}
	return true
}

// initialize opens a session, bound to the request's principal, and answers
// the handshake with its id.
func (h *Handler) initialize(w http.ResponseWriter, r *http.Request, req *jsonrpc.Request) {
	if admit := h.o.admit; admit != nil {
		if err := admit(r, auth.PrincipalFrom(r.Context())); err != nil {
			var je *jsonrpc.Error
			if !errors.As(err, &je) {
				je = jsonrpc.NewError(jsonrpc.CodeInvalidRequest, "%s", err.Error())
			}
			writeError(w, http.StatusForbidden, req.ID, je)
			return
		}
	}
	if e := h.begin(); e != nil {
		writeUnavailable(w, req.ID, e)
		return
	}
	defer h.finish()
	ls, jerr := h.openSession(auth.PrincipalFrom(r.Context()).Key())
	if jerr != nil {
		writeUnavailable(w, req.ID, jerr)
		return
	}
	defer ls.release()
	resp := ls.sess.HandleRequest(requestContext(r), req, jsonrpc.SenderFunc(func(context.Context, jsonrpc.Message) error {
		return errors.New("streamable: initialize cannot send messages")
	}))
	if resp == nil || resp.Error != nil {
		h.endSession(ls)
		if resp == nil {
			resp = &jsonrpc.Response{ID: req.ID, Error: jsonrpc.NewError(jsonrpc.CodeInternalError, "initialize was not answered")}
		}
		body, _ := jsonrpc.Encode(resp)
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(body)
		return
	}
	var res struct {
		ProtocolVersion string `json:"protocolVersion"`
	}
	if wirejson.Unmarshal(resp.Result, &res) != nil {
		res.ProtocolVersion = ""
	}
	ls.mu.Lock()
	ls.prime = res.ProtocolVersion >= mcp.Version20251125
	ls.mu.Unlock()
	if err := h.storeNew(r.Context(), ls); err != nil {
		h.endSession(ls)
		h.storeFailed("create", err)
		writeError(w, http.StatusServiceUnavailable, req.ID, jsonrpc.NewError(jsonrpc.CodeInternalError,
			"the session store is unavailable, so no session can be opened now; try again shortly, or use 2026-07-28 requests, which need no session"))
		return
	}
	body, err := jsonrpc.Encode(resp)
	if err != nil {
		h.endSession(ls)
		h.o.logger.Warn("initialize result not encodable", "error", err)
		writeError(w, http.StatusInternalServerError, req.ID, jsonrpc.NewError(jsonrpc.CodeInternalError, "internal error: the initialize result could not be encoded"))
		return
	}
	w.Header().Set(HeaderSessionID, ls.id)
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(body)
}

// storeNew puts a session just initialized in the SessionStore, if there
// is one, so that every replica can serve it.
func (h *Handler) storeNew(ctx context.Context, ls *legacySession) error {
	store := h.o.sessionStore
	if store == nil {
		return nil
	}
	st, ok := ls.sess.(jsonrpc.StatefulSession)
	if !ok {
		return errors.New("the server's sessions cannot be snapshotted (no jsonrpc.StatefulSession)")
	}
	snap, err := st.Snapshot()
	if err != nil {
		return err
	}
	ls.mu.Lock()
	rec := &SessionRecord{ID: ls.id, Owner: ls.owner, Prime: ls.prime, State: snap}
	ls.mu.Unlock()
	if err := store.Create(ctx, rec, h.o.sessionIdleTimeout); err != nil {
		return err
	}
	ls.applied(snap)
	return nil
}

// get opens a session's standalone stream, or resumes a stream after the
// event named by Last-Event-ID.
func (h *Handler) get(w http.ResponseWriter, r *http.Request) {
	if modernHeader(r) {
		w.Header().Set("Allow", "POST")
		writeError(w, http.StatusMethodNotAllowed, jsonrpc.ID{}, jsonrpc.NewError(jsonrpc.CodeInvalidRequest, "GET is not served in 2026-07-28: POST each request"))
		return
	}
	if !accepts(r.Header, "text/event-stream") {
		writeError(w, http.StatusNotAcceptable, jsonrpc.ID{}, jsonrpc.NewError(jsonrpc.CodeInvalidRequest, "Accept must list text/event-stream"))
		return
	}
	if !legacyVersionOK(w, r, jsonrpc.ID{}) {
		return
	}
	ls := h.sessionFor(w, r, jsonrpc.ID{})
	if ls == nil {
		return
	}
	h.mu.Lock()
	draining := h.draining
	h.mu.Unlock()
	if draining {
		writeError(w, http.StatusServiceUnavailable, jsonrpc.ID{}, errShuttingDown)
		return
	}
	c := newConn(w, &h.o, h.wd, ls.id)
	var st *stream
	if last := strings.TrimSpace(r.Header.Get(HeaderLastEventID)); last != "" {
		var status int
		var jerr *jsonrpc.Error
		if st, status, jerr = ls.resume(c, last); jerr != nil {
			writeError(w, status, jsonrpc.ID{}, jerr)
			return
		}
		if status == followElsewhere {
			ls.follow(r.Context(), w, c, last)
			return
		}
	} else if st = ls.attachStandalone(c); st == nil {
		writeError(w, http.StatusConflict, jsonrpc.ID{}, jsonrpc.NewError(jsonrpc.CodeInvalidRequest, "this session already has a GET stream open"))
		return
	}
	defer ls.release()
	select {
	case <-c.done:
	case <-r.Context().Done():
		st.detach(c)
	case <-ls.ended():
		st.detach(c)
	}
}

// delete ends a session.
func (h *Handler) delete(w http.ResponseWriter, r *http.Request) {
	if modernHeader(r) {
		w.Header().Set("Allow", "POST")
		writeError(w, http.StatusMethodNotAllowed, jsonrpc.ID{}, jsonrpc.NewError(jsonrpc.CodeInvalidRequest, "DELETE is not served in 2026-07-28: there are no sessions"))
		return
	}
	ls := h.sessionFor(w, r, jsonrpc.ID{})
	if ls == nil {
		return
	}
	if store := h.o.sessionStore; store != nil {
		if err := store.Delete(r.Context(), ls.id); err != nil {
			h.storeFailed("delete", err)
			writeError(w, http.StatusServiceUnavailable, jsonrpc.ID{}, jsonrpc.NewError(jsonrpc.CodeInternalError,
				"the session store is unavailable, so the session cannot be ended for every replica now; try again shortly"))
			return
		}
		ls.publish(busMessage{Kind: busEnd}) // the other replicas' copies end now, not at their next request
	}
	h.endSession(ls)
	w.WriteHeader(http.StatusOK)
}

// sweep ends the sessions idle past the TTL.
func (h *Handler) sweep() {
	now := h.now()
	var expired []*legacySession
	h.mu.Lock()
	for id, ls := range h.sessions {
		if ls.idleFor(now, h.o.sessionIdleTimeout, h.o.unusedTimeout) {
			expired = append(expired, ls)
			h.dropLocked(id, ls)
		}
	}
	h.mu.Unlock()
	for _, ls := range expired {
		if h.shared() {
			// Idle here, not necessarily everywhere: the store expires
			// the session itself once no replica has used it for as long.
			h.o.logger.Debug("idle copy of a shared session dropped", "session", ls.id)
			ls.closeLocal(false)
			continue
		}
		h.o.logger.Debug("session expired", "session", ls.id)
		ls.close()
	}
}

// keepShared restarts the store's expiry of the shared sessions busy here
// (a GET stream held open, a long call), activity the store sees no request
// for, and ends here those the store no longer holds (ended elsewhere).
func (h *Handler) keepShared() {
	store := h.o.sessionStore
	if store == nil {
		return
	}
	var busy []*legacySession
	h.mu.Lock()
	for _, ls := range h.sessions {
		ls.mu.Lock()
		if ls.busy > 0 {
			busy = append(busy, ls)
		}
		ls.mu.Unlock()
	}
	h.mu.Unlock()
	for _, ls := range busy {
		ctx, cancel := context.WithTimeout(context.Background(), storeKeepTimeout)
		_, err := store.Touch(ctx, ls.id, h.o.sessionIdleTimeout)
		cancel()
		switch {
		case errors.Is(err, ErrSessionNotFound):
			h.endSession(ls)
		case err != nil:
			h.storeFailed("touch", err)
		}
	}
}

// storeKeepTimeout bounds one of keepShared's touches.
const storeKeepTimeout = 5 * time.Second

// startJanitor sweeps expired sessions in the background until Close.
func (h *Handler) startJanitor() {
	every := h.sweepEvery()
	h.janitorW.Add(1)
	go func() {
		defer h.janitorW.Done()
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-h.stopJan:
				return
			case <-t.C:
				h.sweep()
				h.keepShared()
			}
		}
	}()
}
