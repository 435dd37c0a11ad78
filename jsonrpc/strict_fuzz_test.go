package jsonrpc

import (
	"bytes"
	stdjson "encoding/json"
	"strconv"
	"strings"
	"testing"

	json "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"golang.org/x/text/cases"

	"github.com/toolwire/toolwire/internal/jsontest"
)

// This file holds a strict reference decoding of a message, written apart
// from Decode and sharing none of its code: the syntax is jsontext's, the
// envelope rules are re-stated from JSON-RPC 2.0 and MCP, and case variants
// are found by full Unicode case folding (golang.org/x/text) rather than
// strings.EqualFold. FuzzDecodeStrict checks that no message Decode accepts
// reads differently here.

// refMessage is the reference's reading of a message.
type refMessage struct {
	code           int64  // 0: accepted; otherwise the JSON-RPC error code
	kind           string // "request", "notification" or "response"
	method, id     string // id as ID.String renders it; a refusal's, the id it carries
	params, result []byte
	hasError       bool
	errCode        int64
	errMessage     string
	errData        []byte
}

var (
	refMembers = []string{"jsonrpc", "id", "method", "params", "result", "error"}
	refFold    = cases.Fold()
)

// refFoldsTo returns the member name differs from only by case, if any.
func refFoldsTo(name string, members []string) (string, bool) {
	folded := refFold.String(name)
	for _, m := range members {
		if name != m && folded == refFold.String(m) {
			return m, true
		}
	}
	return "", false
}

type refMember struct {
	name  string
	value jsontext.Value
}

// refTopMembers reads the members of the top-level object in order.
func refTopMembers(data []byte) []refMember {
	dec := jsontext.NewDecoder(bytes.NewReader(data), jsontext.AllowDuplicateNames(true))
	if _, err := dec.ReadToken(); err != nil {
		panic(err)
	}
	var out []refMember
	for dec.PeekKind() != '}' {
		tok, err := dec.ReadToken()
		if err != nil {
			panic(err)
		}
		name := tok.String() // before the next read voids the token
		v, err := dec.ReadValue()
		if err != nil {
			panic(err)
		}
		out = append(out, refMember{name, v.Clone()})
	}
	return out
}

// refID renders a valid id, or ok false.
func refID(v jsontext.Value) (string, bool) {
	switch v.Kind() {
	case '"':
		var s string
		if json.Unmarshal(v, &s) != nil {
			return "", false
		}
		var buf bytes.Buffer
		enc := stdjson.NewEncoder(&buf)
		enc.SetEscapeHTML(false)
		if enc.Encode(s) != nil {
			return "", false
		}
		return strings.TrimSuffix(buf.String(), "\n"), true
	case '0':
		n, err := strconv.ParseInt(string(v), 10, 64)
		if err != nil {
			return "", false
		}
		return strconv.FormatInt(n, 10), true
	}
	return "", false
}

// refReplyID is the id a refusal of a message with these top-level members
// carries: the id of a request, when "id" appears once and is valid, and
// never a response's (no "method" and a "result" or an "error", in any
// case), whose id is the receiver's own.
func refReplyID(members []refMember) string {
	var idRaw jsontext.Value
	ids := 0
	method, response := false, false
	for _, mem := range members {
		switch folded := refFold.String(mem.name); {
		case mem.name == "id":
			ids++
			idRaw = mem.value
		case folded == "method":
			method = true
		case folded == "result" || folded == "error":
			response = true
		}
	}
	if ids != 1 || response && !method {
		return "null"
	}
	if id, ok := refID(idRaw); ok {
		return id
	}
	return "null"
}

