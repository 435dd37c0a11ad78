package server

import (
	"encoding/json"
	"errors"
	"strconv"

	"github.com/toolwire/toolwire/internal/jsonscan"
	"github.com/toolwire/toolwire/internal/jsonstr"
	"github.com/toolwire/toolwire/internal/wirejson"
	"github.com/toolwire/toolwire/jsonrpc"
	"github.com/toolwire/toolwire/mcp"
)

// encodeParams encodes request params; raw JSON passes through.
func encodeParams(v any) (json.RawMessage, error) {
	if raw, ok := v.(json.RawMessage); ok {
		return raw, nil
	}
	return json.Marshal(v)
}

// encodeResult encodes a result for an era, without stamping.
func encodeResult(result any, era mcp.Era) (json.RawMessage, error) {
	switch r := result.(type) {
	case json.RawMessage:
		if len(r) == 0 {
			return json.RawMessage(`{}`), nil
		}
		return r, nil
	case mcp.EraEncoder:
		return r.AppendEra(nil, era)
	case mcp.Appender:
		return r.AppendJSON(nil)
	case nil:
		return json.RawMessage(`{}`), nil
	}
	return json.Marshal(result)
}

var errInputRequiredLegacy = jsonrpc.NewError(jsonrpc.CodeInternalError,
	"the server answered with an input_required result, which exists only in 2026-07-28; a 2025-era handler must ask the client with a server-to-client request instead")

// encodeFor encodes a handler's result for the era of the request it
// answers. 2026-07-28 results are stamped once, here, for every method:
// resultType from the result's kind, the server's identity in
// _meta[io.modelcontextprotocol/serverInfo], and ttlMs/cacheScope on
// cacheable (list) results; members the handler set are kept.
func (s *Server) encodeFor(c *call, result any) (json.RawMessage, error) {
	era := c.Peer.Era
	kind := mcp.KindOf(result)
	if era != mcp.EraModern {
		if kind == mcp.ResultInputRequired {
			return nil, errInputRequiredLegacy
		}
		return encodeResult(result, era)
	}
	raw, err := encodeResult(result, era)
	if err != nil {
		return nil, err
	}
	cacheable := c.m != nil && c.m.Cacheable
	// The common tool result has neither _meta nor resultType: its stamps
	// are appended without scanning it.
	if r, ok := result.(*mcp.CallToolResult); ok && r.Meta == nil && r.ResultType == "" && !cacheable {
		return s.stampAppend(raw, kind, false, false, true), nil
	}
	return s.stamp(raw, kind, cacheable)
}

var stampMembers = []string{"resultType", "_meta", "ttlMs", "cacheScope"}

// stamp adds what a 2026-07-28 result must carry and raw lacks.
func (s *Server) stamp(raw json.RawMessage, kind mcp.ResultType, cacheable bool) (json.RawMessage, error) {
	var hasType, hasTTL, hasScope bool
	var meta []byte
	ok := jsonscan.Members(raw, stampMembers, func(name, v []byte) bool {
		switch string(name) {
		case "resultType":
			hasType = true
		case "_meta":
			meta = v
		case "ttlMs":
			hasTTL = true
		case "cacheScope":
			hasScope = true
		}
		return true
	})
	if !ok {
		return s.stampSlow(raw, kind, cacheable)
	}
	if meta != nil && string(meta) != "null" {
		if len(meta) == 0 || meta[0] != '{' {
			return nil, errors.New("result _meta is not an object")
		}
		hasInfo := false
		if !jsonscan.Members(meta, []string{mcp.MetaServerInfo}, func(_, _ []byte) bool { hasInfo = true; return true }) {
			return s.stampSlow(raw, kind, cacheable)
		}
		if !hasInfo {
			// Insert the server's identity as _meta's first member.
			at := cap(raw) - cap(meta) + 1
			out := make([]byte, 0, len(raw)+len(s.infoMember)+1)
			out = append(out, raw[:at]...)
			out = append(out, s.infoMember...)
			if !emptyObject(meta) {
				out = append(out, ',')
			}
			raw = append(out, raw[at:]...)
		}
		return s.stampAppend(raw, kind, hasType, true, !cacheable || hasTTL && hasScope), nil
	}
	return s.stampAppend(raw, kind, hasType, false, !cacheable || hasTTL && hasScope), nil
}

// emptyObject reports whether v, a valid JSON object, has no members.
func emptyObject(v []byte) bool {
	for _, c := range v[1:] {
		switch c {
		case ' ', '\t', '\n', '\r':
			continue
		case '}':
			return true
		}
		return false
	}
	return false
}

// stampAppend appends the missing stamps before raw's closing brace.
func (s *Server) stampAppend(raw json.RawMessage, kind mcp.ResultType, hasType, hasMeta, hasCache bool) json.RawMessage {
	if hasType && hasMeta && hasCache {
		return raw
	}
	end := len(raw) - 1
	for end > 0 && raw[end] != '}' {
		end--
	}
	body := raw[:end]
	empty := true
	for i := 1; i < len(body); i++ {
		if c := body[i]; c != ' ' && c != '\t' && c != '\n' && c != '\r' {
			empty = false
			break
		}
	}
	out := make([]byte, 0, len(raw)+len(s.infoMember)+80)
	out = append(out, body...)
	sep := func() {
		if !empty {
			out = append(out, ',')
		}
		empty = false
	}
	if !hasType {
		sep()
		out = append(out, `"resultType":`...)
		out = jsonstr.Append(out, string(kind))
	}
	if !hasCache {
		sep()
		out = append(out, `"ttlMs":`...)
		out = strconv.AppendInt(out, s.cfg.listTTL.Milliseconds(), 10)
		out = append(out, `,"cacheScope":`...)
		out = jsonstr.Append(out, string(s.cfg.cacheScope))
	}
	if !hasMeta {
		sep()
		out = append(out, `"_meta":{`...)
		out = append(out, s.infoMember...)
		out = append(out, '}')
	}
	return append(out, '}')
}

// stampSlow stamps a result the scanner declines, through a map decoded by
// the strict reader: a result naming a member twice is an error, not sent
// as whichever of its readings a lenient decoder would keep.
func (s *Server) stampSlow(raw json.RawMessage, kind mcp.ResultType, cacheable bool) (json.RawMessage, error) {
	var m map[string]json.RawMessage
	if err := wirejson.Unmarshal(raw, &m); err != nil {
		return nil, err
	}
	if _, ok := m["resultType"]; !ok {
		m["resultType"], _ = json.Marshal(kind)
	}
	if cacheable {
		if _, ok := m["ttlMs"]; !ok {
			m["ttlMs"], _ = json.Marshal(s.cfg.listTTL.Milliseconds())
		}
		if _, ok := m["cacheScope"]; !ok {
			m["cacheScope"], _ = json.Marshal(s.cfg.cacheScope)
		}
	}
	var meta map[string]json.RawMessage
	if raw, ok := m["_meta"]; ok && string(raw) != "null" {
		if err := wirejson.Unmarshal(raw, &meta); err != nil {
			return nil, errors.New("result _meta is not an object")
		}
	}
	if meta == nil {
		meta = map[string]json.RawMessage{}
	}
	if _, ok := meta[mcp.MetaServerInfo]; !ok {
		meta[mcp.MetaServerInfo] = s.infoJSON
	}
	m["_meta"], _ = json.Marshal(meta)
	return json.Marshal(m)
}
