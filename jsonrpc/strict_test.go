package jsonrpc

import (
	"encoding/json"
	"testing"
)

// strictCases are exact-JSON variants of messages, each with the exact
// outcome: the code (0: accepted), the message of the refusal, and the id
// the reply names ("null" for none).
var strictCases = []struct {
	name, in string
	code     int64
	msg      string
	id       string
}{
	// Case variants of envelope members are refused, not ignored: a
	// case-insensitive reader would take them for the member.
	{"Method", `{"jsonrpc":"2.0","id":1,"Method":"tools/call"}`, CodeInvalidRequest,
		`member "Method" is not a JSON-RPC member: names are case-sensitive (did you mean "method"?)`, "1"},
	{"Method beside method", `{"jsonrpc":"2.0","id":1,"method":"ping","Method":"tools/call"}`, CodeInvalidRequest,
		`member "Method" is not a JSON-RPC member: names are case-sensitive (did you mean "method"?)`, "1"},
	{"JSONRPC", `{"JSONRPC":"2.0","id":1,"method":"ping"}`, CodeInvalidRequest,
		`member "JSONRPC" is not a JSON-RPC member: names are case-sensitive (did you mean "jsonrpc"?)`, "1"},
	{"Params", `{"jsonrpc":"2.0","id":1,"method":"tools/call","Params":{"name":"x"}}`, CodeInvalidRequest,
		`member "Params" is not a JSON-RPC member: names are case-sensitive (did you mean "params"?)`, "1"},
	{"ID", `{"jsonrpc":"2.0","ID":1,"method":"ping"}`, CodeInvalidRequest,
		`member "ID" is not a JSON-RPC member: names are case-sensitive (did you mean "id"?)`, "null"},
	{"Id", `{"jsonrpc":"2.0","Id":1,"method":"ping"}`, CodeInvalidRequest,
		`member "Id" is not a JSON-RPC member: names are case-sensitive (did you mean "id"?)`, "null"},
	// A response's id names a request of the receiver's: a refusal of a
	// response (or of what a case-insensitive reader takes for one) carries
	// a null id, never the response's.
	{"Result", `{"jsonrpc":"2.0","id":1,"Result":{}}`, CodeInvalidRequest,
		`member "Result" is not a JSON-RPC member: names are case-sensitive (did you mean "result"?)`, "null"},
	{"Error", `{"jsonrpc":"2.0","id":1,"Error":{"code":1,"message":"m"}}`, CodeInvalidRequest,
		`member "Error" is not a JSON-RPC member: names are case-sensitive (did you mean "error"?)`, "null"},
	{"Result beside method", `{"jsonrpc":"2.0","id":1,"method":"ping","Result":{}}`, CodeInvalidRequest,
		`member "Result" is not a JSON-RPC member: names are case-sensitive (did you mean "result"?)`, "1"},
	{"result beside Method", `{"jsonrpc":"2.0","id":1,"Method":"ping","result":{}}`, CodeInvalidRequest,
		`member "Method" is not a JSON-RPC member: names are case-sensitive (did you mean "method"?)`, "1"},
	{"long s in result", `{"jsonrpc":"2.0","id":1,"reſult":{}}`, CodeInvalidRequest,
		`member "reſult" is not a JSON-RPC member: names are case-sensitive (did you mean "result"?)`, "null"},
	{"escaped Method", `{"jsonrpc":"2.0","id":1,"M\u0065thod":"ping"}`, CodeInvalidRequest,
		`member "Method" is not a JSON-RPC member: names are case-sensitive (did you mean "method"?)`, "1"},
	// U+017F LATIN SMALL LETTER LONG S folds to s (encoding/json v1 matched it).
	{"long s", `{"jſonrpc":"2.0","jsonrpc":"2.0","id":1,"method":"ping"}`, CodeInvalidRequest,
		`member "jſonrpc" is not a JSON-RPC member: names are case-sensitive (did you mean "jsonrpc"?)`, "1"},
	// Duplicate top-level members.
	{"jsonrpc twice", `{"jsonrpc":"2.0","jsonrpc":"1.0","id":1,"method":"ping"}`, CodeInvalidRequest, `duplicate member "jsonrpc"`, "1"},
	{"id twice", `{"jsonrpc":"2.0","id":1,"id":2,"method":"ping"}`, CodeInvalidRequest, `duplicate member "id"`, "null"},
	{"method twice", `{"jsonrpc":"2.0","id":1,"method":"ping","method":"tools/call"}`, CodeInvalidRequest, `duplicate member "method"`, "1"},
	{"params twice", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"a"},"params":{"name":"b"}}`, CodeInvalidRequest, `duplicate member "params"`, "1"},
	{"result twice", `{"jsonrpc":"2.0","id":1,"result":{},"result":{"x":1}}`, CodeInvalidRequest, `duplicate member "result"`, "null"},
	{"unknown twice", `{"jsonrpc":"2.0","id":1,"method":"ping","x":1,"x":2}`, CodeInvalidRequest, `duplicate member "x"`, "1"},
	// Escaped names are the names they spell.
	{"escaped method", `{"jsonrpc":"2.0","id":1,"m\u0065thod":"ping"}`, 0, "", "1"},
	{"escaped duplicate", `{"jsonrpc":"2.0","id":1,"method":"a","m\u0065thod":"b"}`, CodeInvalidRequest, `duplicate member "method"`, "1"},
	{"escaped jsonrpc value", `{"jsonrpc":"2\u002e0","id":1,"method":"p\u0069ng"}`, 0, "", "1"},
	// Duplicates inside params or result are the decoder of params' business.
	{"duplicate in params", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"a","name":"b"}}`, 0, "", "1"},
	{"duplicate in result", `{"jsonrpc":"2.0","id":1,"result":{"content":[],"content":[]}}`, 0, "", "1"},
	{"unknown member", `{"jsonrpc":"2.0","id":1,"method":"ping","extra":{"a":1,"a":2},"Other":1}`, 0, "", "1"},
	// ...but the error object of a response is decoded strictly.
	{"error code twice", `{"jsonrpc":"2.0","id":1,"error":{"code":1,"code":2,"message":"m"}}`, CodeInvalidRequest,
		`malformed error object: at /error/code: duplicate member name "code"`, "null"},
	{"error Message", `{"jsonrpc":"2.0","id":1,"error":{"code":1,"Message":"m"}}`, CodeInvalidRequest,
		`malformed error object: at /error/Message: unknown member "Message": member names are case-sensitive (did you mean "message"?)`, "null"},
	{"error data duplicate", `{"jsonrpc":"2.0","id":1,"error":{"code":1,"message":"m","data":{"a":1,"a":2}}}`, CodeInvalidRequest,
		`malformed error object: at /error/data/a: duplicate member name "a"`, "null"},
	{"error code string", `{"jsonrpc":"2.0","id":1,"error":{"code":"1","message":"m"}}`, CodeInvalidRequest,
		`malformed error object: at /error/code: expected an integer, got a string`, "null"},
	{"error null", `{"jsonrpc":"2.0","id":1,"error":null}`, CodeInvalidRequest, `"error" must be an object`, "null"},
	{"result and error", `{"jsonrpc":"2.0","id":7001,"result":{},"error":{"code":1,"message":"x"}}`, CodeInvalidRequest,
		`response must not carry both "result" and "error"`, "null"},
	{"response of jsonrpc 1.0", `{"jsonrpc":"1.0","id":7,"result":{}}`, CodeInvalidRequest, `"jsonrpc" must be "2.0"`, "null"},
	{"response without jsonrpc", `{"id":"s-1","error":{"code":1,"message":"m"}}`, CodeInvalidRequest, `"jsonrpc" must be "2.0"`, "null"},
	// Ids of the wrong type say what they are.
	{"id true", `{"jsonrpc":"2.0","id":true,"method":"ping"}`, CodeInvalidRequest, `"id" must be a string or an integer, not a boolean`, "null"},
	{"id null", `{"jsonrpc":"2.0","id":null,"method":"ping"}`, CodeInvalidRequest, `"id" must be a string or an integer, not null`, "null"},
	{"id 1.5", `{"jsonrpc":"2.0","id":1.5,"method":"ping"}`, CodeInvalidRequest, `"id" must be a string or an integer, not a fraction (1.5)`, "null"},
	{"id 1.0", `{"jsonrpc":"2.0","id":1.0,"method":"ping"}`, CodeInvalidRequest, `"id" must be a string or an integer, not a fraction (1.0)`, "null"},
	{"id 1e3", `{"jsonrpc":"2.0","id":1e3,"method":"ping"}`, CodeInvalidRequest, `"id" must be a string or an integer, not a number with an exponent (1e3)`, "null"},
	{"id 2^64", `{"jsonrpc":"2.0","id":18446744073709551616,"method":"ping"}`, CodeInvalidRequest,
		`"id" must be a string or an integer, not an integer beyond 64 bits (18446744073709551616)`, "null"},
	{"id {}", `{"jsonrpc":"2.0","id":{},"method":"ping"}`, CodeInvalidRequest, `"id" must be a string or an integer, not an object`, "null"},
	{"id []", `{"jsonrpc":"2.0","id":[],"method":"ping"}`, CodeInvalidRequest, `"id" must be a string or an integer, not an array`, "null"},
	{"id empty string", `{"jsonrpc":"2.0","id":"","method":"ping"}`, 0, "", `""`},
	{"id min int64", `{"jsonrpc":"2.0","id":-9223372036854775808,"method":"ping"}`, 0, "", "-9223372036854775808"},
	{"id -0", `{"jsonrpc":"2.0","id":-0,"method":"ping"}`, 0, "", "0"},
	{"result id true", `{"jsonrpc":"2.0","id":true,"result":{}}`, CodeInvalidRequest, `"id" must be a string or an integer, not a boolean`, "null"},
	{"result id null", `{"jsonrpc":"2.0","id":null,"result":{}}`, CodeInvalidRequest, `"id" must be a string or an integer, not null`, "null"},
	{"error id null", `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"x"}}`, 0, "", "null"},
	// Bytes that are not JSON: invalid UTF-8 anywhere, unpaired surrogates.
	{"invalid UTF-8 in method", "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"p\xffng\"}", CodeParseError,
		"message is not valid JSON: invalid UTF-8 in a string (at /method, offset 35)", "null"},
	{"invalid UTF-8 in id", "{\"jsonrpc\":\"2.0\",\"id\":\"\xc3\",\"method\":\"ping\"}", CodeParseError,
		"message is not valid JSON: invalid UTF-8 in a string (at /id, offset 23)", "null"},
	{"invalid UTF-8 in params", "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"x\",\"params\":{\"a\":[\"\xed\xa0\x80\"]}}", CodeParseError,
		"message is not valid JSON: invalid UTF-8 in a string (at /params/a/0, offset 53)", "null"},
	{"invalid UTF-8 in a name", "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"x\",\"\xff\":1}", CodeParseError,
		"message is not valid JSON: invalid UTF-8 in a string (at offset 38)", "null"},
	{"invalid UTF-8 in an unknown member", "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"x\",\"note\":{\"k\":\"\xff\"}}", CodeParseError,
		"message is not valid JSON: invalid UTF-8 in a string (at /note/k, offset 50)", "null"},
	{"invalid UTF-8 beside a case variant", "{\"Method\":\"x\",\"id\":\"\xff\"}", CodeParseError,
		"message is not valid JSON: invalid UTF-8 in a string (at /id, offset 20)", "null"},
	{"unpaired surrogate", `{"jsonrpc":"2.0","id":"\ud800","method":"ping"}`, CodeParseError,
		"message is not valid JSON: invalid surrogate pair `\\ud800\",\"met` in string (at /id, offset 23)", "null"},
	{"two values", `{"jsonrpc":"2.0","id":1,"method":"x"} {}`, CodeParseError, "message is not valid JSON: more than one value (at offset 38)", "null"},
	{"form feed", "\f{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"x\"}", CodeParseError,
		"message is not valid JSON: invalid character '\\f' at start of value (at offset 0)", "null"},
	{"method number", `{"jsonrpc":"2.0","id":7,"method":5}`, CodeInvalidRequest, `"method" must be a string`, "7"},
	{"method null", `{"jsonrpc":"2.0","id":7,"method":null}`, CodeInvalidRequest, `"method" must be a string`, "7"},
	{"jsonrpc number", `{"jsonrpc":2,"id":7,"method":"x"}`, CodeInvalidRequest, `"jsonrpc" must be "2.0"`, "7"},
}