func referenceDecode(data []byte) refMessage {
	invalid := refMessage{code: CodeInvalidRequest, id: "null"}
	// JSON at all: RFC 8259 with valid UTF-8; names may repeat below the
	// top level (the top level is checked next).
	if !jsontext.Value(data).IsValid(jsontext.AllowDuplicateNames(true)) {
		return refMessage{code: CodeParseError, id: "null"}
	}
	if bytes.TrimLeft(data, " \t\r\n")[0] != '{' {
		return invalid
	}
	members := refTopMembers(data)
	invalid.id = refReplyID(members)
	m := map[string]jsontext.Value{}
	for _, mem := range members {
		if _, dup := m[mem.name]; dup {
			return invalid
		}
		if _, folds := refFoldsTo(mem.name, refMembers); folds {
			return invalid
		}
		m[mem.name] = mem.value
	}
	str := func(name string) (string, bool) {
		v, ok := m[name]
		if !ok || v.Kind() != '"' {
			return "", false
		}
		var s string
		if json.Unmarshal(v, &s) != nil {
			panic("valid string did not decode")
		}
		return s, true
	}
	if v, ok := str("jsonrpc"); !ok || v != "2.0" {
		return invalid
	}
	idRaw, hasID := m["id"]
	if _, ok := m["method"]; ok {
		method, ok := str("method")
		if !ok || method == "" {
			return invalid
		}
		out := refMessage{method: method, id: "null"}
		if p, ok := m["params"]; ok {
			if k := p.Kind(); k != '{' && k != '[' {
				return invalid
			}
			out.params = p
		}
		if !hasID {
			out.kind = "notification"
			return out
		}
		id, ok := refID(idRaw)
		if !ok {
			return invalid
		}
		out.kind, out.id = "request", id
		return out
	}
	result, hasResult := m["result"]
	errVal, hasErr := m["error"]
	if !hasResult && !hasErr {
		return invalid
	}
	out := refMessage{kind: "response", id: "null"}
	if hasID {
		id, ok := refID(idRaw)
		switch {
		case ok:
			out.id = id
		case idRaw.Kind() == 'n' && hasErr:
		default:
			return invalid
		}
	}
	if hasResult && hasErr {
		return invalid
	}
	out.result = result
	if hasErr {
		// The error object: an object, no name twice at any depth, no case
		// variant of its members.
		if errVal.Kind() != '{' || !errVal.IsValid() {
			return invalid
		}
		for _, mem := range refTopMembers(errVal) {
			if _, folds := refFoldsTo(mem.name, []string{"code", "message", "data"}); folds {
				return invalid
			}
		}
		var e struct {
			Code    int64          `json:"code"`
			Message string         `json:"message"`
			Data    jsontext.Value `json:"data"`
		}
		if json.Unmarshal(errVal, &e) != nil {
			return invalid
		}
		out.hasError, out.errCode, out.errMessage, out.errData = true, e.Code, e.Message, e.Data
	}
	return out
}

// compareStrict checks Decode, and its fallback alone, against the
// reference: the same verdict and code, and for an accepted message the
// same kind, method, id, params, result and error.
func compareStrict(t *testing.T, data []byte) {
	t.Helper()
	if jsontest.Depth(data) > strictDepth {
		return // the reference's decoder stops there; TestDecodeDeep covers it
	}
	ref := referenceDecode(data)
	for _, path := range []struct {
		name   string
		decode func([]byte) (Message, ID, *Error)
	}{{"Decode", Decode}, {"decodeSlow", decodeSlow}} {
		msg, id, err := path.decode(data)
		if err != nil {
			if ref.code != err.Code || id.String() != ref.id {
				t.Fatalf("%q: %s refused it with %v, id %s; reference code %d, id %s (%+v)", data, path.name, err, id, ref.code, ref.id, ref)
			}
			continue
		}
		if ref.code != 0 {
			t.Fatalf("%q: %s accepted it as %#v; reference refuses it with %d", data, path.name, msg, ref.code)
		}
		got := refMessage{id: id.String()}
		switch m := msg.(type) {
		case *Request:
			got.kind, got.method, got.params = "request", m.Method, m.Params
		case *Notification:
			got.kind, got.method, got.params = "notification", m.Method, m.Params
		case *Response:
			got.kind, got.result = "response", m.Result
			if m.Error != nil {
				got.hasError, got.errCode, got.errMessage, got.errData = true, m.Error.Code, m.Error.Message, m.Error.Data
			}
		}
		if got.kind != ref.kind || got.method != ref.method || got.id != ref.id || !bytes.Equal(got.params, ref.params) ||
			!bytes.Equal(got.result, ref.result) || got.hasError != ref.hasError || got.errCode != ref.errCode ||
			got.errMessage != ref.errMessage || !bytes.Equal(got.errData, ref.errData) {
			t.Fatalf("%q: %s read\n  %+v\nreference read\n  %+v", data, path.name, got, ref)
		}
	}
}

// FuzzDecodeStrict checks Decode against the strict reference. Its seeds are
// every case of the strict table and every seed of FuzzDecodeMatchesReference,
// which go test runs it over.
func FuzzDecodeStrict(f *testing.F) {
	for _, c := range strictCases {
		f.Add([]byte(c.in))
	}
	for _, s := range decodeSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) { compareStrict(t, data) })
}
