package client

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/toolwire/toolwire/internal/wirejson"
	"github.com/toolwire/toolwire/mcp"
)

// outgoing is one request on its way to the wire as the client core carries
// it: the method and the params object the caller, a middleware or an
// input_required round gave, before the client adds its own _meta entries
// (see wireParams).
type outgoing struct {
	method string
	// params is a compact JSON object (no line breaks: stdio frames
	// messages by line; its last byte is the closing brace), or nil for none.
	params json.RawMessage
	// hasMeta says params has a _meta member, which the client's entries are
	// merged into; without one they are appended as a new _meta member.
	hasMeta bool
	// known says tool and args are the tools/call name and arguments params
	// holds (CallTool built it), so that the 2026-07-28 Mcp-Name and
	// Mcp-Param-* headers need no second reading of params.
	known bool
	tool  string
	args  json.RawMessage
}

// newOutgoing reads the params a caller or a middleware gave: anything that
// encodes to a JSON object, or nil. Raw params are read exactly: a member
// named twice is refused rather than silently resolved.
func newOutgoing(method string, params any) (outgoing, error) {
	obj, err := paramsObject(params)
	if err != nil {
		return outgoing{}, err
	}
	return objectOutgoing(method, obj), nil
}

// objectOutgoing is the request for a params object of raw members.
func objectOutgoing(method string, obj map[string]json.RawMessage) outgoing {
	out := outgoing{method: method}
	if len(obj) > 0 {
		out.params = encodeObject(obj)
		_, out.hasMeta = obj["_meta"]
	}
	return out
}

// encodeObject writes an object of raw members, names sorted, each value
// compacted but otherwise as it is (encoding/json would escape <, > and &
// inside raw strings), so that a requestState is echoed byte for byte.
func encodeObject(obj map[string]json.RawMessage) json.RawMessage {
	names := make([]string, 0, len(obj))
	n := 2
	for k, v := range obj {
		names = append(names, k)
		n += len(k) + len(v) + 4
	}
	slices.Sort(names)
	b := make([]byte, 0, n)
	buf := bytes.NewBuffer(b)
	buf.WriteByte('{')
	for i, k := range names {
		if i > 0 {
			buf.WriteByte(',')
		}
		buf.Write(appendJSONString(buf.AvailableBuffer(), k))
		buf.WriteByte(':')
		v := obj[k]
		if len(v) == 0 || json.Compact(buf, v) != nil {
			buf.WriteString("null") // never so: the values were read or encoded as JSON
		}
	}
	buf.WriteByte('}')
	return buf.Bytes()
}

// paramsObject turns params into a mutable object of raw members.
func paramsObject(params any) (map[string]json.RawMessage, error) {
	obj := map[string]json.RawMessage{}
	if params == nil {
		return obj, nil
	}
	raw, ok := params.(json.RawMessage)
	if !ok {
		var err error
		if raw, err = json.Marshal(params); err != nil {
			return nil, fmt.Errorf("client: cannot encode params: %w", err)
		}
	}
	if t := bytes.TrimSpace(raw); len(t) == 0 || string(t) == "null" {
		return obj, nil
	}
	if err := wirejson.Unmarshal(raw, &obj); err != nil {
		return nil, fmt.Errorf("client: params must encode to a JSON object: %w", err)
	}
	return obj, nil
}

