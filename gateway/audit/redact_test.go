package audit

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/toolwire/toolwire/internal/testwait"
)

func TestRedact(t *testing.T) {
	keys := []string{"password", "API_KEY", "token"}
	cases := []struct {
		name, in, want string
		max            int
	}{
		{"flat", `{"user":"a","password":"s3cret"}`, `{"user":"a","password":"[redacted]"}`, 0},
		{"case-insensitive", `{"Password":"x","api_key":"y","TOKEN":1}`, `{"Password":"[redacted]","api_key":"[redacted]","TOKEN":"[redacted]"}`, 0},
		{"nested", `{"a":{"b":{"token":"t","keep":true}}}`, `{"a":{"b":{"token":"[redacted]","keep":true}}}`, 0},
		{"object value", `{"token":{"inner":"secret","n":[1,2]},"x":null}`, `{"token":"[redacted]","x":null}`, 0},
		{"arrays", `[{"password":"1"},[{"password":["2"]}],"password"]`, `[{"password":"[redacted]"},[{"password":"[redacted]"}],"password"]`, 0},
		{"duplicate keys are not exact JSON: nothing of them is kept", `{"password":"a","password":"b"}`, `"[invalid JSON arguments: 31 bytes]"`, 0},
		{"order and numbers kept", `{ "z" : 1.50e3 , "a" : -0 , "m" : [ true , false ] }`, `{"z":1.50e3,"a":-0,"m":[true,false]}`, 0},
		{"escaped key", `{"pass\u0077ord":"x"}`, `{"password":"[redacted]"}`, 0},
		{"unicode kept", `{"name":"Zoë 日本 🎉","note":"\u2028"}`, `{"name":"Zoë 日本 🎉","note":"\u2028"}`, 0},
		{"scalar", `"just a string"`, `"just a string"`, 0},
		{"truncate", `{"q":"abcdefghij","short":"abc"}`, `{"q":"abcd…[truncated 10 bytes]","short":"abc"}`, 4},
		{"truncate at rune boundary", `["ééé"]`, `["é…[truncated 6 bytes]"]`, 3},
		{"truncate keeps keys", `{"abcdefgh":"x"}`, `{"abcdefgh":"x"}`, 2},
		{"invalid: truncated", `{"password":"x"`, `"[invalid JSON arguments: 15 bytes]"`, 0},
		{"invalid: trailing data", `{} {"password":"x"}`, `"[invalid JSON arguments: 19 bytes]"`, 0},
		{"invalid: bare word", `password`, `"[invalid JSON arguments: 8 bytes]"`, 0},
		{"invalid: missing colon", `{"password" "x"}`, `"[invalid JSON arguments: 16 bytes]"`, 0},
		{"invalid: missing comma", `["a" "b"]`, `"[invalid JSON arguments: 9 bytes]"`, 0},
	}
	for _, c := range cases {
		got := Redact(json.RawMessage(c.in), keys, c.max)
		if string(got) != c.want {
			t.Errorf("%s: %s\n want %s", c.name, got, c.want)
		}
		if !json.Valid(got) {
			t.Errorf("%s: invalid output %s", c.name, got)
		}
	}
	if got := Redact(nil, keys, 0); got != nil {
		t.Errorf("nil: %s", got)
	}
	if got := Redact(json.RawMessage("  \n"), keys, 0); got != nil {
		t.Errorf("blank: %s", got)
	}
}

func TestRedactHugeAndDeep(t *testing.T) {
	huge := strings.Repeat("x", 10<<20)
	out := Redact(json.RawMessage(`{"blob":"`+huge+`","password":"p"}`), []string{"password"}, 1024)
	if len(out) > 2048 || !json.Valid(out) || strings.Contains(string(out), `"p"`) {
		t.Errorf("huge: %d bytes: %.100s", len(out), out)
	}
	deep := strings.Repeat("[", MaxRedactDepth) + strings.Repeat("]", MaxRedactDepth)
	if out := Redact(json.RawMessage(deep), nil, 0); string(out) != deep {
		t.Errorf("depth %d rejected: %.40s", MaxRedactDepth, out)
	}
	deeper := "[" + deep + "]"
	if out := Redact(json.RawMessage(deeper), nil, 0); !strings.HasPrefix(string(out), `"[invalid JSON`) {
		t.Errorf("depth %d accepted", MaxRedactDepth+1)
	}
	// Invalid UTF-8 inside a string becomes U+FFFD; the output stays JSON.
	out = Redact(json.RawMessage("{\"a\":\"\xff\xfe\"}"), nil, 0)
	if !json.Valid(out) || !utf8.Valid(out) {
		t.Errorf("invalid UTF-8: %q", out)
	}
}

