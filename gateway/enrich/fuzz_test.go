package enrich

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/go-json-experiment/json/jsontext"
)

// FuzzApply feeds Apply arbitrary results and arguments under rules that
// use every feature. It checks that Apply never panics, that the input is
// returned untouched whenever it is reported unusable, and otherwise that
// the output is valid JSON keeping the upstream's blocks and members.
func FuzzApply(f *testing.F) {
	seeds := []struct{ result, args string }{
		{`{"content":[{"type":"text","text":"hi"}]}`, `{"repo":"acme/api"}`},
		{`{"content":[],"structuredContent":{"a":1,"owner":null},"isError":false}`, `{}`},
		{`{"resultType":"complete","content":[{"type":"resource_link","uri":"file:///a","name":"a"}],"_meta":{"k":[1,2,{}]}}`, `null`},
		{`{"content":[{"type":"text","text":"a"}],"isError":true}`, ``},
		{`{"resultType":"task","task":{}}`, `{}`},
		{`{"content":[{"type":"text","text":"{{.caller.identity}}"}]}`, `{"q":"{{template \"x\"}}"}`},
		// Hostile shapes.
		{`{"content":[],"structuredContent":` + strings.Repeat(`[`, 20000) + strings.Repeat(`]`, 20000) + `}`, `{}`},
		{`{"content":[],"structuredContent":` + strings.Repeat(`{"a":`, 500) + `1` + strings.Repeat(`}`, 500) + `}`, strings.Repeat(`[`, 100) + strings.Repeat(`]`, 100)},
		{`{"content":[],"content":[]}`, `{}`},
		{`{"content":[{"type":"text","text":"a","text":"b"}]}`, `{"a":1,"a":2}`},
		{`{"content":[],"structuredContent":{"n":1e999999,"m":-0.0000000000000000000000001,"big":123456789012345678901234567890}}`, `{"n":1e400}`},
		{"{\"content\":[{\"type\":\"text\",\"text\":\"\xff\xfe\"}]}", "{\"s\":\"\xc3\"}"},
		{`{"content":[{"type":"text","text":"\ud800"}]}`, `{}`},
		{`[]`, `{}`},
		{`"content"`, `{}`},
		{``, ``},
		{`{"Content":[]}`, `{}`},
		{`{"content":[1,2]}`, `{}`},
		{`{"content":[{"type":1}]}`, `{}`},
		{`{"content":[{"type":"text"}]}`, `{}`},
		{`{"content":[],"isError":null}`, `{}`},
		{` {"content" : [ ] , "structuredContent" : { } } `, `{"env":"prod"}`},
		{`{"content":[],"structuredContent":{"k":1,"\u006b2":2}}`, `{}`},
	}
	for _, s := range seeds {
		f.Add(s.result, s.args)
	}
	e, err := New([]Rule{
		{Name: "text", Tools: []string{"*"}, When: `text.size() >= 0 && (result == null || type(result) != string || true)`,
			Text:  []string{"{{.text}} {{.args}} {{.result}}", "{{json .result}}"},
			Links: []Link{{URI: "https://docs.example/{{pathescape .tool}}?q={{queryescape .args.q}}", Title: "{{trunc 10 .text}}"}}},
		{Name: "structured", Tools: []string{"*"}, Structured: map[string]string{"k": "{{json .args}}", "t": "{{.text}}", "owner": `{"x":{{json .result.owner}}}`}},
		{Name: "overwrite", Tools: []string{"*"}, Overwrite: true, Structured: map[string]string{"k2": "{{default 0 .args.n}}"}},
		{Name: "cel", Tools: []string{"*"}, When: `has(args.env) && args.env == "prod"`, Text: []string{"prod"}},
	}, WithHooks(func(ctx context.Context, call *Call, res *Result) error {
		_ = res.Merge("hook", res.StructuredContent(), false)
		return res.AppendText(res.Text())
	}))
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, result, args string) {
		in := []byte(result)
		keep := bytes.Clone(in)
		out, errs := e.Apply(context.Background(), &Call{Tool: "t", Arguments: json.RawMessage(args)}, in)
		if !bytes.Equal(in, keep) {
			t.Fatalf("Apply changed its input")
		}
		for _, err := range errs {
			if errors.Is(err, ErrUnusable) {
				if len(errs) != 1 || !bytes.Equal(out, in) {
					t.Fatalf("unusable input, but out %q errs %v", out, errs)
				}
				return
			}
		}
		if !jsontext.Value(in).IsValid() {
			t.Fatalf("invalid input %q accepted", in)
		}
		if !jsontext.Value(out).IsValid() {
			t.Fatalf("out is not valid JSON: %q (in %q)", out, in)
		}
		if bytes.Equal(out, in) {
			return
		}
		// The upstream's members and blocks are all there, as they were.
		var inTop, outTop map[string]jsontext.Value
		if err := json.Unmarshal(in, &inTop); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(out, &outTop); err != nil {
			t.Fatal(err)
		}
		for k, v := range inTop {
			switch k {
			case "content":
				if !bytes.HasPrefix(outTop[k], v[:len(v)-1]) {
					t.Fatalf("content %s lost its bytes in %s", v, out)
				}
			case "structuredContent":
				var inSC, outSC map[string]jsontext.Value
				if json.Unmarshal(v, &inSC) != nil {
					if !bytes.Equal(outTop[k], v) {
						t.Fatalf("structuredContent %s (not an object) changed to %s", v, outTop[k])
					}
					continue
				}
				if err := json.Unmarshal(outTop[k], &outSC); err != nil {
					t.Fatal(err)
				}
				for name, mv := range inSC {
					if name != "k2" && !bytes.Equal(outSC[name], mv) { // only k2 is overwritten
						t.Fatalf("structuredContent member %s changed: %s to %s", name, mv, outSC[name])
					}
				}
			default:
				if !bytes.Equal(outTop[k], v) {
					t.Fatalf("member %s changed: %s to %s", k, v, outTop[k])
				}
			}
		}
		if len(outTop) != len(inTop) {
			t.Fatalf("members added or lost: %s", out)
		}
	})
}
