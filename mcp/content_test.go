package mcp_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

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
	cases := []struct {
		in              string
		index           int
		typ, field, msg string
	}{
		{`[{"type":"text","text":"ok"},{"type":"video","url":"x"}]`, 1, "video", "type", "unknown content type"},
		{`[{"type":"image","data":"AA=="}]`, 0, "image", "mimeType", "missing required field"},
		{`[{"type":"audio","mimeType":"audio/wav"}]`, 0, "audio", "data", "missing required field"},
		{`[{"type":"text"}]`, 0, "text", "text", "missing required field"},
		{`[{"text":"x"}]`, 0, "", "type", "missing required field"},
		{`[{"type":"text","text":"a"},{"type":"text","text":"b"},{"type":"resource_link","uri":"u:1"}]`, 2, "resource_link", "name", "missing required field"},
		{`[{"type":"resource","resource":{"uri":"u:1"}}]`, 0, "resource", "resource.text", "missing"},
		{`[{"type":"resource","resource":{"text":"x"}}]`, 0, "resource", "resource.uri", "missing required field"},
		{`[{"type":"image","data":"%%%","mimeType":"image/png"}]`, 0, "image", "data", "not valid base64"},
		{`[{"type":"text","text":5}]`, 0, "text", "text", "expected string"},
	}
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
