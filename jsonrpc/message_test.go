package jsonrpc

import (
	"encoding/json"
	"testing"
)

func TestDecodeClassifies(t *testing.T) {
	cases := []struct {
		in     string
		code   int64 // 0: no error
		kind   string
		wantID string
	}{
		{`{"jsonrpc":"2.0","id":1,"method":"ping"}`, 0, "request", "1"},
		{`{"jsonrpc":"2.0","id":"a","method":"ping","params":{}}`, 0, "request", `"a"`},
		{`{"jsonrpc":"2.0","method":"notifications/initialized"}`, 0, "notification", "null"},
		{`{"jsonrpc":"2.0","id":3,"result":{}}`, 0, "response", "3"},
		{`{"jsonrpc":"2.0","id":3,"error":{"code":-1,"message":"x"}}`, 0, "response", "3"},
		{`{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"x"}}`, 0, "response", "null"},
		{`not json`, CodeParseError, "", "null"},
		{`{"jsonrpc":"2.0","id":1,`, CodeParseError, "", "null"},
		{``, CodeParseError, "", "null"},
		{`[{"jsonrpc":"2.0","id":1,"method":"ping"}]`, CodeInvalidRequest, "", "null"},
		{`[1,`, CodeParseError, "", "null"},
		{`42`, CodeInvalidRequest, "", "null"},
		{`{"jsonrpc":"2.0","id":null,"method":"ping"}`, CodeInvalidRequest, "", "null"},
		{`{"jsonrpc":"2.0","id":1.5,"method":"ping"}`, CodeInvalidRequest, "", "null"},
		{`{"jsonrpc":"2.0","id":true,"method":"ping"}`, CodeInvalidRequest, "", "null"},
		{`{"jsonrpc":"1.0","id":7,"method":"ping"}`, CodeInvalidRequest, "", "7"},
		{`{"id":7,"method":"ping"}`, CodeInvalidRequest, "", "7"},
		{`{"jsonrpc":"2.0","id":7,"method":""}`, CodeInvalidRequest, "", "7"},
		{`{"jsonrpc":"2.0","id":7,"method":"x","params":3}`, CodeInvalidRequest, "", "7"},
		{`{"jsonrpc":"2.0","id":7}`, CodeInvalidRequest, "", "7"},
		{`{"jsonrpc":"2.0","id":7,"result":{},"error":{"code":1,"message":"m"}}`, CodeInvalidRequest, "", "null"}, // the id is the receiver's
		{`{"jsonrpc":"2.0","id":7,"error":{"code":"x","message":"m"}}`, CodeInvalidRequest, "", "null"},
		{`{"jsonrpc":"2.0","id":7,"method":5}`, CodeInvalidRequest, "", "7"},
	}
	for _, c := range cases {
		msg, id, err := Decode([]byte(c.in))
		if id.String() != c.wantID {
			t.Errorf("%s: id %s, want %s", c.in, id, c.wantID)
		}
		if c.code != 0 {
			if err == nil || err.Code != c.code {
				t.Errorf("%s: got error %v, want code %d", c.in, err, c.code)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: unexpected error %v", c.in, err)
			continue
		}
		kind := map[bool]string{}
		switch msg.(type) {
		case *Request:
			kind[true] = "request"
		case *Notification:
			kind[true] = "notification"
		case *Response:
			kind[true] = "response"
		}
		if kind[true] != c.kind {
			t.Errorf("%s: decoded as %s, want %s", c.in, kind[true], c.kind)
		}
	}
}

func TestEncodeRoundTrip(t *testing.T) {
	msgs := []Message{
		&Request{ID: Int64ID(-3), Method: "tools/call", Params: json.RawMessage(`{"name":"x"}`)},
		&Request{ID: StringID("a\"b"), Method: "ping"},
		&Notification{Method: "notifications/progress", Params: json.RawMessage(`{"progress":1}`)},
		&Response{ID: Int64ID(9), Result: json.RawMessage(`{"ok":true}`)},
		&Response{ID: StringID("e"), Error: &Error{Code: -32602, Message: "bad", Data: json.RawMessage(`{"a":1}`)}},
		&Response{Error: NewError(CodeParseError, "nope")},
	}
	for _, m := range msgs {
		b, back, _, derr := reread(t, m)
		if derr != nil {
			t.Fatalf("%s: %v", b, derr)
		}
		b2, _ := Encode(back)
		if string(b) != string(b2) {
			t.Errorf("round trip changed %s to %s", b, b2)
		}
	}
	if _, err := Encode(&Request{Method: "ping"}); err == nil {
		t.Error("request without id encoded")
	}
}

func TestErrorWithData(t *testing.T) {
	e := NewError(-32022, "unsupported %s", "x").WithData(map[string]any{"requested": "x"})
	if e.Message != "unsupported x" || string(e.Data) != `{"requested":"x"}` {
		t.Errorf("got %+v", e)
	}
	if bad := NewError(1, "m").WithData(func() {}); bad.Data != nil || bad.Message == "m" {
		t.Errorf("unencodable data not reported: %+v", bad)
	}
	if _, ok := AsError(error(e)); !ok {
		t.Error("AsError did not find the error")
	}
}

var decodeSeeds = []string{
	`{"jsonrpc":"2.0","id":1,"method":"ping"}`,
	`{"jsonrpc":"2.0","id":"a\"b","method":"tools/call","params":{"name":"x","arguments":{"a":[1,2,{"b":null}]}}}`,
	`{"method":"m","jsonrpc":"2.0"}`, `{"jsonrpc":"2.0","id":3,"result":{"content":[]}}`,
	`{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"x","data":[1]}}`,
	`{"JSONRPC":"2.0","id":1,"method":"ping"}`, `{"jsonrpc":"2.0","id":1,"Method":"ping"}`,
	`{"jsonrpc":"2.0","id":1,"method":"a","method":"b"}`, `{"jsonrpc":"2.0","id":1,"id":2,"method":"a"}`,
	`{"jsonrpc":"2.0","id":1,"method":"p\u0069ng"}`, `{"jsonrpc":"2\u002e0","id":1,"method":"ping"}`,
	`{"jsonrpc":"2.0","id":1.0,"method":"x"}`, `{"jsonrpc":"2.0","id":-0,"method":"x"}`, `{"jsonrpc":"2.0","id":"\ud83d\ude00","method":"x"}`,
	`{"jsonrpc":"2.0","id":1,"method":"x","params":"s"}`, `{"jsonrpc":"2.0","id":1,"method":"x","params":null}`,
	`{"jsonrpc":"2.0","id":1,"method":"x","extra":{"deep":[[[]]]}}`, ` {"jsonrpc":"2.0","id":1,"method":"x"} `,
	`{"jsonrpc":"2.0","id":1,"method":"x"} {}`, `{"jsonrpc":"2.0","id":1,"method":"x",}`, `{"jsonrpc":2,"id":1,"method":"x"}`,
	`{"jsonrpc":"2.0","id":1,"result":{},"error":{"code":1,"message":"m"}}`, `{"jsonrpc":"2.0","id":1,"error":{"code":"x"}}`,
	"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"\xff\"}", `{"jsonrpc":"2.0","id":1,"method":"x","params":{"a":"\x"}}`,
	`[]`, `[1]`, `"x"`, `{}`, `{`, ``, `nul`,
}

// FuzzDecodeMatchesReference checks the fast decoder against the strict
// one (compareDecode); go test runs it over decodeSeeds.
func FuzzDecodeMatchesReference(f *testing.F) {
	for _, s := range decodeSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) { compareDecode(t, data) })
}

// compareDecode checks the fast path against the strict fallback: same message,
// same id, same error code.
func compareDecode(t *testing.T, data []byte) {
	t.Helper()
	m1, id1, e1 := Decode(data)
	m2, id2, e2 := decodeSlow(data)
	if id1 != id2 || (e1 == nil) != (e2 == nil) || (e1 != nil && e1.Code != e2.Code) {
		t.Fatalf("%q: fast (%v, %v, %v) vs reference (%v, %v, %v)", data, m1, id1, e1, m2, id2, e2)
	}
	if e1 != nil {
		return
	}
	b1, err1 := Encode(m1)
	b2, err2 := Encode(m2)
	if err1 != nil || err2 != nil || string(b1) != string(b2) {
		t.Fatalf("%q: fast %s (%v) vs reference %s (%v)", data, b1, err1, b2, err2)
	}
}
