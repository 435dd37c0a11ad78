package streamable

import (
	"net/http"

	"github.com/toolwire/toolwire/jsonrpc"
	"github.com/toolwire/toolwire/mcp"
	"github.com/toolwire/toolwire/transport"
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
	if e := checkModernRequest(r.Header, req); e != nil {
		writeError(w, statusFor(&jsonrpc.Response{Error: e}), req.ID, e)
		return
	}
	sess := h.opener.OpenSession(nil)
	defer sess.Close()
	listen := req.Method == mcp.MethodSubscriptionListen
	if e := h.beginModern(sess, listen); e != nil {
		writeUnavailable(w, req.ID, e)
		return
	}
	defer h.finishModern(sess, listen)

	c := newConn(w, &h.o, h.wd, "")
	st := &stream{c: c, final: true, onFinal: statusFor, log: h.o.logger}
	resp := sess.HandleRequest(transport.WithHTTPRequest(r.Context(), r), req, st)
	if resp != nil {
		_ = st.send(resp, true)
	} else {
		st.finishNoReply()
	}
}

// beginModern counts a 2026-era request in and tracks a subscription's
// session, so that Shutdown can end it gracefully.
func (h *Handler) beginModern(sess jsonrpc.Session, listen bool) *jsonrpc.Error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if e := h.beginLocked(); e != nil {
		return e
	}
	if listen {
		h.listens[sess] = struct{}{}
	}
	return nil
}

func (h *Handler) finishModern(sess jsonrpc.Session, listen bool) {
	if listen {
		h.mu.Lock()
		delete(h.listens, sess)
		h.mu.Unlock()
	}
	h.finish()
}
