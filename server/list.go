package server

import (
	"context"
	"encoding/base64"
	"sort"
	"strings"

	"github.com/toolwire/toolwire/jsonrpc"
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
	after := ""
	if p.Cursor != "" {
		name, ok := decodeCursor(cursorPrefix, p.Cursor)
		if !ok {
			return nil, jsonrpc.NewError(jsonrpc.CodeInvalidParams, "invalid cursor %q: pass back a nextCursor this server returned", p.Cursor)
		}
		after = name
	}
	srv := s
	size := srv.cfg.pageSize
	res := &mcp.ListToolsResult{}
	srv.mu.RLock()
	start := 0
	if p.Cursor != "" {
		start = sort.SearchStrings(srv.names, after)
		if start < len(srv.names) && srv.names[start] == after {
			start++
		}
	}
	end := min(start+size, len(srv.names))
	res.Tools = make([]*mcp.Tool, 0, end-start)
	for _, n := range srv.names[start:end] {
		t := srv.tools[n]
		if r.Peer.Era == mcp.EraModern {
			res.Tools = append(res.Tools, t.modern)
		} else {
			res.Tools = append(res.Tools, t.legacy)
		}
	}
	if end < len(srv.names) {
		res.NextCursor = encodeCursor(cursorPrefix, srv.names[end-1])
	}
	srv.mu.RUnlock()
	return res, nil
}