// toolCallParams builds the params of a tools/call, {"arguments":…,"name":…}.
// Arguments given as raw JSON are sent as given (line breaks aside) and must
// be a JSON object read exactly; anything else must encode to an object.
// nil and null send no arguments.
func toolCallParams(name string, args any) (outgoing, error) {
	var raw json.RawMessage
	switch a := args.(type) {
	case nil:
	case json.RawMessage:
		if t := bytes.TrimSpace(a); len(t) > 0 && string(t) != "null" {
			var probe map[string]json.RawMessage
			if err := wirejson.Unmarshal(t, &probe); err != nil {
				return outgoing{}, fmt.Errorf("client: the arguments of %q must be a JSON object: %w", name, err)
			}
			raw = t
			if bytes.ContainsAny(raw, "\r\n") {
				var buf bytes.Buffer
				_ = json.Compact(&buf, raw) // valid: just read
				raw = buf.Bytes()
			}
		}
	default:
		enc, err := json.Marshal(args)
		if err != nil {
			return outgoing{}, fmt.Errorf("client: cannot encode the arguments of %q: %w", name, err)
		}
		// encoding/json writes valid, compact JSON: its first byte tells an
		// object from anything else.
		switch t := bytes.TrimSpace(enc); {
		case string(t) == "null":
		case t[0] == '{':
			raw = t
		default:
			return outgoing{}, fmt.Errorf("client: the arguments of %q must be a JSON object, not %s", name, jsonKind(t[0]))
		}
	}
	b := make([]byte, 0, len(`{"arguments":,"name":""}`)+len(raw)+len(name))
	b = append(b, '{')
	if raw != nil {
		b = append(b, `"arguments":`...)
		b = append(b, raw...)
		b = append(b, ',')
	}
	b = append(b, `"name":`...)
	b = appendJSONString(b, name)
	b = append(b, '}')
	return outgoing{method: mcp.MethodCallTool, params: b, known: true, tool: name, args: raw}, nil
}

// jsonKind names the kind of JSON value that starts with c.
func jsonKind(c byte) string {
	switch c {
	case '[':
		return "an array"
	case '"':
		return "a string"
	case 't', 'f':
		return "a boolean"
	}
	return "a number"
}

// appendJSONString appends s as a JSON string, byte for byte as
// encoding/json writes it.
func appendJSONString(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			return append(b, mustJSON(s)...) // escapes, or characters encoding/json escapes
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}

// The _meta entries every 2026-07-28 request carries, as member prefixes.
const (
	metaCapsMember    = `"` + mcp.MetaClientCapabilities + `":`
	metaInfoMember    = `"` + mcp.MetaClientInfo + `":`
	metaVersionMember = `"` + mcp.MetaProtocolVersion + `":`
	metaTokenMember   = `"` + mcp.MetaProgressToken + `":`
	metaLevelMember   = `"` + mcp.MetaLogLevel + `":`
)

// wireParams returns the params a request goes out with: out's, with the
// client's _meta entries (the version, capabilities and clientInfo of a
// 2026-07-28 request, and its log level once SetLogLevel set one; the
// progress token, token, when progress was asked for). caps, when not nil,
// replaces the capabilities declared in a 2026-07-28 request's _meta (a
// request that declares an extension for itself, such as tasks). Every
// request but ping has params, if only {}.
func (c *Client) wireParams(out *outgoing, st *state, token string, caps json.RawMessage) (json.RawMessage, error) {
	modern := st.era == mcp.EraModern
	if caps == nil {
		caps = c.capsJSON
	}
	if out.hasMeta {
		return c.mergeMeta(out, st.version, modern, token, caps)
	}
	if !modern && token == "" {
		if out.params == nil && out.method != mcp.MethodPing {
			return json.RawMessage(`{}`), nil
		}
		return out.params, nil
	}
	var level []byte
	if modern {
		if l := c.logLevel.Load(); l != nil {
			level = *l
		}
	}
	n := len(out.params) + len(`{"_meta":{}}`) + len(metaTokenMember) + len(token) + 2
	if modern {
		n += len(metaCapsMember) + len(caps) + len(metaInfoMember) + len(c.infoJSON) + len(metaVersionMember) + len(st.version) + len(level) + 6
	}
	b := make([]byte, 0, n)
	if len(out.params) == 0 {
		b = append(b, '{')
	} else {
		b = append(b, out.params[:len(out.params)-1]...) // all but the closing brace
		if len(bytes.TrimSpace(b[1:])) > 0 {
			b = append(b, ',')
		}
	}
	b = append(b, `"_meta":{`...)
	if modern {
		b = append(b, metaCapsMember...)
		b = append(b, caps...)
		b = append(b, ',')
		b = append(b, metaInfoMember...)
		b = append(b, c.infoJSON...)
		b = append(b, ',')
		b = append(b, metaVersionMember...)
		b = appendJSONString(b, st.version)
		if level != nil {
			b = append(b, ',')
			b = append(b, level...)
		}
	}
	if token != "" {
		if modern {
			b = append(b, ',')
		}
		b = append(b, metaTokenMember...)
		b = appendJSONString(b, token)
	}
	return append(b, "}}"...), nil
}

