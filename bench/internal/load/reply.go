// Package load is the benchmark's one load generator: plain net/http
// JSON-RPC over keep-alive connections (and newline-delimited JSON over a
// child's stdio), reading SSE where a server answers with it, and checking
// every reply against what the tool must return.
package load

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"

	"github.com/toolwire/toolwire/bench/tools"
)

// ProtocolVersion is the revision every client negotiates: the one all four
// servers speak with sessions.
const ProtocolVersion = "2025-11-25"

// reply is a JSON-RPC response as the checker needs it.
type reply struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Method  string          `json:"method"`
	Result  json.RawMessage `json:"result"`
	Error   *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// CallResult is the part of a tools/call result the checks read.
type CallResult struct {
	Content []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	} `json:"content"`
	StructuredContent json.RawMessage `json:"structuredContent"`
	IsError           bool            `json:"isError"`
	// ResultType and Meta are what a 2026-07-28 result adds (CheckComplete).
	ResultType string `json:"resultType"`
	Meta       struct {
		ServerInfo *struct {
			Name    string `json:"name"`
			Version string `json:"version"`
		} `json:"io.modelcontextprotocol/serverInfo"`
	} `json:"_meta"`
}

// Check verifies one tools/call result.
type Check func(*CallResult) error

// parseReply finds the response with the given id in a JSON body or, when
// sse is set, among the data of SSE events (other events are skipped).
func parseReply(body []byte, sse bool, id int64) (*reply, error) {
	want := strconv.FormatInt(id, 10)
	if !sse {
		return decodeReply(body, want)
	}
	var data []byte
	sc := bufio.NewScanner(bytes.NewReader(body))
	sc.Buffer(make([]byte, 0, 64<<10), 64<<20)
	flush := func() (*reply, error) {
		if len(bytes.TrimSpace(data)) == 0 {
			data = data[:0]
			return nil, nil
		}
		r, err := decodeReply(data, want)
		data = data[:0]
		if errors.Is(err, errOtherID) {
			return nil, nil
		}
		return r, err
	}
	for sc.Scan() {
		line := sc.Bytes()
		if len(line) == 0 {
			if r, err := flush(); r != nil || err != nil {
				return r, err
			}
			continue
		}
		if v, ok := bytes.CutPrefix(line, []byte("data:")); ok {
			if len(data) > 0 {
				data = append(data, '\n')
			}
			data = append(data, bytes.TrimPrefix(v, []byte(" "))...)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("reading SSE: %w", err)
	}
	if r, err := flush(); r != nil || err != nil {
		return r, err
	}
	return nil, fmt.Errorf("no SSE event carried the response to id %s", want)
}

var errOtherID = errors.New("message for another id")

func decodeReply(b []byte, wantID string) (*reply, error) {
	var r reply
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("bad JSON reply %.200q: %w", b, err)
	}
	if r.Method != "" || string(r.ID) != wantID {
		return nil, errOtherID
	}
	if r.JSONRPC != "2.0" {
		return nil, fmt.Errorf("reply jsonrpc = %q", r.JSONRPC)
	}
	return &r, nil
}

// callResult turns a reply into a tools/call result, or the JSON-RPC error.
func (r *reply) callResult() (*CallResult, error) {
	if r.Error != nil {
		return nil, fmt.Errorf("JSON-RPC error %d: %s", r.Error.Code, r.Error.Message)
	}
	var res CallResult
	if err := json.Unmarshal(r.Result, &res); err != nil {
		return nil, fmt.Errorf("bad tools/call result %.200q: %w", r.Result, err)
	}
	return &res, nil
}

func oneText(res *CallResult) (string, error) {
	if res.IsError {
		return "", fmt.Errorf("isError result: %.200q", firstText(res))
	}
	if len(res.Content) != 1 || res.Content[0].Type != "text" {
		return "", fmt.Errorf("want one text block, got %d blocks", len(res.Content))
	}
	return res.Content[0].Text, nil
}

func firstText(res *CallResult) string {
	if len(res.Content) > 0 {
		return res.Content[0].Text
	}
	return ""
}

// EchoArgs and CheckEcho: the echo tool returns its message as one text block.
func EchoArgs(msg string) []byte { return []byte(`{"message":` + strconv.Quote(msg) + `}`) }

// CheckEcho expects msg back.
func CheckEcho(msg string) Check {
	return func(res *CallResult) error {
		got, err := oneText(res)
		if err != nil {
			return err
		}
		if got != msg {
			return fmt.Errorf("echo returned %.100q, want %q", got, msg)
		}
		return nil
	}
}

// AddArgs builds add's arguments.
func AddArgs(a, b float64) []byte {
	return []byte(`{"a":` + strconv.FormatFloat(a, 'g', -1, 64) + `,"b":` + strconv.FormatFloat(b, 'g', -1, 64) + `}`)
}

// CheckAdd expects structuredContent {sum: a+b} and a text block carrying the
// same JSON for clients that read only content.
func CheckAdd(a, b float64) Check {
	return func(res *CallResult) error {
		if res.IsError {
			return fmt.Errorf("isError result: %.200q", firstText(res))
		}
		var sc tools.AddOut
		if err := json.Unmarshal(res.StructuredContent, &sc); err != nil {
			return fmt.Errorf("structuredContent %.100q: %w", res.StructuredContent, err)
		}
		if sc.Sum != a+b {
			return fmt.Errorf("structuredContent sum = %v, want %v", sc.Sum, a+b)
		}
		for _, c := range res.Content {
			var fb tools.AddOut
			if c.Type == "text" && json.Unmarshal([]byte(c.Text), &fb) == nil && fb.Sum == a+b {
				return nil
			}
		}
		return fmt.Errorf("no text block carries the sum as JSON")
	}
}

// CheckBig expects the 1 MiB text block exactly.
func CheckBig(res *CallResult) error {
	got, err := oneText(res)
	if err != nil {
		return err
	}
	if got != tools.BigText {
		return fmt.Errorf("big returned %d bytes that differ from the %d expected", len(got), tools.BigSize)
	}
	return nil
}

// CheckRejected expects arguments that break the input schema to be refused:
// an isError result (SEP-1303) or a JSON-RPC error. The check lives here so
// the harness can prove validation is really on.
func CheckRejected(res *CallResult) error {
	if !res.IsError {
		return fmt.Errorf("invalid arguments were accepted: %.100q", firstText(res))
	}
	return nil
}

// ParseCallResult reads the tools/call result with the given id from a reply
// body of the given Content-Type (JSON or SSE).
func ParseCallResult(body []byte, contentType string, id int64) (*CallResult, error) {
	r, err := parseReply(body, bytes.HasPrefix([]byte(contentType), []byte("text/event-stream")), id)
	if err != nil {
		return nil, err
	}
	return r.callResult()
}

// CallBody builds the 2025-11-25 tools/call request with the given id.
func CallBody(id int64, tool string, args []byte) []byte { return callBody(id, tool, args) }
