package jsonscan

import (
	"bytes"
	"io"
	"strings"
	"testing"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/toolwire/toolwire/internal/jsontest"
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
		// Any repeated name is declined, known or not: a strict decoder
		// refuses it, so the caller's fallback must decide.
		{`{"c":1,"c":2,"a":1}`, false, ``},
		{`{"c":1,"C":2,"a":1}`, true, `a=1;`},
		// Unicode case folding: U+017F LATIN SMALL LETTER LONG S folds to s,
		// U+212A KELVIN SIGN to k.
		{`{"ſ":1}`, true, ``},
		{`{"ſtatus":1}`, true, ``},
		// Invalid UTF-8 anywhere, and unpaired surrogate escapes, are declined.
		{"{\"a\":\"\xff\"}", false, ``},
		{"{\"c\":{\"d\":[\"\xc3\"]}}", false, ``},
		{"{\"\xed\xa0\x80\":1}", false, ``},
		{`{"c":"\ud800"}`, false, ``},
		{`{"c":"\udc00\ud800"}`, false, ``},
		{`{"c":"\ud800\u0041"}`, false, ``},
		{`{"c":"\ud83d\ude00 é ✓"}`, true, ``},
		{`{"c":"\uD83D\uDE00"}`, true, ``},
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
		if ok && !jsontext.Value(c.in).IsValid() {
			t.Errorf("%s: accepted invalid JSON", c.in)
		}
	}
}

func TestMembersSpecialFolds(t *testing.T) {
	// A name that folds to a known one under Unicode simple folding is declined.
	for _, in := range []string{`{"ſ":1}`, `{"K":1}`} {
		if Members([]byte(in), []string{"s", "k"}, func(_, _ []byte) bool { return true }) {
			t.Errorf("%s: accepted a case variant of a known name", in)
		}
	}
}

func TestMembersTooManyUnknown(t *testing.T) {
	var b strings.Builder
	b.WriteString(`{"a":0`)
	for i := range maxUnknown + 1 {
		b.WriteString(`,"u`)
		b.WriteByte(byte('a' + i))
		b.WriteString(`":1`)
	}
	b.WriteString(`}`)
	if Members([]byte(b.String()), []string{"a"}, func(_, _ []byte) bool { return true }) {
		t.Errorf("object with %d unknown members accepted", maxUnknown+1)
	}
}

func TestMembersAllocates(t *testing.T) {
	data := []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","arguments":{"a":"é\u00e9"}},"x":1,"y":2}`)
	known := []string{"jsonrpc", "id", "method", "params"}
	n := testing.AllocsPerRun(100, func() {
		if !Members(data, known, func(_, _ []byte) bool { return true }) {
			t.Fatal("declined")
		}
	})
	if n != 0 {
		t.Errorf("Members allocates %v times per call", n)
	}
}

// valid is the reference for Skip: one JSON value under the strict decoder's
// rules, duplicate names allowed (Skip does not look at names).
func valid(data []byte) bool {
	return jsontext.Value(data).IsValid(jsontext.AllowDuplicateNames(true))
}