// mergeMeta puts the client's _meta entries into the _meta object the
// params already have (an entry of the same name is replaced).
func (c *Client) mergeMeta(out *outgoing, version string, modern bool, token string, caps json.RawMessage) (json.RawMessage, error) {
	var obj map[string]json.RawMessage
	if err := wirejson.Unmarshal(out.params, &obj); err != nil {
		return nil, fmt.Errorf("client: params must encode to a JSON object: %w", err)
	}
	meta := map[string]json.RawMessage{}
	if raw := obj["_meta"]; string(raw) != "null" {
		if err := wirejson.Unmarshal(raw, &meta); err != nil {
			return nil, fmt.Errorf("client: params._meta must be a JSON object: %w", err)
		}
	}
	if modern {
		meta[mcp.MetaProtocolVersion] = mustJSON(version)
		meta[mcp.MetaClientCapabilities] = caps
		meta[mcp.MetaClientInfo] = c.infoJSON
		if l := c.logLevel.Load(); l != nil {
			if _, given := meta[mcp.MetaLogLevel]; !given {
				meta[mcp.MetaLogLevel] = (*l)[len(metaLevelMember):]
			}
		}
	}
	if token != "" {
		meta[mcp.MetaProgressToken] = mustJSON(token)
	}
	if len(meta) == 0 {
		return out.params, nil
	}
	obj["_meta"] = encodeObject(meta)
	return encodeObject(obj), nil
}

// nextRound is the retry of an input_required request: its params with the
// answers to the server's input requests and, when the server sent one, its
// requestState echoed byte for byte.
func nextRound(out outgoing, responses, requestState json.RawMessage) (outgoing, error) {
	obj, err := paramsObject(out.params)
	if err != nil {
		return outgoing{}, err
	}
	delete(obj, "requestState")
	if responses != nil {
		obj["inputResponses"] = responses
	}
	if len(requestState) > 0 && string(requestState) != "null" {
		obj["requestState"] = requestState
	}
	next := objectOutgoing(out.method, obj)
	next.known, next.tool, next.args = out.known, out.tool, out.args
	return next, nil
}

// nameHeaders returns the Mcp-Name value and the Mcp-Param-* headers of a
// 2026-07-28 request over HTTP.
func (c *Client) nameHeaders(out *outgoing) (string, map[string]string) {
	var key string
	switch out.method {
	case mcp.MethodCallTool, mcp.MethodGetPrompt:
		key = "name"
	case "resources/read":
		key = "uri"
	case "tasks/get", "tasks/update", "tasks/cancel":
		key = "taskId"
	default:
		return "", nil
	}
	name, args := out.tool, out.args
	if !out.known {
		var obj map[string]json.RawMessage
		_ = wirejson.Unmarshal(out.params, &obj) // read exactly when it was made
		if raw, ok := obj[key]; ok {
			var s string
			_ = wirejson.Unmarshal(raw, &s) // not a string: no header, the server refuses the body
			name = s
		}
		args = obj["arguments"]
	}
	var params map[string]string
	if out.method == mcp.MethodCallTool {
		if t := c.tools.get(name); t != nil {
			params = paramHeaderValues(t.headers, args)
		}
	}
	return mcp.EncodeHeaderValue(name), params
}

// paramHeaderValues returns the Mcp-Param-* headers for one call's
// arguments: absent and null arguments, objects and arrays get no header.
func paramHeaderValues(hs []mcp.ParamHeader, args json.RawMessage) map[string]string {
	if len(hs) == 0 || len(args) == 0 {
		return nil
	}
	var root any
	if wirejson.UnmarshalUseNumber(args, &root) != nil {
		return nil
	}
	out := map[string]string{}
	for _, h := range hs {
		v := root
		for _, k := range h.Path {
			m, ok := v.(map[string]any)
			if !ok {
				v = nil
				break
			}
			v = m[k]
		}
		if s, ok := mcp.HeaderValueOf(v); ok {
			out[mcp.HeaderParamPrefix+h.Name] = mcp.EncodeHeaderValue(s)
		}
	}
	return out
}
