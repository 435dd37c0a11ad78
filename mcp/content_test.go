package mcp_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/toolwire/toolwire/internal/wirejson"
	"github.com/toolwire/toolwire/mcp"
)

func TestContentEncodeWritesType(t *testing.T) {
	size := int64(42)
	cases := []struct {
		block mcp.Content
		want  string
	}{
		{&mcp.TextContent{Text: "hi"}, `{"type":"text","text":"hi"}`},
		{&mcp.TextContent{Text: ""}, `{"type":"text","text":""}`},
		{&mcp.ImageContent{Data: []byte("PNG"), MIMEType: "image/png"}, `{"type":"image","data":"UE5H","mimeType":"image/png"}`},
		{&mcp.AudioContent{Data: []byte("WAV"), MIMEType: "audio/wav"}, `{"type":"audio","data":"V0FW","mimeType":"audio/wav"}`},
		{&mcp.ResourceLink{URI: "file:///a", Name: "a", Size: &size}, `{"type":"resource_link","uri":"file:///a","name":"a","size":42}`},
		{&mcp.EmbeddedResource{Resource: &mcp.BlobResourceContents{URI: "x:1", Blob: []byte{1, 2}}}, `{"type":"resource","resource":{"uri":"x:1","blob":"AQI="}}`},
		{&mcp.TextContent{Text: "p", Annotations: &mcp.Annotations{Priority: mcp.Priority(0)}}, `{"type":"text","text":"p","annotations":{"priority":0}}`},
		{&mcp.TextContent{Text: "m", Meta: mcp.Meta{"a.b/c": 1}}, `{"type":"text","text":"m","_meta":{"a.b/c":1}}`},
	}
	for _, c := range cases {
		got, err := json.Marshal(c.block)
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != c.want {
			t.Errorf("%T: got %s, want %s", c.block, got, c.want)
		}
	}
}

