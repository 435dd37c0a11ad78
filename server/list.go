package server

import (
	"encoding/base64"
	"encoding/json"
	"sort"
	"strings"

	"github.com/toolwire/toolwire/jsonrpc"
	"github.com/toolwire/toolwire/mcp"
)

// Cursors name the last tool of the previous page, so a page boundary stays
// put when tools are added or removed elsewhere in the list.
const cursorPrefix = "tools/v1:"

func encodeCursor(lastName string) string {
	return base64.RawURLEncoding.EncodeToString([]byte(cursorPrefix + lastName))
}

func decodeCursor(c string) (string, bool) {
	b, err := base64.RawURLEncoding.DecodeString(c)
	if err != nil {
		return "", false
	}
	return strings.CutPrefix(string(b), cursorPrefix)
}

func (ss *Session) listTools(params json.RawMessage, peer PeerInfo) (*mcp.ListToolsResult, *jsonrpc.Error) {
	var p mcp.ListToolsParams
	if len(params) > 0 {
		if err := json.Unmarshal(params, &p); err != nil {
			return nil, jsonrpc.NewError(jsonrpc.CodeInvalidParams, "invalid tools/list params: %v", err)
		}
	}
	after := ""
	if p.Cursor != "" {
		name, ok := decodeCursor(p.Cursor)
		if !ok {
			return nil, jsonrpc.NewError(jsonrpc.CodeInvalidParams, "invalid cursor %q: pass back a nextCursor this server returned", p.Cursor)
		}
		after = name
	}
	srv := ss.srv
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
		if peer.Era == mcp.EraModern {
			res.Tools = append(res.Tools, t.modern)
		} else {
			res.Tools = append(res.Tools, t.legacy)
		}
	}
	if end < len(srv.names) {
		res.NextCursor = encodeCursor(srv.names[end-1])
	}
	srv.mu.RUnlock()
	if peer.Era == mcp.EraModern {
		ttl := srv.cfg.listTTL.Milliseconds()
		res.TTLMs, res.CacheScope = &ttl, srv.cfg.cacheScope
	}
	return res, nil
}
