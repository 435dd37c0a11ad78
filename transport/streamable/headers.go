package streamable

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/toolwire/toolwire/internal/jsonscan"
	"github.com/toolwire/toolwire/jsonrpc"
	"github.com/toolwire/toolwire/mcp"
)

// HTTP header names MCP defines.
const (
	HeaderSessionID       = "Mcp-Session-Id"
	HeaderProtocolVersion = "Mcp-Protocol-Version"
	HeaderMethod          = "Mcp-Method"
	HeaderName            = "Mcp-Name"
	HeaderParamPrefix     = "Mcp-Param-"
	HeaderLastEventID     = "Last-Event-Id"
)

// base64 sentinel wrapping a header value that is not plain ASCII.
const (
	sentinelPrefix = "=?base64?"
	sentinelSuffix = "?="
)

// decodeHeaderValue returns the value a header carries: the decoded bytes of
// the =?base64?...?= form, or the plain value, which must be visible ASCII,
// space or tab.
func decodeHeaderValue(v string) (string, error) {
	if len(v) >= len(sentinelPrefix)+len(sentinelSuffix) && strings.HasPrefix(v, sentinelPrefix) && strings.HasSuffix(v, sentinelSuffix) {
		b, err := base64.StdEncoding.Strict().DecodeString(v[len(sentinelPrefix) : len(v)-len(sentinelSuffix)])
		if err != nil {
			return "", fmt.Errorf("invalid base64 in %q: %v", v, err)
		}
		if !utf8.Valid(b) {
			return "", fmt.Errorf("base64 value %q is not UTF-8", v)
		}
		return string(b), nil
	}
	for i := 0; i < len(v); i++ {
		c := v[i]
		if (c < 0x20 && c != '\t') || c >= 0x7f {
			return "", fmt.Errorf("header value has a byte 0x%02x that needs the =?base64?...?= form", c)
		}
	}
	return v, nil
}

// singleHeader returns the one value of a header; ok is false when it is
// absent, and err set when it appears more than once.
func singleHeader(h http.Header, name string) (string, bool, error) {
	vs := h.Values(name)
	switch len(vs) {
	case 0:
		return "", false, nil
	case 1:
		return strings.TrimSpace(vs[0]), true, nil
	}
	return "", true, fmt.Errorf("header %s appears %d times", name, len(vs))
}

func headerMismatch(format string, args ...any) *jsonrpc.Error {
	return jsonrpc.NewError(mcp.CodeHeaderMismatch, "Header mismatch: "+format, args...)
}

var (
	metaKey    = []string{"_meta"}
	versionKey = []string{mcp.MetaProtocolVersion}
)

// requestMeta is what the handler reads of a modern request's params.
type requestMeta struct {
	Meta map[string]json.RawMessage `json:"_meta"`
}

// metaVersion reads params._meta protocolVersion; present is true when the
// key exists at all.
func metaVersion(params json.RawMessage) (version string, present bool) {
	if len(params) == 0 || !bytes.Contains(params, []byte(`"_meta"`)) {
		return "", false
	}
	// The common shape is scanned without decoding; anything unusual is left
	// to encoding/json below.
	var meta, raw []byte
	if jsonscan.Members(params, metaKey, func(_, v []byte) bool { meta = v; return true }) &&
		(meta == nil || jsonscan.Members(meta, versionKey, func(_, v []byte) bool { raw = v; return true })) {
		if raw == nil {
			return "", false
		}
		if v, ok := jsonscan.PlainString(raw); ok {
			return string(v), true
		}
		var v string
		if json.Unmarshal(raw, &v) != nil {
			return "", true
		}
		return v, true
	}
	return metaVersionSlow(params)
}