func TestDecodeStrictTable(t *testing.T) {
	for _, c := range strictCases {
		t.Run(c.name, func(t *testing.T) {
			for _, path := range []struct {
				name   string
				decode func([]byte) (Message, ID, *Error)
			}{{"Decode", Decode}, {"decodeSlow", decodeSlow}} {
				msg, id, err := path.decode([]byte(c.in))
				if id.String() != c.id {
					t.Errorf("%s: id %s, want %s", path.name, id, c.id)
				}
				if c.code == 0 {
					if err != nil || msg == nil {
						t.Errorf("%s: refused: %v", path.name, err)
					}
					continue
				}
				if err == nil {
					t.Errorf("%s: accepted as %#v", path.name, msg)
					continue
				}
				if err.Code != c.code || err.Message != c.msg {
					t.Errorf("%s: got %d %q\nwant %d %q", path.name, err.Code, err.Message, c.code, c.msg)
				}
			}
			compareStrict(t, []byte(c.in))
		})
	}
}

func TestDecodeKeepsEscapedMembers(t *testing.T) {
	msg, _, err := Decode([]byte(`{"jsonrpc":"2.0","id":"a\u0062","m\u0065thod":"tools\/call","params":{"n\u0061me":"x"}}`))
	if err != nil {
		t.Fatal(err)
	}
	req := msg.(*Request)
	if req.Method != "tools/call" || req.ID != StringID("ab") || string(req.Params) != `{"n\u0061me":"x"}` {
		t.Errorf("got %+v (params %s)", req, req.Params)
	}
}