func FuzzSkipAgreesWithValid(f *testing.F) {
	for _, s := range []string{`{"a":[1,2.5e-3,"x\u00e9",true,null]}`, `{"a":`, `"\ud800"`, `-0.0E+1`, `[[[]]]`, `{"a":"\x01"}`,
		"\"\xff\"", `"\ud83d\ude00"`, `"\udc00"`, `"\ud800\n"`, "\"\xed\xa0\x80\"", "\"\xf4\x90\x80\x80\"", `{"a":1,"a":2}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		s := Scanner{data: data}
		s.Space()
		ok := s.Skip(0) && s.End()
		if ok && !valid(data) {
			t.Fatalf("%q: scanner accepted invalid JSON", data)
		}
		if !ok && valid(data) && len(data) < 500 {
			t.Fatalf("%q: scanner rejected valid JSON", data)
		}
	})
}

// membersReference reads the top-level object with jsontext: the known
// members in order, or ok false when Members must decline.
func membersReference(data []byte, known []string) (seen string, ok bool) {
	if !valid(data) {
		return "", false
	}
	dec := jsontext.NewDecoder(bytes.NewReader(data), jsontext.AllowDuplicateNames(true))
	if tok, err := dec.ReadToken(); err != nil || tok.Kind() != '{' {
		return "", false
	}
	names := map[string]bool{}
	for dec.PeekKind() == '"' {
		before := dec.InputOffset()
		tok, err := dec.ReadToken()
		if err != nil {
			return "", false
		}
		name := tok.String()
		// Members reads plain names only and declines an escaped one even
		// when it is fine; between the two offsets lie only white space, a
		// comma and the quoted name.
		if bytes.IndexByte(data[before:dec.InputOffset()], '\\') >= 0 {
			return "", false
		}
		if names[name] {
			return "", false
		}
		names[name] = true
		isKnown := false
		for _, k := range known {
			if name == k {
				isKnown = true
			} else if strings.EqualFold(name, k) {
				return "", false
			}
		}
		v, err := dec.ReadValue()
		if err != nil {
			return "", false
		}
		if isKnown {
			seen += name + "=" + string(v) + ";"
		}
	}
	unknown := 0
	for n := range names {
		if !isIn(n, known) {
			unknown++
		}
	}
	if unknown > maxUnknown {
		return "", false
	}
	if _, err := dec.ReadToken(); err != nil {
		return "", false
	}
	if _, err := dec.ReadToken(); err != io.EOF {
		return "", false
	}
	return seen, true
}

func isIn(s string, list []string) bool {
	for _, k := range list {
		if s == k {
			return true
		}
	}
	return false
}

func FuzzMembersAgreesWithJSONText(f *testing.F) {
	for _, s := range []string{`{"a":1,"b":[true,{"x":null}],"c":"skip"}`, ` { } `, `{"a":1,"a":2}`, `{"A":1}`, `{"\u0061":1}`,
		`{"c":1,"c":2}`, `{"ſ":1}`, "{\"a\":\"\xff\"}", `{"a":"\ud800"}`, `{"a":{"b":1,"b":2}}`, `{"a":1}{}`} {
		f.Add([]byte(s))
	}
	known := []string{"a", "b", "s"}
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > 500 {
			return // keeps the reference, jsontext, within its depth limit
		}
		var got string
		ok := Members(data, known, func(n, v []byte) bool {
			got += string(n) + "=" + string(v) + ";"
			return true
		})
		want, wantOK := membersReference(data, known)
		if ok != wantOK || (ok && got != want) {
			t.Fatalf("%q: Members %v %q, reference %v %q", data, ok, got, wantOK, want)
		}
	})
}

func checkNested(t *testing.T, data []byte) {
	t.Helper()
	end, depth, ok := Nested(data, 0)
	whole := ok && isBlankForTest(data[end:])
	if jsontest.Depth(data) > 10000 {
		return // past jsontext's own limit
	}
	if want := valid(data); whole != want {
		t.Fatalf("%q: Nested accepted %v (end %d), jsontext %v", data, whole, end, want)
	}
	if whole && depth != jsontest.Depth(data) {
		t.Fatalf("%q: depth %d, want %d", data, depth, jsontest.Depth(data))
	}
}

func isBlankForTest(b []byte) bool { return len(bytes.Trim(b, " \t\r\n")) == 0 }

var nestedSeeds = []string{`{"a":[1,2.5e-3,"x\u00e9",true,null]}`, `{"a":`, `"\ud800"`, `-0.0E+1`, `[[[]]]`, `{"a":"\x01"}`,
	"\"\xff\"", `[{"a":[{}]},[]]`, `{"a":1,"a":2}`, `{"a" 1}`, `{,}`, `[1,]`, `{"a":1,}`, `[1 2]`, ` [ ] `, `{}x`, `5`}

// Nested counts depth with no limit of its own (that it agrees with
// jsontext on what is JSON, FuzzNestedAgreesWithValid checks over
// nestedSeeds).
func TestNested(t *testing.T) {
	deep := strings.Repeat(`{"a":[`, 100000) + strings.Repeat(`]}`, 100000)
	if end, depth, ok := Nested([]byte(deep), 0); !ok || end != len(deep) || depth != 200000 {
		t.Errorf("200000 levels: end %d depth %d ok %v", end, depth, ok)
	}
	if _, _, ok := Nested([]byte(deep[:len(deep)-1]), 0); ok {
		t.Error("200000 levels cut short accepted")
	}
}

// FuzzNestedAgreesWithValid checks Nested against jsontext; go test runs
// it over nestedSeeds.
func FuzzNestedAgreesWithValid(f *testing.F) {
	for _, s := range nestedSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(checkNested)
}

// Members reads values of any depth: past Skip's recursion limit, a value
// is read again with Nested. Nesting is for whoever decodes the value.
func TestMembersReadsDeepValues(t *testing.T) {
	deep := strings.Repeat(`[{"x":`, 5000) + `1` + strings.Repeat(`}]`, 5000)
	data := []byte(`{"a":` + deep + `,"b":true,"c":` + deep + `}`)
	got := map[string]string{}
	if !Members(data, []string{"a", "b"}, func(n, v []byte) bool {
		got[string(n)] = string(v)
		return true
	}) {
		t.Fatal("declined")
	}
	if len(got) != 2 || got["a"] != deep || got["b"] != "true" {
		t.Errorf("got %d members, a of %d bytes (want %d), b %q", len(got), len(got["a"]), len(deep), got["b"])
	}
	// Invalid deep inside is still refused.
	if Members([]byte(`{"a":`+deep[:len(deep)-1]+`}`), []string{"a"}, func(n, v []byte) bool { return true }) {
		t.Error("a deep value cut short accepted")
	}
}

// Int64 reads plain integers within 64 bits, the bounds included, and
// declines the rest.
func TestInt64(t *testing.T) {
	for in, want := range map[string]int64{
		"0": 0, "-0": 0, "42": 42, "-7": -7,
		"9223372036854775807": 9223372036854775807, "-9223372036854775808": -9223372036854775808,
	} {
		if n, ok := Int64([]byte(in)); !ok || n != want {
			t.Errorf("%s: %d, %v", in, n, ok)
		}
	}
	for _, in := range []string{"", "-", "9223372036854775808", "-9223372036854775809", "12345678901234567890", "1.5", "1e3", `"1"`} {
		if n, ok := Int64([]byte(in)); ok {
			t.Errorf("%q read as %d", in, n)
		}
	}
}
