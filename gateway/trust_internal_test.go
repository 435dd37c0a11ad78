package gateway

import (
	"encoding/json"
	"testing"
)

func TestNamedIn(t *testing.T) {
	cases := []struct {
		params, name, uri, args string
	}{
		{`{"name":"files__read","arguments":{"path":"/a"}}`, "files__read", "", `{"path":"/a"}`},
		{`{"uri":"file:///a b"}`, "", "file:///a b", ""},
		{`{"name":"files__\u0072ead","arguments":[1]}`, "files__read", "", `[1]`}, // escaped: decoded the slow way
		{`{"name":"a","name":"b"}`, "", "", ""},                                   // repeated: refused by both
		{`{"name":5}`, "", "", ""},
		{`[1,2]`, "", "", ""},
		{``, "", "", ""},
		{`{"Name":"x"}`, "", "", ""}, // exact names only
	}
	for _, c := range cases {
		got := namedIn(json.RawMessage(c.params))
		if got.Name != c.name || got.URI != c.uri || string(got.Arguments) != c.args {
			t.Errorf("%s: got %+v (arguments %s)", c.params, got, got.Arguments)
		}
	}
}
