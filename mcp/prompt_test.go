package mcp_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/toolwire/toolwire/mcp"
)

func TestPromptRoundTrip(t *testing.T) {
	in := `{"name":"review","title":"Code review","description":"Review code",` +
		`"arguments":[{"name":"code","title":"Code","description":"the code","required":true},{"name":"style"}],` +
		`"icons":[{"src":"https://x/i.png"}],"_meta":{"a.b/c":1}}`
	var p mcp.Prompt
	if err := json.Unmarshal([]byte(in), &p); err != nil {
		t.Fatal(err)
	}
	if p.Name != "review" || len(p.Arguments) != 2 || !p.Arguments[0].Required || p.Arguments[1].Required || len(p.Icons) != 1 {
		t.Fatalf("decoded %+v", p)
	}
	out, err := json.Marshal(&p)
	if err != nil {
		t.Fatal(err)
	}
	assertSameJSON(t, []byte(in), out)
}

func TestPromptDecodeIsStrict(t *testing.T) {
	for _, in := range []string{
		`{"title":"no name"}`,
		`{"Name":"x"}`,
		`{"name":"x","name":"y"}`,
		`{"name":"x","arguments":[{"description":"no name"}]}`,
		`{"name":"x","arguments":[{"name":"a","Required":true}]}`,
		`{"name":"x","arguments":[{"name":"a","required":"yes"}]}`,
	} {
		var p mcp.Prompt
		if err := json.Unmarshal([]byte(in), &p); err == nil {
			t.Errorf("%s decoded as %+v", in, p)
		}
	}
}

func TestGetPromptResultRoundTrip(t *testing.T) {
	in := `{"description":"d","messages":[` +
		`{"role":"user","content":{"type":"text","text":"hi"}},` +
		`{"role":"assistant","content":{"type":"image","data":"UE5H","mimeType":"image/png"}},` +
		`{"role":"user","content":{"type":"resource","resource":{"uri":"file:///a","mimeType":"text/plain","text":"A"}}},` +
		`{"role":"user","content":{"type":"resource_link","uri":"file:///b","name":"b"}},` +
		`{"role":"user","content":{"type":"audio","data":"V0FW","mimeType":"audio/wav"}}` +
		`],"_meta":{"k":1}}`
	var r mcp.GetPromptResult
	if err := json.Unmarshal([]byte(in), &r); err != nil {
		t.Fatal(err)
	}
	if len(r.Messages) != 5 || r.Messages[1].Role != mcp.RoleAssistant {
		t.Fatalf("decoded %+v", r)
	}
	if _, ok := r.Messages[2].Content.(*mcp.EmbeddedResource); !ok {
		t.Errorf("message 2 content is %T", r.Messages[2].Content)
	}
	if img, ok := r.Messages[1].Content.(*mcp.ImageContent); !ok || string(img.Data) != "PNG" {
		t.Errorf("message 1 content is %#v", r.Messages[1].Content)
	}
	out, err := json.Marshal(&r)
	if err != nil {
		t.Fatal(err)
	}
	assertSameJSON(t, []byte(in), out)
}

func TestGetPromptResultEmptyMessages(t *testing.T) {
	out, err := json.Marshal(&mcp.GetPromptResult{})
	if err != nil || string(out) != `{"messages":[]}` {
		t.Errorf("got %s, %v", out, err)
	}
	var r mcp.GetPromptResult
	if err := json.Unmarshal([]byte(`{"description":"x"}`), &r); err == nil || !strings.Contains(err.Error(), `"messages"`) {
		t.Errorf("missing messages: %v", err)
	}
}

func TestGetPromptResultErrorsNameMessageAndField(t *testing.T) {
	cases := []struct {
		in    string
		index int
		field string
		msg   string
	}{
		{`[{"role":"user","content":{"type":"text","text":"ok"}},{"role":"system","content":{"type":"text","text":"x"}}]`, 1, "role", "neither"},
		{`[{"content":{"type":"text","text":"x"}}]`, 0, "role", "missing"},
		{`[{"role":"user"}]`, 0, "content", "missing"},
		{`[{"role":"user","content":null}]`, 0, "content", "missing"},
		{`[{"role":"user","content":{"type":"text"}}]`, 0, "content.text", "missing"},
		{`[{"role":"user","content":{"type":"video"}}]`, 0, "content.type", "unknown content type"},
		{`[{"role":"user","content":{"type":"resource","resource":{"uri":"u"}}}]`, 0, "content.resource", ""},
		{`[{"role":"user","Role":"user","content":{"type":"text","text":"x"}}]`, 0, "Role", ""},
	}
	for _, c := range cases {
		var r mcp.GetPromptResult
		err := json.Unmarshal([]byte(`{"messages":`+c.in+`}`), &r)
		var pe *mcp.PromptMessageError
		if !errors.As(err, &pe) {
			t.Errorf("%s: error %v is not a PromptMessageError", c.in, err)
			continue
		}
		if pe.Index != c.index || (c.field != "" && !strings.HasPrefix(pe.Field, c.field)) || !strings.Contains(pe.Error(), c.msg) {
			t.Errorf("%s: got index %d field %q: %v", c.in, pe.Index, pe.Field, pe)
		}
	}
	var r mcp.GetPromptResult
	dup := `{"messages":[{"role":"user","role":"user","content":{"type":"text","text":"x"}}]}`
	if err := json.Unmarshal([]byte(dup), &r); err == nil || !strings.Contains(err.Error(), "/messages/0/role") {
		t.Errorf("duplicate role: %v", err)
	}
	err := json.Unmarshal([]byte(`{"messages":[{"role":"user","content":{"type":"text"}}]}`), &r)
	var ce *mcp.ContentError
	if !errors.As(err, &ce) || ce.Field != "text" {
		t.Errorf("content error not unwrapped: %v", err)
	}
}

func TestPromptMessageEncodeRefusesBadMessages(t *testing.T) {
	if _, err := json.Marshal(mcp.PromptMessage{Role: mcp.RoleUser}); err == nil {
		t.Error("a message without content encoded")
	}
	if _, err := json.Marshal(mcp.PromptMessage{Role: "system", Content: &mcp.TextContent{Text: "x"}}); err == nil {
		t.Error("a message with role system encoded")
	}
}

func TestListPromptsResult(t *testing.T) {
	out, err := json.Marshal(&mcp.ListPromptsResult{})
	if err != nil || string(out) != `{"prompts":[]}` {
		t.Errorf("empty: %s %v", out, err)
	}
	in := `{"prompts":[{"name":"a"},{"name":"b","arguments":[{"name":"x","required":true}]}],"nextCursor":"c","ttlMs":5,"cacheScope":"public","resultType":"complete"}`
	var r mcp.ListPromptsResult
	if err := json.Unmarshal([]byte(in), &r); err != nil {
		t.Fatal(err)
	}
	if len(r.Prompts) != 2 || r.Prompts[1].Arguments[0].Name != "x" || r.NextCursor != "c" || r.TTLMs == nil || *r.TTLMs != 5 || r.CacheScope != mcp.CachePublic {
		t.Fatalf("decoded %+v", r)
	}
	out, _ = json.Marshal(&r)
	assertSameJSON(t, []byte(in), out)
	for _, bad := range []string{`{}`, `{"prompts":[{"title":"x"}]}`, `{"prompts":[],"NextCursor":"x"}`, `{"prompts":[],"prompts":[]}`} {
		if err := json.Unmarshal([]byte(bad), &r); err == nil {
			t.Errorf("%s decoded", bad)
		}
	}
}