func TestDecodeFastPathAllocations(t *testing.T) {
	in := []byte(`{"jsonrpc":"2.0","id":42,"method":"tools/call","params":{"name":"get-sum","arguments":{"a":7,"b":5}}}`)
	n := testing.AllocsPerRun(200, func() {
		if _, _, err := Decode(in); err != nil {
			t.Fatal(err)
		}
	})
	// The *Request and its Method string; nothing for scanning.
	if n > 2 {
		t.Errorf("Decode allocates %v times per request, want at most 2", n)
	}
	resp := []byte(`{"jsonrpc":"2.0","id":"s-1","result":{"content":[{"type":"text","text":"12"}]}}`)
	n = testing.AllocsPerRun(200, func() {
		if _, _, err := Decode(resp); err != nil {
			t.Fatal(err)
		}
	})
	// The *Response and its string id.
	if n > 2 {
		t.Errorf("Decode allocates %v times per response, want at most 2", n)
	}
}

func TestIDUnmarshalJSON(t *testing.T) {
	for in, want := range map[string]string{`"x"`: `"x"`, ` 12 `: "12", `"\u00e9"`: `"é"`, `-9223372036854775808`: "-9223372036854775808"} {
		var id ID
		if err := json.Unmarshal([]byte(in), &id); err != nil || id.String() != want {
			t.Errorf("%s: %v %s", in, err, id)
		}
	}
	for in, want := range map[string]string{
		`null`: "id must be a string or an integer, not null", `1.5`: "id must be a string or an integer, not a fraction (1.5)",
		`true`: "id must be a string or an integer, not a boolean", `9223372036854775808`: "id must be a string or an integer, not an integer beyond 64 bits (9223372036854775808)",
		`"\ud800"`: "id must be a string or an integer, not an invalid string",
	} {
		var id ID
		if err := id.UnmarshalJSON([]byte(in)); err == nil || err.Error() != want {
			t.Errorf("%s: got %v, want %s", in, err, want)
		}
	}
}
