package floor

import (
	"bytes"
	"encoding/json"
	"net/http"
)

// ModernVersion is the stateless revision the floor serves.
const ModernVersion = "2026-07-28"

// HTTP headers and _meta keys of 2026-07-28.
const (
	headerVersion = "Mcp-Protocol-Version"
	headerMethod  = "Mcp-Method"
	headerName    = "Mcp-Name"

	metaVersion    = "io.modelcontextprotocol/protocolVersion"
	metaClientCaps = "io.modelcontextprotocol/clientCapabilities"
	metaServerInfo = "io.modelcontextprotocol/serverInfo"
)

// requestMeta is what the floor reads of a request's params._meta: the
// version and the client's capabilities, which 2026-07-28 requires on every
// request. clientInfo and anything else is skipped by the decoder.
type requestMeta struct {
	ProtocolVersion    string          `json:"io.modelcontextprotocol/protocolVersion"`
	ClientCapabilities json.RawMessage `json:"io.modelcontextprotocol/clientCapabilities"`
}

type implementation struct {
	Name    string `json:"name"`
	Version string `json:"version"`
}

// resultMeta is the _meta every 2026-07-28 result carries: the server's
// identity, since there is no initialize result to carry it.
type resultMeta struct {
	ServerInfo implementation `json:"io.modelcontextprotocol/serverInfo"`
}

var serverMeta = &resultMeta{ServerInfo: implementation{Name: Name, Version: Version}}

// unsupported is the data of a -32022 error.
type unsupported struct {
	Supported []string `json:"supported"`
	Requested string   `json:"requested"`
}

// isModern decides the era of a request as every two-era server must: a
// params._meta that names a protocol version, or a 2026-07-28 version
// header.
func isModern(req *request, hdr http.Header) bool {
	if m := req.Params.Meta; m != nil && m.ProtocolVersion != "" {
		return true
	}
	return hdr != nil && hdr.Get(headerVersion) == ModernVersion
}

// handleModern answers a 2026-07-28 request into resp and returns the HTTP
// status: the request's rules first (checkModern), then tools/call and
// tools/list with resultType "complete" and the server's identity in _meta.
// initialize, which this revision does not have, and unknown methods are
// -32601 (404).
func handleModern(req *request, hdr http.Header, resp *response) int {
	if status, e := checkModern(req, hdr); e != nil {
		resp.Error = e
		return status
	}
	switch req.Method {
	case "tools/call":
		res, e := call(req)
		if e != nil {
			resp.Error = e
			return http.StatusBadRequest
		}
		res.ResultType, res.Meta = "complete", serverMeta
		resp.Result = res
	case "tools/list":
		resp.Result = modernToolList
	default:
		resp.Error = &rpcError{Code: codeMethodNotFound, Message: "method not found"}
		return http.StatusNotFound
	}
	return http.StatusOK
}

// checkModern applies the rules of a 2026-07-28 request: over HTTP (hdr not
// nil) the MCP-Protocol-Version header must equal params._meta's version,
// Mcp-Method the body's method and, for tools/call, Mcp-Name the tool's name
// (else -32020); the version must be one the floor serves (else -32022 with
// the supported list); clientCapabilities must be an object (else -32602).
// All of these are answered with HTTP 400.
func checkModern(req *request, hdr http.Header) (int, *rpcError) {
	var mv string
	var caps json.RawMessage
	if m := req.Params.Meta; m != nil {
		mv, caps = m.ProtocolVersion, m.ClientCapabilities
	}
	if hdr != nil {
		if hv := hdr.Get(headerVersion); hv != mv {
			return http.StatusBadRequest, &rpcError{Code: codeHeaderMismatch, Message: "Header mismatch: " + headerVersion + " header " + hv + " does not match _meta " + metaVersion + " " + mv}
		}
	}
	if mv != ModernVersion {
		return http.StatusBadRequest, &rpcError{Code: codeUnsupported, Message: "unsupported protocol version",
			Data: unsupported{Supported: []string{ModernVersion, LegacyVersion}, Requested: mv}}
	}
	if c := bytes.TrimSpace(caps); len(c) == 0 || c[0] != '{' {
		return http.StatusBadRequest, &rpcError{Code: codeInvalidParams, Message: "params._meta must carry " + metaClientCaps + " as an object"}
	}
	if hdr == nil {
		return http.StatusOK, nil
	}
	if hm := hdr.Get(headerMethod); hm != req.Method {
		return http.StatusBadRequest, &rpcError{Code: codeHeaderMismatch, Message: "Header mismatch: " + headerMethod + " header " + hm + " does not match the body's method " + req.Method}
	}
	if req.Method == "tools/call" {
		if hn := hdr.Get(headerName); hn != req.Params.Name {
			return http.StatusBadRequest, &rpcError{Code: codeHeaderMismatch, Message: "Header mismatch: " + headerName + " header " + hn + " does not match the tool name " + req.Params.Name}
		}
	}
	return http.StatusOK, nil
}
