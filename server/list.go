package server

import (
	"context"
	"encoding/base64"
	"strings"

	"github.com/toolwire/toolwire/mcp"
)

// Cursors name the last entry of the previous page, so a page boundary stays
// put when entries are added or removed elsewhere in the list. The prefix
// names the list, so a tools/list cursor is no prompts/list cursor.
const (
	cursorPrefix       = "tools/v1:"
	promptCursorPrefix = "prompts/v1:"
)

func encodeCursor(prefix, lastName string) string {
	return base64.RawURLEncoding.EncodeToString([]byte(prefix + lastName))
}

func decodeCursor(prefix, c string) (string, bool) {
	b, err := base64.RawURLEncoding.DecodeString(c)
	if err != nil {
		return "", false
	}
	return strings.CutPrefix(string(b), prefix)
}

// listTools serves tools/list: one page in name order.
func (s *Server) listTools(_ context.Context, r *Request) (any, error) {
	var p listToolsParams
	if err := decodeParams(r.Method, r.Params, &p); err != nil {
		return nil, err
	}
	s.mu.RLock()
	tools, next, jerr := s.tools.page(cursorPrefix, p.Cursor, s.cfg.pageSize, s.keep(r, ListTools))
	s.mu.RUnlock()
	if jerr != nil {
		return nil, jerr
	}
	res := &mcp.ListToolsResult{Tools: make([]*mcp.Tool, len(tools)), NextCursor: next}
	for i, t := range tools {
		if r.Peer.Era == mcp.EraModern {
			res.Tools[i] = t.modern
		} else {
			res.Tools[i] = t.legacy
		}
	}
	return res, nil
}
