package jsonrpc

import (
	"strings"
	"testing"
)

// nest returns a value nested n levels: n arrays, innermost empty.
func nest(n int) string { return strings.Repeat("[", n) + strings.Repeat("]", n) }

// Nesting is not the envelope's business: a request nested past the strict
// decoder's limit (10000 levels) is read with its id and its params as
// they are, for the method to refuse with that id (issue: an error at
// depth 10,000 inside arguments was answered -32700 with id null, as if the
// message were not JSON). Bytes that are not JSON are still -32700, and
// every rule of the envelope still applies.
func TestDecodeDeep(t *testing.T) {
	args := `{"name":"x","arguments":{"a":` + nest(10000) + `}}` // 3 levels around it
	accepted := []struct {
		name, in, kind, id, raw string
	}{
		{"params, id first", `{"jsonrpc":"2.0","id":5,"method":"tools/call","params":` + args + `}`, "request", "5", args},
		{"params, id last", `{"jsonrpc":"2.0","method":"tools/call","params":` + args + `,"id":"last"}`, "request", `"last"`, args},
		{"escaped names", `{"jsonrpc":"2.0","\u0069d":8,"m\u0065thod":"tools/call","p\u0061rams":` + args + `}`, "request", "8", args},
		{"another member", `{"jsonrpc":"2.0","id":7,"method":"ping","x":` + nest(20000) + `}`, "request", "7", ""},
		{"notification", `{"jsonrpc":"2.0","method":"notifications/x","params":` + args + `}`, "notification", "null", args},
		{"response", `{"jsonrpc":"2.0","id":9,"result":` + args + `}`, "response", "9", args},
	}
	for _, c := range accepted {
		t.Run(c.name, func(t *testing.T) {
			for _, decode := range []func([]byte) (Message, ID, *Error){Decode, decodeSlow} {
				m, id, err := decode([]byte(c.in))
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				var kind string
				var raw []byte
				switch m := m.(type) {
				case *Request:
					kind, raw = "request", m.Params
				case *Notification:
					kind, raw = "notification", m.Params
				case *Response:
					kind, raw = "response", m.Result
				}
				if kind != c.kind || id.String() != c.id || string(raw) != c.raw {
					t.Fatalf("got a %s, id %s, %d raw bytes; want a %s, id %s, %d bytes", kind, id, len(raw), c.kind, c.id, len(c.raw))
				}
			}
		})
	}
	refused := []struct {
		name, in string
		code     int64
		msg, id  string
	}{
		{"error object", `{"jsonrpc":"2.0","id":9,"error":{"code":1,"message":"m","data":` + nest(10000) + `}}`,
			CodeInvalidRequest, "malformed error object: at /error/data/0/0/0", "null"}, // a response's id is not echoed
		{"the envelope's rules", `{"jsonrpc":"2.0","id":1,"id":2,"method":"m","params":` + nest(10000) + `}`,
			CodeInvalidRequest, `duplicate member "id"`, "null"},
		{"case variants", `{"jsonrpc":"2.0","id":1,"Method":"m","params":` + nest(10000) + `}`,
			CodeInvalidRequest, `did you mean "method"`, "1"},
		{"params not an object", `{"jsonrpc":"2.0","id":1,"method":"m","params":"x","x":` + nest(10001) + `}`,
			CodeInvalidRequest, `"params" must be an object`, "1"},
		{"not JSON after the depth", `{"jsonrpc":"2.0","id":1,"method":"m","params":` + nest(10000) + ",\"x\":\"\xff\"}",
			CodeParseError, "message is not valid JSON", "null"},
		{"not JSON inside the depth", `{"jsonrpc":"2.0","id":1,"method":"m","params":` + strings.Repeat("[", 10000) + "1 2" + strings.Repeat("]", 10000) + `}`,
			CodeParseError, "message is not valid JSON", "null"},
		{"cut short", `{"jsonrpc":"2.0","id":1,"method":"m","params":` + strings.Repeat("[", 10001),
			CodeParseError, "message is not valid JSON", "null"},
		{"a batch", `[` + nest(10000) + `]`, CodeInvalidRequest, "batch requests are not supported", "null"},
		{"a deep root", nest(10001), CodeInvalidRequest, "batch requests are not supported", "null"},
		{"two values", `{"jsonrpc":"2.0","id":1,"method":"m","params":` + nest(10000) + `} {}`, CodeParseError, "more than one value", "null"},
	}
	for _, c := range refused {
		t.Run(c.name, func(t *testing.T) {
			for _, decode := range []func([]byte) (Message, ID, *Error){Decode, decodeSlow} {
				m, id, err := decode([]byte(c.in))
				if err == nil {
					t.Fatalf("accepted as %T", m)
				}
				if err.Code != c.code || !strings.Contains(err.Message, c.msg) || id.String() != c.id {
					t.Fatalf("got %d %.200q id %s, want %d %q id %s", err.Code, err.Message, id, c.code, c.msg, c.id)
				}
			}
		})
	}
}
