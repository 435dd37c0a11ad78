package gateway

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
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
		{`{"content":[],"resultType":"complete","_meta":{` + si + `}}`, `{"content":[]}`},
		{`{"resultType":"complete","_meta":{` + si + `},"content":[]}`, `{"content":[]}`},
		{`{"_meta":{` + si + `}, "resultType" : "complete" }`, `{  }`},
		{`{"resultType":"input_required","inputRequests":{},"requestState":"s","_meta":{` + si + `,"x":1}}`, `{"resultType":"input_required","inputRequests":{},"requestState":"s","_meta":{"x":1}}`},
		{`{"_meta":{"a":1,` + si + `,"b":2},"content":[]}`, `{"_meta":{"a":1,"b":2},"content":[]}`},
		{`{"resultType":"complete","resultType":"complete"}`, `{"resultType":"complete","resultType":"complete"}`},
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
	if mcpNameOK("a b") || !mcpNameOK("a.b-c_d") || strictName().MatchString("a.b") {
		t.Fatal("name rules")
	}
}

// FuzzClean: clean leaves a result alone or cuts exactly a resultType
// "complete" and _meta's serverInfo (and a _meta left empty); what it
// returns for valid JSON is valid JSON.
func FuzzClean(f *testing.F) {
	si := `"` + mcp.MetaServerInfo + `":{"name":"up"}`
	for _, s := range []string{
		`{"content":[],"resultType":"complete","_meta":{` + si + `}}`,
		`{"resultType":"complete","_meta":{` + si + `},"content":[]}`,
		`{"_meta":{"a":1,` + si + `,"b":2},"content":[]}`,
		`{"resultType":"input_required","requestState":"s"}`,
		`{ "resultType" : "complete" , "x" : [ "resultType" ] }`,
		`{"resultType":"complete","resultType":"complete"}`,
		`{"_meta":null,"resultType":"complete"}`,
		`{"_meta":{"a":1,` + si + `,"b":4` + strings.Repeat("4", 400) + `e999},"content":[]}`,
		`[1,"resultType"]`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		out := clean(json.RawMessage(bytes.Clone(in)))
		if bytes.Equal(out, in) {
			return
		}
		if !json.Valid(in) {
			t.Fatalf("clean rewrote invalid JSON %q into %q", in, out)
		}
		if !json.Valid(out) {
			t.Fatalf("clean(%q) = %q, not JSON", in, out)
		}
		var before, after map[string]any
		// Numbers as json.Number: a valid number may not fit a float64.
		decode := func(b []byte, v any) error {
			d := json.NewDecoder(bytes.NewReader(b))
			d.UseNumber()
			return d.Decode(v)
		}
		if decode(in, &before) != nil || decode(out, &after) != nil {
			t.Fatalf("clean(%q) = %q: not objects", in, out)
		}
		if before["resultType"] == "complete" {
			delete(before, "resultType")
		}
		if meta, ok := before["_meta"].(map[string]any); ok {
			if _, had := meta[mcp.MetaServerInfo]; had {
				delete(meta, mcp.MetaServerInfo)
				if len(meta) == 0 {
					delete(before, "_meta") // emptied, so dropped
				}
			}
		}
		if !reflect.DeepEqual(before, after) {
			t.Fatalf("clean(%q) = %q: cut more or less than it should", in, out)
		}
	})
}
