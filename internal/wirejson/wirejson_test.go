package wirejson

import (
	"bytes"
	stdjson "encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"

	json "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

type icon struct {
	Src   string   `json:"src"`
	Sizes []string `json:"sizes,omitempty"`
}

type annotations struct {
	Priority *float64 `json:"priority,omitempty"`
}

type Embedded struct {
	Title string `json:"title"`
}

type tool struct {
	Embedded
	Name        string                        `json:"name"`
	Size        *int64                        `json:"size"`
	Count       uint8                         `json:"count"`
	Ratio       float64                       `json:"ratio"`
	OK          bool                          `json:"ok"`
	Data        []byte                        `json:"data"`
	Icons       []icon                        `json:"icons"`
	ByName      map[string]*icon              `json:"byName"`
	Annotations *annotations                  `json:"annotations"`
	Raw         stdjson.RawMessage            `json:"raw"`
	Extra       map[string]stdjson.RawMessage `json:"extra"`
	Any         any                           `json:"any"`
	Loose       string                        `json:"loose,case:ignore"`
	NoTag       string
	hidden      string
	Skipped     string `json:"-"`
}

func TestUnmarshalAccepts(t *testing.T) {
	in := `{"title":"T","name":"n","size":3,"count":255,"ratio":1.5e3,"ok":true,"data":"AQI=",` +
		`"icons":[{"src":"a","sizes":["1x1"]}],"byName":{"x":{"src":"b"}},"annotations":{"priority":0},` +
		`"raw":{"a":[1,{"B":2}]},"extra":{"K":1},"any":{"Name":1},"LOOSE":"l","NoTag":"nt",` +
		`"unknown":{"Name":1},"n\u0061me2":"escaped unknown","Hidden":1,"skipped":"s"}`
	var got tool
	if err := Unmarshal([]byte(in), &got); err != nil {
		t.Fatal(err)
	}
	if got.Title != "T" || got.Name != "n" || *got.Size != 3 || got.Count != 255 || got.Ratio != 1500 || !got.OK ||
		string(got.Data) != "\x01\x02" || got.Icons[0].Sizes[0] != "1x1" || got.ByName["x"].Src != "b" ||
		*got.Annotations.Priority != 0 || string(got.Raw) != `{"a":[1,{"B":2}]}` || got.Loose != "l" || got.NoTag != "nt" ||
		got.hidden != "" {
		t.Errorf("decoded %+v", got)
	}
	// An escaped name is the name it spells.
	var n struct {
		Name string `json:"name"`
	}
	if err := Unmarshal([]byte(`{"n\u0061me":"x"}`), &n); err != nil || n.Name != "x" {
		t.Errorf("escaped name: %v %+v", err, n)
	}
}

func TestUnmarshalErrors(t *testing.T) {
	cases := []struct {
		in, ptr, reason string
	}{
		// Case variants of a struct's members, at any depth.
		{`{"Name":"x"}`, "/Name", `unknown member "Name": member names are case-sensitive (did you mean "name"?)`},
		{`{"name":"x","NAME":"y"}`, "/NAME", `unknown member "NAME": member names are case-sensitive (did you mean "name"?)`},
		{`{"N\u0061me":"x"}`, "/Name", `unknown member "Name": member names are case-sensitive (did you mean "name"?)`},
		{`{"Title":"x"}`, "/Title", `unknown member "Title": member names are case-sensitive (did you mean "title"?)`},
		{`{"icons":[{"src":"a"},{"Src":"b"}]}`, "/icons/1/Src", `unknown member "Src": member names are case-sensitive (did you mean "src"?)`},
		{`{"byName":{"k/~":{"SRC":"b"}}}`, "/byName/k~1~0/SRC", `unknown member "SRC": member names are case-sensitive (did you mean "src"?)`},
		{`{"annotations":{"PRIORITY":1}}`, "/annotations/PRIORITY", `unknown member "PRIORITY": member names are case-sensitive (did you mean "priority"?)`},
		{`{"notag":"x"}`, "/notag", `unknown member "notag": member names are case-sensitive (did you mean "NoTag"?)`},
		// U+017F folds to s, U+212A to k: a case-insensitive reader takes them too.
		{`{"ſrc":"x"}`, "", ``},
		{`{"icons":[{"ſrc":"x"}]}`, "/icons/0/ſrc", `unknown member "ſrc": member names are case-sensitive (did you mean "src"?)`},
		// Duplicates, anywhere.
		{`{"name":"a","name":"b"}`, "/name", `duplicate member name "name"`},
		{`{"name":"a","n\u0061me":"b"}`, "/name", `duplicate member name "name"`},
		{`{"icons":[{"src":"a","src":"b"}]}`, "/icons/0/src", `duplicate member name "src"`},
		{`{"raw":{"a":{"b":1,"b":2}}}`, "/raw/a/b", `duplicate member name "b"`},
		{`{"any":{"x":1,"x":1}}`, "/any/x", `duplicate member name "x"`},
		{`{"unknown":1,"unknown":2}`, "/unknown", `duplicate member name "unknown"`},
		// Invalid UTF-8 and unpaired surrogates.
		{"{\"name\":\"\xff\"}", "/name", "invalid UTF-8 in a string"},
		{"{\"unknown\":[\"\xc3\"]}", "/unknown/0", "invalid UTF-8 in a string"},
		{`{"name":"\udc00"}`, "/name", "invalid surrogate pair"},
		// Kinds.
		{`{"name":1}`, "/name", "expected a string, got a number"},
		{`{"size":"1"}`, "/size", "expected an integer, got a string"},
		{`{"size":1.5}`, "/size", "expected an integer, got 1.5"},
		{`{"size":1e3}`, "/size", "expected an integer, got 1e3"},
		{`{"size":99999999999999999999}`, "/size", "99999999999999999999 is out of range for an integer"},
		{`{"count":-1}`, "/count", "expected a non-negative integer, got -1"},
		{`{"count":256}`, "/count", "256 is out of range for a non-negative integer"},
		{`{"ok":"true"}`, "/ok", "expected a boolean, got a string"},
		{`{"data":"%%"}`, "/data", "expected a base64 string: illegal base64 data at input byte 0"},
		{`{"icons":{}}`, "/icons", "expected an array, got an object"},
		{`{"annotations":[]}`, "/annotations", "expected an object, got an array"},
		{`[]`, "", "expected an object, got an array"},
		// Syntax.
		{`{"name":"x"} {}`, "", "invalid character '{' after top-level value"},
		{`{"name":`, "/name", "unexpected end of input"},
		{``, "", "unexpected end of input"},
	}
	for _, c := range cases {
		var v tool
		err := Unmarshal([]byte(c.in), &v)
		if c.reason == "" {
			if err != nil {
				t.Errorf("%s: %v", c.in, err)
			}
			continue
		}
		var we *Error
		if !errors.As(err, &we) {
			t.Errorf("%s: got %v, want an *Error", c.in, err)
			continue
		}
		if we.Pointer != c.ptr || !strings.HasPrefix(we.Reason, c.reason) {
			t.Errorf("%s:\n got pointer %q reason %q\nwant pointer %q reason %q", c.in, we.Pointer, we.Reason, c.ptr, c.reason)
		}
		if msg := err.Error(); strings.Contains(msg, "Go ") || strings.Contains(msg, "wirejson.") || strings.Contains(msg, "int64") ||
			strings.Contains(msg, "uint8") || strings.Contains(msg, "[]") {
			t.Errorf("%s: message names a Go type: %s", c.in, msg)
		}
	}
}

// selfDecoding decodes itself through Unmarshal, as the mcp types do.
type selfDecoding struct{ N int }

var errCustom = errors.New("custom failure")

func (s *selfDecoding) UnmarshalJSON(b []byte) error {
	var w struct {
		N    int  `json:"n"`
		Fail bool `json:"fail"`
	}
	if err := Unmarshal(b, &w); err != nil {
		return err
	}
	if w.Fail {
		return fmt.Errorf("wrapped: %w", errCustom)
	}
	s.N = w.N
	return nil
}

func TestUnmarshalNestedMethods(t *testing.T) {
	type outer struct {
		Items []selfDecoding `json:"items"`
	}
	cases := []struct {
		in, ptr, reason string
	}{
		{`{"items":[{"n":1},{"n":"x"}]}`, "/items/1/n", "expected an integer, got a string"},
		{`{"items":[{"n":1},{"N":2}]}`, "/items/1/N", `unknown member "N": member names are case-sensitive (did you mean "n"?)`},
		{`{"items":[{"n":1,"n":2}]}`, "/items/0/n", `duplicate member name "n"`},
		{`{"items":[{"fail":true}]}`, "/items/0", "wrapped: custom failure"},
	}
	for _, c := range cases {
		var v outer
		err := Unmarshal([]byte(c.in), &v)
		var we *Error
		if !errors.As(err, &we) || we.Pointer != c.ptr || we.Reason != c.reason {
			t.Errorf("%s: got %#v, want pointer %q reason %q", c.in, err, c.ptr, c.reason)
		}
	}
	var v outer
	if err := Unmarshal([]byte(`{"items":[{"fail":true}]}`), &v); !errors.Is(err, errCustom) {
		t.Errorf("the method's error is not reachable with errors.Is: %v", err)
	}
	if err := Unmarshal([]byte(`{"items":[{"n":1},{"n":2}]}`), &v); err != nil || len(v.Items) != 2 || v.Items[1].N != 2 {
		t.Errorf("got %v %+v", err, v)
	}
}

type recursive struct {
	Name     string       `json:"name"`
	Children []*recursive `json:"children"`
	Next     *recursive   `json:"next"`
}

func TestUnmarshalRecursiveType(t *testing.T) {
	var r recursive
	err := Unmarshal([]byte(`{"name":"a","children":[{"name":"b","next":{"name":"c","Children":[]}}]}`), &r)
	var we *Error
	if !errors.As(err, &we) || we.Pointer != "/children/0/next/Children" {
		t.Errorf("got %v", err)
	}
	if err := Unmarshal([]byte(`{"name":"a","children":[{"name":"b","next":{"name":"c","children":[]}}]}`), &r); err != nil {
		t.Error(err)
	}
}

func TestUnmarshalUseNumber(t *testing.T) {
	var m map[string]any
	in := `{"big":12345678901234567890,"f":1.50,"e":1E+2,"nested":{"a":[1,-0,{"b":2}]},"s":"x","t":true,"n":null}`
	if err := UnmarshalUseNumber([]byte(in), &m); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{
		"big": stdjson.Number("12345678901234567890"), "f": stdjson.Number("1.50"), "e": stdjson.Number("1E+2"),
		"nested": map[string]any{"a": []any{stdjson.Number("1"), stdjson.Number("-0"), map[string]any{"b": stdjson.Number("2")}}},
		"s":      "x", "t": true, "n": nil,
	}
	if !reflect.DeepEqual(m, want) {
		t.Errorf("got %#v", m)
	}
	out, _ := stdjson.Marshal(m)
	if !strings.Contains(string(out), `"big":12345678901234567890`) || !strings.Contains(string(out), `"f":1.50`) {
		t.Errorf("numbers do not re-encode exactly: %s", out)
	}
	for _, bad := range []string{`{"a":1,"a":2}`, `{"a":{"b":[{"c":1,"c":1}]}}`, "{\"a\":\"\xff\"}", `{"a":1e999999}`} {
		var m map[string]any
		err := UnmarshalUseNumber([]byte(bad), &m)
		if bad == `{"a":1e999999}` {
			if err != nil || m["a"] != stdjson.Number("1e999999") {
				t.Errorf("%s: %v %v", bad, err, m)
			}
			continue
		}
		if err == nil {
			t.Errorf("%s accepted", bad)
		}
	}
}

// caseReference finds a case variant the slow way: decode generically and
// compare every object's names with the struct's.
func caseReference(v any, t reflect.Type) bool {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.Struct:
		m, ok := v.(map[string]any)
		if !ok {
			return false
		}
		fields := map[string]reflect.Type{}
		for i := range t.NumField() {
			name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ",")
			fields[name] = t.Field(i).Type
		}
		for k, val := range m {
			if ft, ok := fields[k]; ok {
				if caseReference(val, ft) {
					return true
				}
				continue
			}
			for name := range fields {
				if strings.EqualFold(k, name) {
					return true
				}
			}
		}
	case reflect.Slice:
		a, _ := v.([]any)
		for _, e := range a {
			if caseReference(e, t.Elem()) {
				return true
			}
		}
	case reflect.Map:
		m, _ := v.(map[string]any)
		for _, e := range m {
			if caseReference(e, t.Elem()) {
				return true
			}
		}
	}
	return false
}

