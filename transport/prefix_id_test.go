package transport

import (
	"strings"
	"testing"

	"github.com/toolwire/toolwire/jsonrpc"
)

// TestPrefixID: the id of an oversized message is recovered from its first
// bytes only when they show a request with one valid, complete id; anything
// else is answered with id null.
func TestPrefixID(t *testing.T) {
	pad := strings.Repeat("x", 100)
	for _, c := range []struct {
		prefix string
		want   jsonrpc.ID
	}{
		{`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"a":"` + pad, jsonrpc.Int64ID(7)},
		{`{"jsonrpc":"2.0","method":"x","id":"s-1","params":[1,2,{"id":3}`, jsonrpc.StringID("s-1")},
		{"\r\n\t{ \"id\" : -12 , \"method\" : \"x\" }", jsonrpc.Int64ID(-12)},
		{`{"\u0069d":5,"method":"x","params":{`, jsonrpc.Int64ID(5)},
		{`{"id":"a\"b\\","method":"x","params":"` + pad, jsonrpc.StringID(`a"b\`)},
		{`{"params":{"id":1,"nested":[{"id":2}]},"method":"x","id":4,"more":`, jsonrpc.Int64ID(4)},
		{`{"method":"x","id":5}`, jsonrpc.Int64ID(5)},
		// Not recoverable: null.
		{``, jsonrpc.ID{}},
		{`[{"id":1,"method":"x"}]`, jsonrpc.ID{}},
		{`{"jsonrpc":"2.0","method":"tools/call","params":{"id":1,"a":"` + pad, jsonrpc.ID{}}, // the id is past the prefix
		{`{"jsonrpc":"2.0","id":7,"params":{"a":"` + pad, jsonrpc.ID{}},                       // no method seen
		{`{"method":"x","id":12`, jsonrpc.ID{}},                                               // the number may go on
		{`{"method":"x","id":"ab`, jsonrpc.ID{}},                                              // the string is cut
		{`{"method":"x","id":1,"id":2,"params":`, jsonrpc.ID{}},                               // repeated
		{`{"method":"x","id":null,"params":`, jsonrpc.ID{}},
		{`{"method":"x","id":1.5,"params":`, jsonrpc.ID{}},
		{`{"method":"x","id":{"a":1},"params":`, jsonrpc.ID{}},
		{`{"method":"x","ID":1,"params":`, jsonrpc.ID{}}, // names are case-sensitive
		{`{"id":9,"result":{"a":"` + pad, jsonrpc.ID{}},  // a response: the id is the server's own
		{`{"id":9,"error":{"code":1},"method":"x"`, jsonrpc.ID{}},
		{`{"id":9 "method":"x"}`, jsonrpc.ID{}},
		{`{"id":9,"method":"x","params":` + strings.Repeat("[", 100000), jsonrpc.Int64ID(9)},
	} {
		if got := prefixID([]byte(c.prefix)); got != c.want {
			short := c.prefix
			if len(short) > 80 {
				short = short[:80] + "..."
			}
			t.Errorf("prefixID(%q) = %s, want %s", short, got, c.want)
		}
	}
}
