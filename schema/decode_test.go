package schema

import (
	"bytes"
	"reflect"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// reference decodes with encoding/json and UseNumber, through the validator
// library's own helper.
func reference(data []byte) (any, error) {
	return jsonschema.UnmarshalJSON(bytes.NewReader(data))
}

var decodeSeeds = []string{
	`{}`, `[]`, `{"a":1,"b":[true,false,null],"c":{"d":"e"}}`, ` {"a" : -0.5e+10 } `,
	`"esc\"aped \\ \/ \u00e9 \ud83d\ude00"`, `"bad \ud800 surrogate"`, "\"raw \xff byte\"", `12345678901234567890123`,
	`[1,2,]`, `{"a":1,}`, `{"a" 1}`, `01`, `-`, `1.`, `1e`, `.5`, `tru`, `nul`, `"unterminated`, "\"ctl \x01\"",
	`{"a":1}{"b":2}`, `[1] x`, ``, `   `, `{"a":{"a":{"a":[[[[]]]]}}}`, `{"dup":1,"dup":2}`, `"\u0000"`, `1E+2`, `-0`,
}

func TestDecodeValueMatchesEncodingJSON(t *testing.T) {
	for _, s := range decodeSeeds {
		compareDecoders(t, []byte(s))
	}
}

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
	if gerr == nil && !reflect.DeepEqual(got, want) {
		t.Fatalf("%q: got %#v, want %#v", data, got, want)
	}
}

func TestDecodeValueDepthLimit(t *testing.T) {
	deep := bytes.Repeat([]byte("["), maxDepth+5)
	if _, err := DecodeValue(deep); err == nil {
		t.Error("deep nesting accepted")
	}
}