func TestContentRoundTripKeepsEverything(t *testing.T) {
	in := `[{"type":"text","text":"t","annotations":{"audience":["assistant"],"priority":0,"lastModified":"2025-01-12T15:00:58Z"},"_meta":{"k":12345678901234567890}},` +
		`{"type":"resource_link","uri":"u:1","name":"n","title":"T","description":"D","mimeType":"text/plain","size":7,"icons":[{"src":"https://x/i.png","sizes":["48x48"],"theme":"dark"}]}]`
	blocks, err := mcp.DecodeContent([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	out, _ := json.Marshal(blocks)
	assertSameJSON(t, []byte(in), out)
	if !strings.Contains(string(out), "12345678901234567890") {
		t.Errorf("large _meta number lost precision: %s", out)
	}
}

func TestDecodeContentErrorsNameBlockAndField(t *testing.T) {
	cases := []contentErrorCase{
		{`[{"type":"text","text":"ok"},{"type":"video","url":"x"}]`, 1, "video", "type", "unknown content type"},
		{`[{"type":"image","data":"AA=="}]`, 0, "image", "mimeType", "missing required field"},
		{`[{"type":"audio","mimeType":"audio/wav"}]`, 0, "audio", "data", "missing required field"},
		{`[{"type":"text"}]`, 0, "text", "text", "missing required field"},
		{`[{"text":"x"}]`, 0, "", "type", "missing required field"},
		{`[{"type":"text","text":"a"},{"type":"text","text":"b"},{"type":"resource_link","uri":"u:1"}]`, 2, "resource_link", "name", "missing required field"},
		{`[{"type":"resource","resource":{"uri":"u:1"}}]`, 0, "resource", "resource.text", "missing"},
		{`[{"type":"resource","resource":{"text":"x"}}]`, 0, "resource", "resource.uri", "missing required field"},
		{`[{"type":"image","data":"%%%","mimeType":"image/png"}]`, 0, "image", "data", "not valid base64"},
		{`[{"type":"text","text":5}]`, 0, "text", "text", "expected a string, got a number"},
	}
	checkContentErrors(t, cases)
}

func TestCallToolResultContentRequiredAndNeverNull(t *testing.T) {
	var r mcp.CallToolResult
	if err := json.Unmarshal([]byte(`{"isError":true}`), &r); err == nil || !strings.Contains(err.Error(), "content") {
		t.Errorf("missing content accepted: %v", err)
	}
	if err := json.Unmarshal([]byte(`{"content":{}}`), &r); err == nil {
		t.Error("content that is not an array accepted")
	}
	b, _ := json.Marshal(&mcp.CallToolResult{})
	if string(b) != `{"content":[]}` {
		t.Errorf("empty result encodes as %s", b)
	}
	b, _ = json.Marshal(&mcp.ListToolsResult{})
	if string(b) != `{"tools":[]}` {
		t.Errorf("empty list encodes as %s", b)
	}
}

func TestToolAnnotationsTriState(t *testing.T) {
	tool := mcp.Tool{Name: "t", InputSchema: json.RawMessage(`{"type":"object"}`),
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: mcp.Bool(false), DestructiveHint: mcp.Bool(true)}}
	b, _ := json.Marshal(&tool)
	want := `{"name":"t","inputSchema":{"type":"object"},"annotations":{"readOnlyHint":false,"destructiveHint":true}}`
	if string(b) != want {
		t.Errorf("got %s, want %s", b, want)
	}
	var back mcp.Tool
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	a := back.Annotations
	if a.ReadOnlyHint == nil || *a.ReadOnlyHint || a.IdempotentHint != nil || a.OpenWorldHint != nil {
		t.Errorf("hints not kept as set/unset: %+v", a)
	}
}

func TestEmbeddedResourceNeedsContents(t *testing.T) {
	if _, err := json.Marshal(&mcp.EmbeddedResource{}); err == nil {
		t.Error("embedded resource without contents encoded")
	}
	_, err := mcp.DecodeContent([]byte(`[{"type":"resource","resource":{"uri":"u:1","text":"a","blob":"AA=="}}]`))
	if err == nil {
		t.Error("resource with both text and blob accepted")
	}
}

// Content blocks decode exactly: a case variant of a member is refused with
// the member it resembles, and so is a name appearing twice, at any depth.
func TestDecodeContentIsStrict(t *testing.T) {
	cases := []contentErrorCase{
		{`[{"type":"text","Text":"x"}]`, 0, "text", "Text", `unknown member "Text": member names are case-sensitive (did you mean "text"?)`},
		{`[{"TYPE":"text","text":"x"}]`, 0, "", "TYPE", `unknown member "TYPE": member names are case-sensitive (did you mean "type"?)`},
		{`[{"type":"text","text":"a","text":"b"}]`, 0, "text", "text", `duplicate member name "text"`},
		{`[{"type":"text","t\u0065xt":"a","text":"b"}]`, 0, "text", "text", `duplicate member name "text"`},
		{`[{"type":"text","text":"ok"},{"type":"text","type":"image","data":"AA==","mimeType":"image/png","text":"x"}]`, 1, "", "type", `duplicate member name "type"`},
		{`[{"type":"image","data":"AA==","mimeType":"image/png","MimeType":"text/html"}]`, 0, "image", "MimeType", `did you mean "mimeType"?`},
		{`[{"type":"text","text":"a","annotations":{"Priority":1}}]`, 0, "text", "annotations.Priority", `did you mean "priority"?`},
		{`[{"type":"text","text":"a","annotations":{"audience":["user"],"audience":["assistant"]}}]`, 0, "text", "annotations.audience", `duplicate member name "audience"`},
		{`[{"type":"text","text":"a","_meta":{"k":1,"k":2}}]`, 0, "text", "_meta.k", `duplicate member name "k"`},
		{`[{"type":"text","text":"a","_meta":{"k":{"x":1,"x":2}}}]`, 0, "text", "_meta.k.x", `duplicate member name "x"`},
		{`[{"type":"resource_link","uri":"u:1","name":"n","icons":[{"src":"a","Src":"b"}]}]`, 0, "resource_link", "icons.0.Src", `did you mean "src"?`},
		{`[{"type":"resource","resource":{"uri":"u:1","text":"a","Blob":"AA=="}}]`, 0, "resource", "resource.Blob", `did you mean "blob"?`},
		{`[{"type":"resource","resource":{"uri":"u:1","uri":"u:2","text":"a"}}]`, 0, "resource", "resource.uri", `duplicate member name "uri"`},
		{"[{\"type\":\"text\",\"text\":\"ok\"},{\"type\":\"text\",\"text\":\"\xff\"}]", 1, "", "text", "invalid UTF-8 in a string"},
		{`[{"type":"text","text":"\ud800"}]`, 0, "", "text", "invalid surrogate pair"},
		{`["text"]`, 0, "", "", "not a valid block: expected an object, got a string"},
	}
	checkContentErrors(t, cases)
	for _, bad := range []string{`{"type":"text"}`, `[{"type":"text","text":"a"}] []`, `[`} {
		if _, err := mcp.DecodeContent([]byte(bad)); err == nil {
			t.Errorf("%s accepted", bad)
		}
	}
}

func TestCallToolResultIsStrict(t *testing.T) {
	cases := []struct{ in, want string }{
		{`{"content":[],"Content":[{"type":"text","text":"x"}]}`, `unknown member "Content": member names are case-sensitive (did you mean "content"?)`},
		{`{"content":[],"content":[{"type":"text","text":"x"}]}`, `duplicate member name "content"`},
		{`{"content":[],"isError":false,"IsError":true}`, `unknown member "IsError"`},
		{`{"content":[],"structuredContent":{"a":1,"a":2}}`, `duplicate member name "a"`},
		{`{"content":[{"type":"text","Text":"x"}]}`, `content[0] (text): field "Text": unknown member "Text"`},
	}
	for _, c := range cases {
		// Strict whichever decoder calls it: the method decodes its members
		// itself.
		for name, unmarshal := range map[string]func([]byte, any) error{"encoding/json": json.Unmarshal, "wirejson": wirejson.Unmarshal} {
			var r mcp.CallToolResult
			err := unmarshal([]byte(c.in), &r)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("%s via %s: got %v, want %q", c.in, name, err, c.want)
			}
		}
	}
	// The client tells a bad block from a malformed result with errors.As.
	var r mcp.CallToolResult
	err := wirejson.Unmarshal([]byte(`{"content":[{"type":"text","text":"a"},{"type":"text","Text":"x"}]}`), &r)
	var ce *mcp.ContentError
	if !errors.As(err, &ce) || ce.Index != 1 || ce.Field != "Text" {
		t.Errorf("got %#v, want a *ContentError for block 1", err)
	}
	if err := wirejson.Unmarshal([]byte(`{"content":[{"type":"text","text":"a"}],"structuredContent":{"a":1},"isError":true,"_meta":{"n":1.50}}`), &r); err != nil {
		t.Fatal(err)
	}
	if !r.IsError || string(r.StructuredContent) != `{"a":1}` || r.Meta["n"] != json.Number("1.50") {
		t.Errorf("got %+v", r)
	}
}