// metaVersionSlow is metaVersion through encoding/json, for input the
// scanner declines; kept apart so the fast path allocates nothing.
func metaVersionSlow(params json.RawMessage) (version string, present bool) {
	var m requestMeta
	if json.Unmarshal(params, &m) != nil || m.Meta == nil {
		return "", false
	}
	raw, ok := m.Meta[mcp.MetaProtocolVersion]
	if !ok {
		return "", false
	}
	if json.Unmarshal(raw, &version) != nil {
		return "", true
	}
	return version, true
}

// checkModernRequest applies the 2026-07-28 HTTP rules to one request, in the
// order clients can rely on: the version header, the _meta fields, the
// version header against _meta, then Mcp-Method, Mcp-Name and Mcp-Param-*.
func checkModernRequest(h http.Header, req *jsonrpc.Request, tools ToolLookup) *jsonrpc.Error {
	hv, hasHV, err := singleHeader(h, HeaderProtocolVersion)
	if err != nil {
		return headerMismatch("%v", err)
	}
	if !hasHV {
		return headerMismatch("the MCP-Protocol-Version header is required on every request")
	}
	var m requestMeta
	if len(req.Params) > 0 {
		if err := json.Unmarshal(req.Params, &m); err != nil {
			return jsonrpc.NewError(jsonrpc.CodeInvalidParams, "invalid params: %v", err)
		}
	}
	var mv string
	if raw, ok := m.Meta[mcp.MetaProtocolVersion]; !ok || json.Unmarshal(raw, &mv) != nil {
		return jsonrpc.NewError(jsonrpc.CodeInvalidParams, "params._meta must carry %q as a string", mcp.MetaProtocolVersion)
	}
	if raw, ok := m.Meta[mcp.MetaClientCapabilities]; !ok || !isObject(raw) {
		return jsonrpc.NewError(jsonrpc.CodeInvalidParams, "params._meta must carry %q as an object", mcp.MetaClientCapabilities)
	}
	if hv != mv {
		return headerMismatch("MCP-Protocol-Version header %q does not match _meta protocolVersion %q", hv, mv)
	}
	method, hasMethod, err := singleHeader(h, HeaderMethod)
	switch {
	case err != nil:
		return headerMismatch("%v", err)
	case !hasMethod:
		return headerMismatch("the Mcp-Method header is required")
	case method != req.Method:
		return headerMismatch("Mcp-Method header %q does not match body method %q", method, req.Method)
	}
	if field := nameField(req.Method); field != "" {
		if e := checkNameHeader(h, req.Params, field); e != nil {
			return e
		}
	}
	if req.Method == mcp.MethodCallTool && tools != nil {
		return checkParamHeaders(h, req.Params, tools)
	}
	return nil
}

func isObject(raw json.RawMessage) bool {
	raw = bytes.TrimSpace(raw)
	return len(raw) > 0 && raw[0] == '{'
}

// nameField is the params member Mcp-Name mirrors for a method, or "".
func nameField(method string) string {
	switch method {
	case mcp.MethodCallTool, "prompts/get":
		return "name"
	case "resources/read":
		return "uri"
	case "tasks/get", "tasks/update", "tasks/cancel":
		return "taskId"
	}
	return ""
}

func checkNameHeader(h http.Header, params json.RawMessage, field string) *jsonrpc.Error {
	var p map[string]json.RawMessage
	if len(params) > 0 && json.Unmarshal(params, &p) != nil {
		return nil // the session reports malformed params
	}
	var body string
	if raw, ok := p[field]; !ok || json.Unmarshal(raw, &body) != nil {
		return nil // the session reports the missing member
	}
	v, ok, err := singleHeader(h, HeaderName)
	if err != nil {
		return headerMismatch("%v", err)
	}
	if !ok {
		return headerMismatch("the Mcp-Name header is required: the body names %q", body)
	}
	got, err := decodeHeaderValue(v)
	if err != nil {
		return headerMismatch("Mcp-Name: %v", err)
	}
	if got != body {
		return headerMismatch("Mcp-Name header value %q does not match body value %q", got, body)
	}
	return nil
}

