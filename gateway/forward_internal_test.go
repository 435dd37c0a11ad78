package gateway

import (
	"encoding/json"
	"testing"

	"github.com/toolwire/toolwire/mcp"
)

func TestClean(t *testing.T) {
	si := `"` + mcp.MetaServerInfo + `":{"name":"up","version":"1"}`
	for _, tc := range []struct{ in, want string }{
		{`{"content":[],"structuredContent":{ "b" : 1 }}`, `{"content":[],"structuredContent":{ "b" : 1 }}`},
		{`{"content":[ ],"resultType":"complete","_meta":{` + si + `}}`, `{"content":[ ]}`},
		{`{"_meta":{"keep":true,` + si + `},"structuredContent":{"a":"\u00e9"}}`, `{"_meta":{"keep":true},"structuredContent":{"a":"\u00e9"}}`},
		{`not json "resultType"`, `not json "resultType"`},
	} {
		if got := string(clean(json.RawMessage(tc.in))); got != tc.want {
			t.Errorf("clean(%s) = %s, want %s", tc.in, got, tc.want)
		}
	}
}

func TestNaming(t *testing.T) {
	n := Naming{Rename: map[string]string{"a__x": "y"}, Hide: []string{"a__h"}}
	if got, ok := n.downstreamName("a", "x"); !ok || got != "y" {
		t.Fatal(got, ok)
	}
	if _, ok := n.downstreamName("a", "h"); ok {
		t.Fatal("hidden name served")
	}
	if got, _ := (Naming{Separator: "."}).downstreamName("a", "z"); got != "a.z" {
		t.Fatal(got)
	}
	if mcpNameOK("a b") || !mcpNameOK("a.b-c_d") || strictName.MatchString("a.b") {
		t.Fatal("name rules")
	}
}
