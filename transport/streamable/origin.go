package streamable

import (
	"net/http"

	"github.com/toolwire/toolwire/jsonrpc"
)

// guard refuses, with 403, a request whose Origin or Host the handler's
// policy (WithAllowedOrigins, WithAllowedHosts; loopback by default) does
// not accept: the defence against DNS rebinding and cross-site requests.
// The policy itself is shared with the OTC endpoint (internal/httpguard).
func (h *Handler) guard(w http.ResponseWriter, r *http.Request) bool {
	if msg := h.policy.Refusal(r); msg != "" {
		writeError(w, http.StatusForbidden, jsonrpc.ID{}, jsonrpc.NewError(jsonrpc.CodeInvalidRequest, "%s", msg))
		return false
	}
	return true
}