// headerParam is one inputSchema property annotated with x-mcp-header.
type headerParam struct {
	header string
	path   []string
}

// headerParams lists the x-mcp-header annotations of an inputSchema,
// following chains of "properties" from the root only, as the spec says.
func headerParams(schema json.RawMessage) []headerParam {
	var root map[string]any
	if json.Unmarshal(schema, &root) != nil {
		return nil
	}
	var out []headerParam
	var walk func(node map[string]any, path []string, depth int)
	walk = func(node map[string]any, path []string, depth int) {
		props, _ := node["properties"].(map[string]any)
		if depth > 32 {
			return
		}
		for name, v := range props {
			prop, ok := v.(map[string]any)
			if !ok {
				continue
			}
			p := append(append([]string(nil), path...), name)
			if hn, ok := prop["x-mcp-header"].(string); ok && hn != "" {
				out = append(out, headerParam{header: hn, path: p})
			}
			walk(prop, p, depth+1)
		}
	}
	walk(root, nil, 0)
	return out
}

// checkParamHeaders checks each annotated argument present in the body
// against its Mcp-Param-* header.
func checkParamHeaders(h http.Header, params json.RawMessage, tools ToolLookup) *jsonrpc.Error {
	var p struct {
		Name      string          `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
	}
	if json.Unmarshal(params, &p) != nil {
		return nil
	}
	t, ok := tools.Tool(p.Name)
	if !ok {
		return nil
	}
	hps := headerParams(t.InputSchema)
	if len(hps) == 0 {
		return nil
	}
	var args any
	if len(p.Arguments) > 0 {
		dec := json.NewDecoder(bytes.NewReader(p.Arguments))
		dec.UseNumber()
		if dec.Decode(&args) != nil {
			return nil
		}
	}
	for _, hp := range hps {
		val, present := lookupPath(args, hp.path)
		if !present || val == nil {
			continue
		}
		name := HeaderParamPrefix + hp.header
		v, ok, err := singleHeader(h, name)
		if err != nil {
			return headerMismatch("%v", err)
		}
		if !ok {
			return headerMismatch("the %s header is required: argument %q is present", name, strings.Join(hp.path, "."))
		}
		got, err := decodeHeaderValue(v)
		if err != nil {
			return headerMismatch("%s: %v", name, err)
		}
		if !headerMatches(got, val) {
			return headerMismatch("%s header value %q does not match argument %q", name, got, strings.Join(hp.path, "."))
		}
	}
	return nil
}

func lookupPath(v any, path []string) (any, bool) {
	for _, k := range path {
		m, ok := v.(map[string]any)
		if !ok {
			return nil, false
		}
		if v, ok = m[k]; !ok {
			return nil, false
		}
	}
	return v, true
}

// headerMatches compares a decoded header with a body value: strings
// exactly, numbers numerically (42.0 equals 42), booleans as true/false.
func headerMatches(header string, body any) bool {
	switch b := body.(type) {
	case string:
		return header == b
	case bool:
		return header == fmt.Sprint(b)
	case json.Number:
		if !isDecimal(header) {
			return false
		}
		hf, err1 := strconv.ParseFloat(header, 64)
		bf, err2 := strconv.ParseFloat(b.String(), 64)
		return err1 == nil && err2 == nil && hf == bf
	}
	return true // objects and arrays cannot be annotated; nothing to compare
}

// isDecimal accepts an optional minus sign, digits, and an optional
// fraction: the forms a client writes a number in. Exponents and hex are
// refused.
func isDecimal(s string) bool {
	s = strings.TrimPrefix(s, "-")
	intPart, frac, hasFrac := strings.Cut(s, ".")
	digits := func(d string) bool {
		for i := 0; i < len(d); i++ {
			if d[i] < '0' || d[i] > '9' {
				return false
			}
		}
		return d != ""
	}
	return digits(intPart) && (!hasFrac || digits(frac))
}
