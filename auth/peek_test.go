package auth

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/toolwire/toolwire/jsonrpc"
)

func TestPeekTarget(t *testing.T) {
	for _, tc := range []struct{ body, method, name string }{
		{`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo"}}`, "tools/call", "echo"},
		{`{"jsonrpc":"2.0","id":1,"method":"prompts/get","params":{"name":"p","uri":"u"}}`, "prompts/get", "p"},
		{`{"jsonrpc":"2.0","id":1,"method":"resources/read","params":{"name":"p","uri":"u"}}`, "resources/read", "u"},
		{`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":7}}`, "tools/call", ""},
		{`{"jsonrpc":"2.0","method":"notifications/initialized"}`, "notifications/initialized", ""},
		{`{"jsonrpc":"2.0","id":1,"result":{}}`, "", ""},
	} {
		m, n, err := peekTarget([]byte(tc.body))
		if err != nil || m != tc.method || n != tc.name {
			t.Errorf("%s: %q %q %v", tc.body, m, n, err)
		}
	}
}

// FuzzPeekTarget: what the middleware reads as a request's method is what
// the server's decoder reads, whenever both accept the message; and a
// peeked body is handed on byte for byte.
func FuzzPeekTarget(f *testing.F) {
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{}}}`,
		`{"jsonrpc":"2.0","id":1,"m\u0065thod":"tools/call","params":{"name":"x"}}`,
		`{"jsonrpc":"2.0","id":1,"method":"a","method":"b"}`,
		`{"jsonrpc":"2.0","id":1,"Method":"a","method":"b"}`,
		`[{"jsonrpc":"2.0","id":1,"method":"a"}]`,
		`{"jsonrpc":"2.0","id":1,"method":"resources/read","params":{"uri":"demo://r/1"}}`,
		"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"\xff\"}",
	} {
		f.Add([]byte(s), uint16(64))
	}
	f.Fuzz(func(t *testing.T, body []byte, limit uint16) {
		method, _, err := peekTarget(body)
		if err == nil {
			if msg, _, derr := jsonrpc.Decode(body); derr == nil {
				var got string
				switch m := msg.(type) {
				case *jsonrpc.Request:
					got = m.Method
				case *jsonrpc.Notification:
					got = m.Method
				}
				if got != method {
					t.Fatalf("peeked method %q, the server reads %q", method, got)
				}
			}
		}
		r := httptest.NewRequest(http.MethodPost, "/", bytes.NewReader(body))
		peeked, over, perr := peekBody(r, int64(limit))
		if perr != nil || over != (len(body) > int(limit)) || (!over && !bytes.Equal(peeked, body)) {
			t.Fatalf("peekBody: over=%v err=%v", over, perr)
		}
		rest, _ := io.ReadAll(r.Body)
		if !bytes.Equal(rest, body) {
			t.Fatal("the body handed on differs")
		}
	})
}
