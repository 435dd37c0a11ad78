package schema

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/toolwire/toolwire/internal/wirejson"
)

// reference decodes strictly with the wire decoder, numbers as json.Number.
func reference(data []byte) (any, error) {
	var v any
	err := wirejson.UnmarshalUseNumber(data, &v)
	return v, err
}

var decodeSeeds = []string{
	`{}`, `[]`, `{"a":1,"b":[true,false,null],"c":{"d":"e"}}`, ` {"a" : -0.5e+10 } `,
	`"esc\"aped \\ \/ \u00e9 \ud83d\ude00"`, `"bad \ud800 surrogate"`, "\"raw \xff byte\"", `12345678901234567890123`,
	`[1,2,]`, `{"a":1,}`, `{"a" 1}`, `01`, `-`, `1.`, `1e`, `.5`, `tru`, `nul`, `"unterminated`, "\"ctl \x01\"",
	`{"a":1}{"b":2}`, `[1] x`, ``, `   `, `{"a":{"a":{"a":[[[[]]]]}}}`, `{"dup":1,"dup":2}`, `"\u0000"`, `1E+2`, `-0`,
	`{"a":{"b":[1,{"c":1,"c":2}]}}`, `{"a":1,"\u0061":2}`, `{"a":"\udc00"}`, `{"a":"\ud800\u0041"}`, "{\"\xed\xa0\x80\":1}",
	`1e400`, `[-1e-400]`, `{"A":1,"a":2}`, "\f1", `"\`, `{"a":1,"a":tru}`, `[1,"\ud83d\ude00",{"x":[]}]`,
}

// FuzzDecodeValue compares DecodeValue with the strict wire decoder: the
// same inputs accepted, the same values (numbers as the same text), and
// numbers equal, as floats, to what a plain decode into any gives. go test
// runs it over decodeSeeds.
func FuzzDecodeValue(f *testing.F) {
	for _, s := range decodeSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		compareDecoders(t, data)
	})
}

func compareDecoders(t *testing.T, data []byte) {
	t.Helper()
	got, gerr := DecodeValue(data)
	want, werr := reference(data)
	if (gerr != nil) != (werr != nil) {
		t.Fatalf("%q: error %v, reference error %v", data, gerr, werr)
	}
	if gerr != nil {
		var de *DecodeError
		if !errors.As(gerr, &de) {
			t.Fatalf("%q: error %T is not a *DecodeError", data, gerr)
		}
		return
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("%q: got %#v, want %#v", data, got, want)
	}
	var plain any
	if err := wirejson.Unmarshal(data, &plain); err == nil {
		if !sameNumbers(got, plain) {
			t.Fatalf("%q: numbers of %#v differ from %#v", data, got, plain)
		}
	}
}

// sameNumbers compares a DecodeValue result with a plain decode, numbers
// as float64.
func sameNumbers(v, plain any) bool {
	switch v := v.(type) {
	case json.Number:
		f, err := strconv.ParseFloat(string(v), 64)
		p, ok := plain.(float64)
		return err == nil && ok && f == p
	case map[string]any:
		p, ok := plain.(map[string]any)
		if !ok || len(p) != len(v) {
			return false
		}
		for k, e := range v {
			if !sameNumbers(e, p[k]) {
				return false
			}
		}
		return true
	case []any:
		p, ok := plain.([]any)
		if !ok || len(p) != len(v) {
			return false
		}
		for i := range v {
			if !sameNumbers(v[i], p[i]) {
				return false
			}
		}
		return true
	}
	return reflect.DeepEqual(v, plain)
}

func TestDecodeValueDepthLimit(t *testing.T) {
	for _, n := range []int{MaxDepth, MaxDepth + 1} {
		deep := []byte(strings.Repeat("[", n) + strings.Repeat("]", n))
		_, err := DecodeValue(deep)
		_, rerr := reference(deep)
		if (err == nil) != (n == MaxDepth) || (rerr == nil) != (n == MaxDepth) {
			t.Errorf("%d levels: DecodeValue %v, reference %v", n, err, rerr)
		}
	}
	if _, err := DecodeValue(bytes.Repeat([]byte("["), MaxDepth+5)); err == nil {
		t.Error("deep nesting accepted")
	}
}

func TestDecodeValueErrors(t *testing.T) {
	cases := []struct {
		in, path string
		offset   int
		reason   string
	}{
		{`{"a":1,"a":2}`, "/a", 7, `duplicate member name "a"`},
		{`{"a":{"b":[1,{"c":1,"c":2}]}}`, "/a/b/1/c", 20, `duplicate member name "c"`},
		{`{"a":1,"\u0061":2}`, "/a", 7, `duplicate member name "a"`},
		{`[{"x/y~":{"k":0,"k":0}}]`, "/0/x~1y~0/k", 16, `duplicate member name "k"`},
		{"{\"a\":[\"ok\",\"b\xffd\"]}", "/a/1", 13, "invalid UTF-8 in a string"},
		{`{"a":"\ud800"}`, "/a", 5, "invalid string: invalid surrogate pair"},
		{`{"a":tru}`, "/a", 5, "invalid literal, want true"},
		{`[1] x`, "", 4, "unexpected data after the top-level value"},
	}
	for _, c := range cases {
		_, err := DecodeValue([]byte(c.in))
		var de *DecodeError
		if !errors.As(err, &de) {
			t.Errorf("%q: got %v, want a *DecodeError", c.in, err)
			continue
		}
		if de.Path != c.path || de.Offset != c.offset || !strings.HasPrefix(de.Reason, c.reason) {
			t.Errorf("%q: got path %q offset %d reason %q, want %q %d %q", c.in, de.Path, de.Offset, de.Reason, c.path, c.offset, c.reason)
		}
	}
	_, err := DecodeValue([]byte(`{"a":{"b":1,"b":2}}`))
	if got, want := err.Error(), `invalid JSON at /a/b (offset 12): duplicate member name "b"`; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	_, err = DecodeValue([]byte(`[1,`))
	if got, want := err.Error(), `invalid JSON at /1 (offset 3): unexpected end of input`; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

func BenchmarkDecodeValue(b *testing.B) {
	in := []byte(`{"city":"Lisbon","units":"celsius","days":[1,2,3],"options":{"hourly":true,"lang":"pt-PT","limit":10}}`)
	b.SetBytes(int64(len(in)))
	for b.Loop() {
		if _, err := DecodeValue(in); err != nil {
			b.Fatal(err)
		}
	}
}
