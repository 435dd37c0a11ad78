package streamable

import (
	"net/http"

	"github.com/toolwire/toolwire/jsonrpc"
	"github.com/toolwire/toolwire/mcp"
)

// postModern serves one 2026-era POST statelessly: headers checked against
// the body, then the request answered on a session opened for it alone, so
// two clients' request ids never meet. The reply is JSON, or SSE when
// notifications (progress, subscription events) come first. Closing the
// response cancels the request.
func (h *Handler) postModern(w http.ResponseWriter, r *http.Request, msg jsonrpc.Message) {
	req, ok := msg.(*jsonrpc.Request)
	if !ok {
		// 2026-07-28 defines no client notification or response over HTTP
		// (cancelling is closing the stream); accept and drop it.
		w.WriteHeader(http.StatusAccepted)
		return
	}
	if e := checkModernRequest(r.Header, req, h.tools); e != nil {
		writeError(w, statusFor(&jsonrpc.Response{Error: e}), req.ID, e)
		return
	}
	if req.Method == mcp.MethodInitialize {
		writeError(w, http.StatusNotFound, req.ID, jsonrpc.NewError(jsonrpc.CodeMethodNotFound,
			"method not found: %q is not served in 2026-07-28, which needs no handshake", req.Method))
		return
	}
	sess := h.opener.OpenSession(nil)
	defer sess.Close()
	if e := h.beginModern(sess, req.Method == mcp.MethodSubscriptionListen); e != nil {
		writeError(w, http.StatusServiceUnavailable, req.ID, e)
		return
	}
	defer h.finishModern(sess)

	c := newConn(w, &h.o, h.wd, nil)
	st := &stream{c: c, final: true, onFinal: statusFor, log: h.o.Logger}
	resp := sess.HandleRequest(r.Context(), req, st)
	if resp != nil {
		_ = st.send(resp, true)
	} else {
		st.finishNoReply()
	}
}

// beginModern counts a 2026-era request in and tracks its session, so that
// Shutdown can end subscriptions gracefully.
func (h *Handler) beginModern(sess jsonrpc.Session, listen bool) *jsonrpc.Error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if e := h.beginLocked(); e != nil {
		return e
	}
	h.modern[sess] = listen
	return nil
}

func (h *Handler) finishModern(sess jsonrpc.Session) {
	h.mu.Lock()
	delete(h.modern, sess)
	h.mu.Unlock()
	h.finish()
}
