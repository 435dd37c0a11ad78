package mcp

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// stdString is how encoding/json writes s, without HTML escaping.
func stdString(t testing.TB, s string) string {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(s); err != nil {
		t.Fatal(err)
	}
	return strings.TrimSuffix(buf.String(), "\n")
}

func TestAppendStringMatchesEncodingJSON(t *testing.T) {
	for _, s := range []string{"", "plain", `quote " and \ backslash`, "new\nline\ttab\r\b\f", "\x00\x01\x1f\x7f",
		"héllo wörld ✓ 世界", "bad \xff utf8 \xc3", "line\u2028sep\u2029", "<html>&amp;", strings.Repeat("x", 5000)} {
		if got, want := string(appendString(nil, s)), stdString(t, s); got != want {
			t.Errorf("%q: got %s, want %s", s, got, want)
		}
	}
}

func FuzzAppendString(f *testing.F) {
	f.Add("hello")
	f.Add("\x00\"\\\u2028\xff")
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := string(appendString(nil, s)), stdString(t, s); got != want {
			t.Fatalf("%q: got %s, want %s", s, got, want)
		}
	})
}

func TestAppendJSONMatchesMarshal(t *testing.T) {
	size := int64(3)
	results := []*CallToolResult{
		{},
		{Content: []Content{&TextContent{Text: "hi \"there\"\n"}}},
		{Content: []Content{
			&TextContent{Text: "t", Annotations: &Annotations{Audience: []Role{RoleUser}, Priority: Priority(0)}, Meta: Meta{"a/b": 1}},
			&ImageContent{Data: []byte{0, 1, 2, 250}, MIMEType: "image/png"},
			&AudioContent{Data: []byte("WAV"), MIMEType: "audio/wav", Annotations: &Annotations{LastModified: "2025-01-01T00:00:00Z"}},
			&ResourceLink{URI: "file:///a", Name: "a", Size: &size},
			&EmbeddedResource{Resource: &TextResourceContents{URI: "u:1", Text: "x"}},
		}, StructuredContent: json.RawMessage(`{"a":[1,2]}`), IsError: true, ResultType: ResultComplete, Meta: Meta{"io.modelcontextprotocol/serverInfo": map[string]string{"name": "s"}}},
	}
	for _, r := range results {
		want, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		got, err := r.AppendJSON(nil)
		if err != nil {
			t.Fatal(err)
		}
		// encoding/json escapes <, > and & in strings; AppendJSON need not.
		if string(got) != string(want) {
			t.Errorf("AppendJSON\n got %s\nwant %s", got, want)
		}
	}
	bad := &CallToolResult{StructuredContent: json.RawMessage(`{"a":`)}
	if _, err := bad.AppendJSON(nil); err == nil {
		t.Error("invalid structuredContent accepted")
	}
	if _, err := (&CallToolResult{Content: []Content{nil}}).AppendJSON(nil); err == nil {
		t.Error("nil block accepted")
	}
}