func TestMetaIsStrictAndExact(t *testing.T) {
	var tool mcp.Tool
	in := `{"name":"t","inputSchema":{"type":"object"},"_meta":{"big":12345678901234567890,"f":1.50,"nested":{"a":[1e2]}}}`
	if err := wirejson.Unmarshal([]byte(in), &tool); err != nil {
		t.Fatal(err)
	}
	out, _ := json.Marshal(&tool)
	if !strings.Contains(string(out), `"_meta":{"big":12345678901234567890,"f":1.50,"nested":{"a":[1e2]}}`) {
		t.Errorf("_meta numbers changed: %s", out)
	}
	for _, bad := range []string{`{"a":1,"a":2}`, `{"a":{"b":1,"b":2}}`, "{\"a\":\"\xff\"}", `[1]`} {
		var m mcp.Meta
		if err := json.Unmarshal([]byte(bad), &m); err == nil {
			t.Errorf("_meta %s accepted", bad)
		}
	}
	var m mcp.Meta
	if err := json.Unmarshal([]byte(`null`), &m); err != nil || m != nil {
		t.Errorf("null _meta: %v %v", err, m)
	}
}

func TestResourceContentsIsStrict(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{`{"uri":"u:1","text":"a","text":"b"}`, `field "text": duplicate member name "text"`},
		{`{"URI":"u:1","text":"a"}`, `field "URI": unknown member "URI": member names are case-sensitive (did you mean "uri"?)`},
		{`{"uri":"u:1","text":"a","_meta":{"x":1,"x":1}}`, `field "_meta.x": duplicate member name "x"`},
		{`"u:1"`, `expected an object, got a string`},
	} {
		_, err := mcp.DecodeResourceContents([]byte(c.in))
		if err == nil || err.Error() != c.want && !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got %v, want %q", c.in, err, c.want)
		}
	}
}