type fuzzTarget struct {
	ID    int64                `json:"id"`
	Text  string               `json:"text"`
	Items []fuzzItem           `json:"items"`
	ByKey map[string]*fuzzItem `json:"byKey"`
	Raw   stdjson.RawMessage   `json:"raw"`
}

type fuzzItem struct {
	Kind string    `json:"kind"`
	Sub  *fuzzItem `json:"sub"`
}

// FuzzUnmarshalCaseCheck checks the case walk against a generic decode: for
// input the decoder accepts, Unmarshal refuses exactly the inputs that hold a
// case variant where a struct is decoded, and always with an *Error.
func FuzzUnmarshalCaseCheck(f *testing.F) {
	for _, s := range []string{`{"id":1,"text":"t","items":[{"kind":"a","sub":{"kind":"b"}}],"byKey":{"k":{"KIND":"x"}}}`,
		`{"ID":1}`, `{"Text":"x","raw":{"Text":1}}`, `{"items":[{"Sub":null}]}`, `{"te\u0078t":"x","T\u0045XT":1}`,
		`{"text":"a\"b\\","items":[{"kind":"\\\"","Kind":1}]}`, `{"raw":[{"\"":"}"}],"iD":2}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var v fuzzTarget
		if json.Unmarshal(data, &v) != nil {
			return // the decoder's own refusal; not the walk's business
		}
		var generic any
		if err := json.Unmarshal(data, &generic); err != nil {
			t.Fatalf("%q: generic decode failed: %v", data, err)
		}
		want := caseReference(generic, reflect.TypeFor[fuzzTarget]())
		var v2 fuzzTarget
		err := Unmarshal(data, &v2)
		var we *Error
		if (err != nil) != want || (err != nil && !errors.As(err, &we)) {
			t.Fatalf("%q: Unmarshal error %v, reference says case variant %v", data, err, want)
		}
	})
}

func TestErrorFormat(t *testing.T) {
	if s := (&Error{Pointer: "/a", Reason: "bad"}).Error(); s != "at /a: bad" {
		t.Error(s)
	}
	if s := (&Error{Reason: "bad"}).Error(); s != "bad" {
		t.Error(s)
	}
	var sy *jsontext.SyntacticError
	if errors.As(Unmarshal([]byte(`{`), new(any)), &sy) {
		t.Error("a decoder error leaks through Unwrap")
	}
}

var benchParams = []byte(`{"name":"get-weather","arguments":{"city":"Lisbon","units":"celsius","days":[1,2,3]},` +
	`"_meta":{"progressToken":"abc-123","io.modelcontextprotocol/clientInfo":{"name":"c","version":"1"}},` +
	`"task":{"ttl":60000}}`)

type benchCall struct {
	Name      string             `json:"name"`
	Arguments stdjson.RawMessage `json:"arguments,omitempty"`
	Task      *struct {
		TTL *int64 `json:"ttl,omitempty"`
	} `json:"task,omitempty"`
	Meta map[string]any `json:"_meta,omitempty"`
}

// BenchmarkUnmarshal measures the case check's cost: Strict is Unmarshal,
// DecoderOnly the decoder alone (what Unmarshal costs without the walk),
// CaseWalkOnly the walk alone, EncodingJSONv1 the decoder toolwire used before.
func BenchmarkUnmarshal(b *testing.B) {
	big := []byte(`{"name":"x","arguments":{"text":"` + strings.Repeat("lorem ipsum ", 10000) + `"}}`)
	for _, in := range []struct {
		name string
		data []byte
	}{{"small", benchParams}, {"120KiB", big}} {
		for _, d := range []struct {
			name   string
			decode func([]byte, *benchCall) error
		}{
			{"Strict", func(data []byte, p *benchCall) error { return Unmarshal(data, p) }},
			{"DecoderOnly", func(data []byte, p *benchCall) error { return json.Unmarshal(data, p) }},
			{"EncodingJSONv1", func(data []byte, p *benchCall) error { return stdjson.Unmarshal(data, p) }},
		} {
			b.Run(in.name+"/"+d.name, func(b *testing.B) {
				b.SetBytes(int64(len(in.data)))
				for b.Loop() {
					var p benchCall
					if err := d.decode(in.data, &p); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
		// The case walk only reads p's type: one p serves every round.
		b.Run(in.name+"/CaseWalkOnly", func(b *testing.B) {
			b.SetBytes(int64(len(in.data)))
			var p benchCall
			for b.Loop() {
				if err := checkCase(in.data, &p); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func TestElements(t *testing.T) {
	in := []byte(` [ {"a":1,"a":2} , "x", [1,{"b":1,"b":2}], 3 ] `)
	got, err := Elements(in)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{`{"a":1,"a":2}`, `"x"`, `[1,{"b":1,"b":2}]`, `3`}
	if len(got) != len(want) {
		t.Fatalf("got %q", got)
	}
	for i := range want {
		if string(got[i]) != want[i] {
			t.Errorf("element %d: %s, want %s", i, got[i], want[i])
		}
	}
	if got, err := Elements([]byte(`[]`)); err != nil || len(got) != 0 {
		t.Errorf("[]: %q %v", got, err)
	}
	for in, want := range map[string]string{
		`{}`:                 "expected an array, got an object",
		`[1] 2`:              "unexpected data after the top-level value",
		`[1] x`:              "invalid character 'x' at start of value",
		`[1,`:                "unexpected end of input",
		"[\"ok\",\"\xff\"]":  "at /1: invalid UTF-8 in a string",
		`[1,{"a":"\udc00"}]`: "at /1/a: invalid surrogate pair",
		``:                   "unexpected end of input",
		`[1 2]`:              "invalid character '2' after array element (expecting ',' or ']')",
	} {
		_, err := Elements([]byte(in))
		var we *Error
		if !errors.As(err, &we) || !strings.HasPrefix(err.Error(), want) {
			t.Errorf("%q: got %v, want %q", in, err, want)
		}
	}
}

func FuzzElements(f *testing.F) {
	for _, s := range []string{`[]`, `[{"a":1,"a":2},"x",[1,{"b":1,"b":2}],3]`, `[1] 2`, "[\"\xff\"]", ` [ 1 , 2 ] `, `{}`, `[`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		got, err := Elements(data)
		valid := jsontext.Value(data).IsValid(jsontext.AllowDuplicateNames(true))
		isArray := valid && jsontext.Value(bytes.TrimLeft(data, " \t\r\n")).Kind() == '['
		if (err == nil) != isArray {
			t.Fatalf("%q: error %v, valid array %v", data, err, isArray)
		}
		if err != nil {
			return
		}
		// The elements, joined, are the array again.
		var b []byte
		b = append(b, '[')
		for i, e := range got {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, e...)
		}
		b = append(b, ']')
		want := jsontext.Value(bytes.Clone(data))
		_ = want.Compact(jsontext.AllowDuplicateNames(true))
		have := jsontext.Value(b)
		if err := have.Compact(jsontext.AllowDuplicateNames(true)); err != nil || !bytes.Equal(have, want) {
			t.Fatalf("%q: elements %q", data, got)
		}
	})
}
