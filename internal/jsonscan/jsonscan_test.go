package jsonscan

import (
	"encoding/json"
	"testing"
)

func TestMembers(t *testing.T) {
	known := []string{"a", "b"}
	cases := []struct {
		in   string
		ok   bool
		seen string
	}{
		{`{"a":1,"b":[true,{"x":null}],"c":"skip"}`, true, `a=1;b=[true,{"x":null}];`},
		{` { } `, true, ``},
		{`{"a":1,"a":2}`, false, ``},
		{`{"A":1}`, false, ``},
		{`{"\u0061":1}`, false, ``},
		{`{"a":01}`, false, ``},
		{`{"a":"\q"}`, false, ``},
		{`{"a":1} x`, false, ``},
		{`[1]`, false, ``},
		{`{"a":1,}`, false, ``},
	}
	for _, c := range cases {
		seen := ""
		ok := Members([]byte(c.in), known, func(n, v []byte) bool {
			seen += string(n) + "=" + string(v) + ";"
			return true
		})
		if ok != c.ok || (ok && seen != c.seen) {
			t.Errorf("%s: ok %v seen %q", c.in, ok, seen)
		}
		if ok && !json.Valid([]byte(c.in)) {
			t.Errorf("%s: accepted invalid JSON", c.in)
		}
	}
}

func FuzzSkipAgreesWithValid(f *testing.F) {
	for _, s := range []string{`{"a":[1,2.5e-3,"x\u00e9",true,null]}`, `{"a":`, `"\ud800"`, `-0.0E+1`, `[[[]]]`, `{"a":"\x01"}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		s := Scanner{data: data}
		s.Space()
		ok := s.Skip(0) && s.End()
		if ok && !json.Valid(data) {
			t.Fatalf("%q: scanner accepted invalid JSON", data)
		}
		if !ok && json.Valid(data) && len(data) < 500 {
			t.Fatalf("%q: scanner rejected valid JSON", data)
		}
	})
}