// FuzzDecodeContent checks that every content array DecodeContent accepts is
// strictly valid JSON (no name twice in an object, valid UTF-8) and that
// what it decodes re-encodes to something it decodes to the same blocks.
func FuzzDecodeContent(f *testing.F) {
	for _, s := range []string{
		`[{"type":"text","text":"t","annotations":{"audience":["user"],"priority":0.5},"_meta":{"k":1}}]`,
		`[{"type":"image","data":"AA==","mimeType":"image/png"},{"type":"audio","data":"","mimeType":"audio/wav"}]`,
		`[{"type":"resource_link","uri":"u:1","name":"n","size":3,"icons":[{"src":"s","sizes":["1x1"]}]}]`,
		`[{"type":"resource","resource":{"uri":"u:1","blob":"AQI="}},{"type":"resource","resource":{"uri":"u:2","text":"x"}}]`,
		`[{"type":"text","Text":"x"}]`, `[{"type":"text","text":"a","text":"b"}]`, `[{"type":"text","t\u0065xt":"\ud83d\ude00"}]`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		blocks, err := mcp.DecodeContent(data)
		if err != nil {
			return
		}
		if !jsontext.Value(data).IsValid() {
			t.Fatalf("%q: accepted JSON the strict decoder refuses", data)
		}
		out, err := json.Marshal(blocks)
		if err != nil {
			t.Fatalf("%q: decoded blocks do not encode: %v", data, err)
		}
		again, err := mcp.DecodeContent(out)
		if err != nil {
			t.Fatalf("%q: re-encoded as %s, which is refused: %v", data, out, err)
		}
		if out2, _ := json.Marshal(again); string(out2) != string(out) {
			t.Fatalf("%q: %s decodes and re-encodes as %s", data, out, out2)
		}
	})
}

// contentErrorCase is content DecodeContent refuses, and the block (by
// index and type), field and reason its *ContentError must name.
type contentErrorCase struct {
	in              string
	index           int
	typ, field, msg string
}

// checkContentErrors decodes each case's content and checks the
// *ContentError it gets, and that the error text names the block.
func checkContentErrors(t *testing.T, cases []contentErrorCase) {
	t.Helper()
	for _, c := range cases {
		_, err := mcp.DecodeContent([]byte(c.in))
		var ce *mcp.ContentError
		if !errors.As(err, &ce) {
			t.Errorf("%s: got %v, want a *ContentError", c.in, err)
			continue
		}
		if ce.Index != c.index || ce.Type != c.typ || ce.Field != c.field || !strings.Contains(ce.Reason, c.msg) {
			t.Errorf("%s: got index %d type %q field %q reason %q", c.in, ce.Index, ce.Type, ce.Field, ce.Reason)
		}
		if !strings.Contains(err.Error(), "content[") {
			t.Errorf("error text does not name the block: %v", err)
		}
	}
}