// checkRedacted fails if any member named like one of keys has a value
// other than the Redacted string.
func checkRedacted(t *testing.T, v any, keys []string) {
	switch v := v.(type) {
	case map[string]any:
		for k, x := range v {
			for _, key := range keys {
				if strings.EqualFold(k, key) && x != Redacted {
					t.Fatalf("value of %q survived: %v", k, x)
				}
			}
			checkRedacted(t, x, keys)
		}
	case []any:
		for _, x := range v {
			checkRedacted(t, x, keys)
		}
	}
}

func FuzzRedact(f *testing.F) {
	seeds := []string{
		`{"password":"x","nested":{"Token":{"a":[1,2,3]}},"list":[{"api_key":"k"}]}`,
		`[1,"two",{"three":3.0e10},null,true,false]`,
		`{"name":"Zoë 🎉 \u0000 \ud83d\ude00","s":"` + strings.Repeat("long ", 50) + `"}`,
		`{"password":"a","PASSWORD":"b","password":"c"}`,
		`"scalar"`, `-1.5E+3`, `null`, `{}`, `[]`,
		`{"a":`, `{"a" 1}`, `[1 2]`, `{"a":1}}`, "{\"a\":\"\xff\"}", `{"a":"\ud800"}`,
	}
	for _, s := range seeds {
		f.Add([]byte(s), "password", 8)
	}
	f.Add([]byte(`{"Token":"t","TOKEN":"u"}`), "token", 0)
	f.Add([]byte(` { "message" : "hi" , "n" : [1, 2.50, -0e3, true, null] } `), "password", 64)
	f.Add([]byte(`{"a":{"b":{"c":"<&>"}}}`), "token", 0)
	f.Fuzz(func(t *testing.T, in []byte, key string, max int) {
		keys := []string{key, "api_key"}
		out := Redact(in, keys, max%4096)
		// The quick path answers exactly as the full one would.
		if fast, ok := unchanged(in, keys, max%4096); ok {
			slow, err := redact(in, keys, max%4096)
			if err != nil || !bytes.Equal(fast, slow) {
				t.Fatalf("quick path %q, full path %q (%v), for %q", fast, slow, err, in)
			}
		}
		if out == nil {
			if len(strings.TrimSpace(string(in))) != 0 {
				t.Fatalf("nil output for %q", in)
			}
			return
		}
		if !json.Valid(out) {
			t.Fatalf("invalid output %q for %q", out, in)
		}
		// Numbers are kept as written, so one past float64's range
		// (1E700) is valid output: read them as json.Number.
		d := json.NewDecoder(bytes.NewReader(out))
		d.UseNumber()
		var v any
		if err := d.Decode(&v); err != nil {
			t.Fatal(err)
		}
		checkRedacted(t, v, keys)
		// Valid input keeps its shape: redacting nothing and truncating
		// nothing gives the same value.
		if json.Valid(in) && !strings.HasPrefix(string(out), `"[invalid JSON`) {
			var a, b any
			json.Unmarshal(in, &a)
			json.Unmarshal(Redact(in, nil, 0), &b)
			if ja, jb := string(testwait.MustJSON(t, a)), string(testwait.MustJSON(t, b)); ja != jb {
				t.Fatalf("identity redaction changed %s into %s", ja, jb)
			}
		}
	})
}

func TestRedactQuickPath(t *testing.T) {
	keys := []string{"password", "Token"}
	for _, c := range []struct {
		in   string
		max  int
		want bool // taken
	}{
		{` {"message": "hi", "n": [1, 2.50]} `, 1024, true},
		{`{"message":"hi"}`, 5, false},                                  // a string might be too long
		{`{"PassWord":"x"}`, 0, false},                                  // a key, in another case
		{`{"note":"my token is here"}`, 0, false},                       // a key inside a value: the full path decides
		{`{"p\u0061ssword":"x"}`, 0, false},                             // an escape could spell a key
		{`{"name":"Zoë"}`, 0, false},                                    // not ASCII
		{`{"a":1}}`, 0, false},                                          // not JSON: the full path says so
		{`{"":"","":""}`, 0, false},                                     // a name twice: the full path refuses it
		{`[{"a":1},{"a":2}]`, 0, true},                                  // the same name in two objects is fine
		{strings.Repeat("[", 600) + strings.Repeat("]", 600), 0, false}, // too deep
	} {
		fast, ok := unchanged([]byte(c.in), keys, c.max)
		if ok != c.want {
			t.Errorf("%s: quick path taken %v", c.in, ok)
			continue
		}
		if ok {
			slow, err := redact([]byte(c.in), keys, c.max)
			if err != nil || !bytes.Equal(fast, slow) {
				t.Errorf("%s: quick %s, full %s %v", c.in, fast, slow, err)
			}
		}
	}
}
