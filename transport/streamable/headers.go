package streamable

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"github.com/toolwire/toolwire/internal/jsonscan"
	"github.com/toolwire/toolwire/internal/wirejson"
	"github.com/toolwire/toolwire/jsonrpc"
	"github.com/toolwire/toolwire/mcp"
)

// HTTP header names MCP defines.
const (
	HeaderSessionID       = mcp.HeaderSessionID
	HeaderProtocolVersion = mcp.HeaderProtocolVersion
	HeaderMethod          = mcp.HeaderMethod
	HeaderName            = mcp.HeaderName
	HeaderParamPrefix     = mcp.HeaderParamPrefix
	HeaderLastEventID     = mcp.HeaderLastEventID
)

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

// metaRead is what the transport reads of a request's params._meta.
type metaRead struct {
	hasMeta    bool
	version    []byte // raw JSON value of protocolVersion, nil when absent
	caps       []byte // raw JSON value of clientCapabilities, nil when absent
	malformed  error  // why params or _meta could not be read
	versionStr string
}

var (
	metaKey     = []string{"_meta"}
	metaMembers = []string{mcp.MetaProtocolVersion, mcp.MetaClientCapabilities}
)

// readMeta reads params._meta's protocol version and client capabilities
// without decoding the params: the scanner handles the common shape and the
// exact decoder anything else.
func readMeta(params []byte) metaRead {
	// A member name spelled with escapes ("_m\u0065ta") is still _meta:
	// params with any backslash are scanned, and the scanner hands escaped
	// names to the exact decoder.
	if len(params) == 0 || !bytes.Contains(params, []byte(`"_meta"`)) && bytes.IndexByte(params, '\\') < 0 {
		return metaRead{} // the common 2025-era call: nothing allocated
	}
	return scanMeta(params)
}

// scanMeta is readMeta for params that may hold _meta.
func scanMeta(params []byte) metaRead {
	var m metaRead
	var meta []byte
	ok := jsonscan.Members(params, metaKey, func(_, v []byte) bool { meta = v; return true })
	if ok && meta != nil && string(meta) != "null" {
		ok = jsonscan.Members(meta, metaMembers, func(name, v []byte) bool {
			if string(name) == mcp.MetaProtocolVersion {
				m.version = v
			} else {
				m.caps = v
			}
			return true
		})
	}
	if !ok {
		var w struct {
			Meta map[string]json.RawMessage `json:"_meta"`
		}
		if err := wirejson.Unmarshal(params, &w); err != nil {
			m.malformed = err
			return m
		}
		if w.Meta == nil {
			return m
		}
		meta = []byte("{}")
		m.version, m.caps = w.Meta[mcp.MetaProtocolVersion], w.Meta[mcp.MetaClientCapabilities]
	}
	m.hasMeta = meta != nil && string(meta) != "null"
	if m.version != nil {
		if v, plain := jsonscan.PlainString(m.version); plain {
			m.versionStr = string(v)
		} else if wirejson.Unmarshal(m.version, &m.versionStr) != nil {
			m.version = nil // not a string
		}
	}
	return m
}

// metaVersion reads params._meta's protocol version; present is true when
// the member exists at all.
func metaVersion(params []byte) (version string, present bool) {
	m := readMeta(params)
	return m.versionStr, m.version != nil
}

// checkModernRequest applies the 2026-07-28 HTTP rules the transport owns,
// in the order clients can rely on: the version header, the _meta members,
// the version header against _meta, then Mcp-Method. Mcp-Name and
// Mcp-Param-* mirror params members whose meaning only the server knows; it
// checks them.
func checkModernRequest(h http.Header, req *jsonrpc.Request) *jsonrpc.Error {
	hv, hasHV, err := singleHeader(h, HeaderProtocolVersion)
	if err != nil {
		return headerMismatch("%v", err)
	}
	if !hasHV {
		return headerMismatch("the MCP-Protocol-Version header is required on every request")
	}
	m := readMeta(req.Params)
	if m.malformed != nil {
		return jsonrpc.NewError(jsonrpc.CodeInvalidParams, "invalid params: %v", m.malformed)
	}
	if m.version == nil {
		return jsonrpc.NewError(jsonrpc.CodeInvalidParams, "params._meta must carry %q as a string", mcp.MetaProtocolVersion)
	}
	if len(m.caps) == 0 || m.caps[0] != '{' {
		return jsonrpc.NewError(jsonrpc.CodeInvalidParams, "params._meta must carry %q as an object", mcp.MetaClientCapabilities)
	}
	if hv != m.versionStr {
		return headerMismatch("MCP-Protocol-Version header %q does not match _meta protocolVersion %q", hv, m.versionStr)
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
	return nil
}
