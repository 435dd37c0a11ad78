// Package floor is the benchmark's floor: a bare net/http handler that
// decodes a JSON-RPC request with encoding/json, dispatches on the tool name
// and writes a fixed-shape result. No MCP library, no validation, no session
// state: what any MCP server must at least spend on a call.
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
}

type text struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

type callResult struct {
	Content           []text `json:"content"`
	StructuredContent any    `json:"structuredContent,omitempty"`
}

var initResult = map[string]any{
	"protocolVersion": "2025-11-25",
	"capabilities":    map[string]any{"tools": map[string]any{}},
	"serverInfo":      map[string]any{"name": "floor", "version": "1.0.0"},
}

// handle answers one request; ok is false for a notification (no reply).
func handle(body []byte) (resp *response, ok bool) {
	var req request
	if err := json.Unmarshal(body, &req); err != nil {
		return &response{JSONRPC: "2.0", ID: json.RawMessage("null"), Error: &rpcError{-32700, "parse error"}}, true
	}
	if len(req.ID) == 0 {
		return nil, false
	}
	resp = &response{JSONRPC: "2.0", ID: req.ID}
	switch req.Method {
	case "initialize":
		resp.Result = initResult
	case "ping":
		resp.Result = struct{}{}
	case "tools/call":
		switch req.Params.Name {
		case tools.Echo:
			var in tools.EchoIn
			_ = json.Unmarshal(req.Params.Arguments, &in)
			resp.Result = callResult{Content: []text{{"text", in.Message}}}
		case tools.Add:
			var in tools.AddIn
			_ = json.Unmarshal(req.Params.Arguments, &in)
			out := tools.AddOut{Sum: in.A + in.B}
			resp.Result = callResult{Content: []text{{"text", `{"sum":` + strconv.FormatFloat(out.Sum, 'g', -1, 64) + `}`}}, StructuredContent: out}
		case tools.Big:
			resp.Result = callResult{Content: []text{{"text", tools.BigText}}}
		default:
			resp.Error = &rpcError{-32602, "unknown tool"}
		}
	default:
		resp.Error = &rpcError{-32601, "method not found"}
	}
	return resp, true
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
		resp, ok := handle(body)
		if !ok {
			w.WriteHeader(http.StatusAccepted)
			return
		}
		w.Header().Set("Content-Type", "application/json")
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
		resp, ok := handle(sc.Bytes())
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
