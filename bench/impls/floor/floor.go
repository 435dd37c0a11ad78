// Package floor is the benchmark's floor: a bare net/http handler that
// decodes a JSON-RPC request with encoding/json, dispatches on the tool name
// and writes a fixed-shape result. No MCP library, no argument validation, no
// session state: what any MCP server must at least spend on a call.
//
// It serves both eras on one endpoint, as the servers it is compared with
// do: 2025-11-25 (initialize, then calls; it assigns no session id, which
// the protocol allows) and the stateless 2026-07-28 (see modern.go), where it
// applies the rules every correct server must (the version header against
// _meta, clientCapabilities present, Mcp-Method and Mcp-Name against the
// body) and answers with resultType and its serverInfo. It also answers
// tools/list (see list.go) so that clients which list tools before calling
// them (to check structuredContent against outputSchema) can be benchmarked
// against it.
package floor

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"strconv"

	"github.com/toolwire/toolwire/bench/tools"
)

type request struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id,omitempty"`
	Method  string          `json:"method"`
	Params  struct {
		Name      string          `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
		Meta      *requestMeta    `json:"_meta"`
	} `json:"params"`
}

type response struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Result  any             `json:"result,omitempty"`
	Error   *rpcError       `json:"error,omitempty"`
}

type rpcError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
	Data    any    `json:"data,omitempty"`
}

type text struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

type callResult struct {
	Content           []text      `json:"content"`
	StructuredContent any         `json:"structuredContent,omitempty"`
	ResultType        string      `json:"resultType,omitempty"` // 2026-07-28 only
	Meta              *resultMeta `json:"_meta,omitempty"`      // 2026-07-28 only
}

// LegacyVersion is the session revision the floor answers initialize with.
const LegacyVersion = "2025-11-25"

// Name and Version are the floor's serverInfo.
const (
	Name    = "floor"
	Version = "1.0.0"
)

var initResult = map[string]any{
	"protocolVersion": LegacyVersion,
	"capabilities":    map[string]any{"tools": map[string]any{}},
	"serverInfo":      map[string]any{"name": Name, "version": Version},
}

// JSON-RPC error codes the floor answers with.
const (
	codeParse          = -32700
	codeMethodNotFound = -32601
	codeInvalidParams  = -32602
	codeHeaderMismatch = -32020
	codeUnsupported    = -32022
)

// handle answers one request. hdr is the HTTP request's header (nil over
// stdio, where no header rule applies). status is the HTTP status to answer
// with; ok is false for a notification (no reply).
func handle(body []byte, hdr http.Header) (status int, resp *response, ok bool) {
	var req request
	if err := json.Unmarshal(body, &req); err != nil {
		return http.StatusBadRequest, &response{JSONRPC: "2.0", ID: json.RawMessage("null"), Error: &rpcError{Code: codeParse, Message: "parse error"}}, true
	}
	if len(req.ID) == 0 {
		return http.StatusAccepted, nil, false
	}
	resp = &response{JSONRPC: "2.0", ID: req.ID}
	if isModern(&req, hdr) {
		return handleModern(&req, hdr, resp), resp, true
	}
	switch req.Method {
	case "initialize":
		resp.Result = initResult
	case "ping":
		resp.Result = struct{}{}
	case "tools/list":
		resp.Result = toolList
	case "tools/call":
		if res, e := call(&req); e != nil {
			resp.Error = e
		} else {
			resp.Result = res
		}
	default:
		resp.Error = &rpcError{Code: codeMethodNotFound, Message: "method not found"}
	}
	return http.StatusOK, resp, true
}

// call runs one tools/call of either era; the result is the 2025-11-25 shape.
func call(req *request) (*callResult, *rpcError) {
	switch req.Params.Name {
	case tools.Echo:
		var in tools.EchoIn
		_ = json.Unmarshal(req.Params.Arguments, &in)
		return &callResult{Content: []text{{"text", in.Message}}}, nil
	case tools.Add:
		var in tools.AddIn
		_ = json.Unmarshal(req.Params.Arguments, &in)
		out := tools.AddOut{Sum: in.A + in.B}
		return &callResult{Content: []text{{"text", `{"sum":` + strconv.FormatFloat(out.Sum, 'g', -1, 64) + `}`}}, StructuredContent: out}, nil
	case tools.Big:
		return &callResult{Content: []text{{"text", tools.BigText}}}, nil
	}
	return nil, &rpcError{Code: codeInvalidParams, Message: "unknown tool"}
}

// Handler returns the floor's HTTP handler: POST only, JSON replies.
func Handler() (http.Handler, error) {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			w.WriteHeader(http.StatusMethodNotAllowed)
			return
		}
		body, err := io.ReadAll(r.Body)
		if err != nil {
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		status, resp, ok := handle(body, r.Header)
		if !ok {
			w.WriteHeader(http.StatusAccepted)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		if status != http.StatusOK {
			w.WriteHeader(status)
		}
		_ = json.NewEncoder(w).Encode(resp)
	}), nil
}

// ServeStdio answers newline-delimited requests on stdin, one at a time.
func ServeStdio(ctx context.Context) error {
	sc := bufio.NewScanner(os.Stdin)
	sc.Buffer(make([]byte, 64<<10), 8<<20)
	bw := bufio.NewWriter(os.Stdout)
	enc := json.NewEncoder(bw)
	for sc.Scan() {
		_, resp, ok := handle(sc.Bytes(), nil)
		if !ok {
			continue
		}
		if err := enc.Encode(resp); err != nil {
			return err
		}
		if err := bw.Flush(); err != nil {
			return err
		}
	}
	return sc.Err()
}
