package enrich

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/go-json-experiment/json/jsontext"
)

func mustNew(t testing.TB, rules []Rule, opts ...Option) *Enricher {
	t.Helper()
	e, err := New(rules, opts...)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return e
}

// textRule appends one text block to every tool's result.
func textRule(name, text string) Rule {
	return Rule{Name: name, Tools: []string{"*"}, Text: []string{text}}
}

func TestApply(t *testing.T) {
	call := &Call{Tool: "github__get_issue", Upstream: "github", Arguments: json.RawMessage(`{"repo":"acme/api","n":7,"env":"prod"}`),
		Identity: "alice", Persona: "dev", Claims: map[string]any{"team": "core", "groups": []any{"a", "b"}, "none": nil}}
	const unusable = "<unusable>" // wantErr: an ErrUnusable
	tests := []struct {
		name    string
		rules   []Rule
		opts    []Option
		call    *Call
		in      string
		want    string // "" : the input, byte for byte
		wantErr []string
	}{
		{
			name:  "no rule matches",
			rules: []Rule{{Name: "jira", Tools: []string{"jira__*"}, Text: []string{"x"}}},
			in:    `{"content":[{"type":"text","text":"hi"}]}`,
		},
		{
			name:  "2025-shaped result",
			rules: []Rule{{Name: "owner", Tools: []string{"github__*"}, Text: []string{"repo {{.args.repo}} is owned by {{.caller.claims.team}}"}}},
			in:    `{"content":[{"type":"text","text":"hi"}],"isError":false}`,
			want:  `{"content":[{"type":"text","text":"hi"},{"type":"text","text":"repo acme/api is owned by core"}],"isError":false}`,
		},
		{
			name:  "2026-shaped result keeps every byte",
			rules: []Rule{textRule("t", "+")},
			in:    "{ \"resultType\" : \"complete\",\n  \"content\" : [ {\"text\":\"a\\u00e9\", \"type\":\"text\", \"annotations\":{\"priority\":0.50}} ,{\"type\":\"image\",\"data\":\"AA==\",\"mimeType\":\"image/png\"}\n ] ,\"_meta\":{\"x\":1.0E+2}, \"ttlMs\": 5 }\n",
			want:  "{ \"resultType\" : \"complete\",\n  \"content\" : [ {\"text\":\"a\\u00e9\", \"type\":\"text\", \"annotations\":{\"priority\":0.50}} ,{\"type\":\"image\",\"data\":\"AA==\",\"mimeType\":\"image/png\"}\n ,{\"type\":\"text\",\"text\":\"+\"}] ,\"_meta\":{\"x\":1.0E+2}, \"ttlMs\": 5 }\n",
		},
		{
			name:  "empty content array",
			rules: []Rule{textRule("t", "x")},
			in:    `{"content":[ ]}`,
			want:  `{"content":[ {"type":"text","text":"x"}]}`,
		},
		{name: "isError true untouched", rules: []Rule{textRule("t", "x")}, in: `{"content":[{"type":"text","text":"boom"}],"isError":true}`},
		{name: "task result untouched", rules: []Rule{textRule("t", "x")}, in: `{"resultType":"task","task":{"taskId":"1"}}`},
		{name: "input_required untouched", rules: []Rule{textRule("t", "x")}, in: `{"resultType":"input_required","inputRequests":{}}`},
		{name: "isError not boolean", rules: []Rule{textRule("t", "x")}, in: `{"content":[],"isError":"yes"}`, wantErr: []string{unusable, "isError"}},
		{name: "not an object", rules: []Rule{textRule("t", "x")}, in: `[{"type":"text","text":"a"}]`, wantErr: []string{unusable}},
		{name: "invalid JSON", rules: []Rule{textRule("t", "x")}, in: `{"content":[}`, wantErr: []string{unusable}},
		{name: "trailing data", rules: []Rule{textRule("t", "x")}, in: `{"content":[]} {}`, wantErr: []string{unusable}},
		{name: "no content", rules: []Rule{textRule("t", "x")}, in: `{"structuredContent":{}}`, wantErr: []string{unusable, "no content"}},
		{name: "content not an array", rules: []Rule{textRule("t", "x")}, in: `{"content":{}}`, wantErr: []string{unusable}},
		{name: "duplicate top-level member", rules: []Rule{textRule("t", "x")}, in: `{"content":[],"content":[]}`, wantErr: []string{unusable, "duplicate"}},
		{name: "duplicate nested member", rules: []Rule{textRule("t", "x")}, in: `{"content":[],"_meta":{"a":1,"a":2}}`, wantErr: []string{unusable, "duplicate"}},
		{name: "case variant member", rules: []Rule{textRule("t", "x")}, in: `{"content":[],"IsError":true}`, wantErr: []string{unusable, "only by case"}},
		{name: "block without type", rules: []Rule{textRule("t", "x")}, in: `{"content":[{"text":"a"}]}`, wantErr: []string{unusable, "content[0]"}},
		{name: "block case variant", rules: []Rule{textRule("t", "x")}, in: `{"content":[{"type":"text","Text":"a","text":"b"}]}`, wantErr: []string{unusable, "content[0]"}},
		{name: "invalid UTF-8", rules: []Rule{textRule("t", "x")}, in: "{\"content\":[{\"type\":\"text\",\"text\":\"\xff\"}]}", wantErr: []string{unusable}},
		{
			name:  "upstream text is data, not a template",
			rules: []Rule{textRule("echo", "saw: {{.text}}")},
			in:    `{"content":[{"type":"text","text":"{{.caller.identity}}"},{"type":"text","text":"{{template \"x\"}}"}]}`,
			want:  `{"content":[{"type":"text","text":"{{.caller.identity}}"},{"type":"text","text":"{{template \"x\"}}"},{"type":"text","text":"saw: {{.caller.identity}}\n{{template \"x\"}}"}]}`,
		},
		{
			name:  "argument is data, not a template",
			rules: []Rule{textRule("echo", "q={{.args.q}}")},
			call:  &Call{Tool: "t", Identity: "alice", Arguments: json.RawMessage(`{"q":"{{.caller.identity}}"}`)},
			in:    `{"content":[]}`,
			want:  `{"content":[{"type":"text","text":"q={{.caller.identity}}"}]}`,
		},
		{
			name:  "missing keys and nulls render empty",
			rules: []Rule{textRule("m", "[{{.result.owner.team}}|{{.args.nope.deeper}}|{{.caller.claims.none}}|{{.result.owner}}|{{default \"n/a\" .result.owner}}]")},
			in:    `{"content":[],"structuredContent":{"owner":null}}`,
			want:  `{"content":[{"type":"text","text":"[||||n/a]"}],"structuredContent":{"owner":null}}`,
		},
		{
			name:  "missing result renders empty",
			rules: []Rule{textRule("m", "[{{.result.owner.team}}{{.result}}]")},
			in:    `{"content":[]}`,
			want:  `{"content":[{"type":"text","text":"[]"}]}`,
		},
		{
			name:  "blank output adds nothing",
			rules: []Rule{textRule("m", "{{if .args.nope}}x{{end}}  \n")},
			in:    `{"content":[]}`,
		},
		{
			name:  "functions",
			rules: []Rule{textRule("f", `{{json .args}} {{upper .args.env}} {{trunc 4 .args.repo}} {{queryescape "a b&"}} {{pathescape "a/b"}} {{join "," .caller.claims.groups}} {{contains "api" .args.repo}} {{.args.n}}`)},
			in:    `{"content":[]}`,
			want:  `{"content":[{"type":"text","text":"{\"env\":\"prod\",\"n\":7,\"repo\":\"acme/api\"} PROD acme a+b%26 a%2Fb a,b true 7"}]}`,
		},
		{
			name:  "CEL true",
			rules: []Rule{{Name: "prod", Tools: []string{"*"}, When: `args.env == "prod" && args.n > 5 && caller.identity == "alice" && tool.startsWith("github__")`, Text: []string{"prod"}}},
			in:    `{"content":[]}`,
			want:  `{"content":[{"type":"text","text":"prod"}]}`,
		},
		{
			name:  "CEL false",
			rules: []Rule{{Name: "dev", Tools: []string{"*"}, When: `args.env == "dev"`, Text: []string{"dev"}}},
			in:    `{"content":[]}`,
		},
		{
			name:  "CEL reads result and text",
			rules: []Rule{{Name: "big", Tools: []string{"*"}, When: `result.count > 2.5 && result.huge > 1.0 && text.contains("needle")`, Text: []string{"big"}}},
			in:    `{"content":[{"type":"text","text":"hay needle"}],"structuredContent":{"count":3,"huge":123456789012345678901234567890}}`,
			want:  `{"content":[{"type":"text","text":"hay needle"},{"type":"text","text":"big"}],"structuredContent":{"count":3,"huge":123456789012345678901234567890}}`,
		},
		{
			name:  "CEL null result",
			rules: []Rule{{Name: "none", Tools: []string{"*"}, When: `result == null`, Text: []string{"none"}}},
			in:    `{"content":[]}`,
			want:  `{"content":[{"type":"text","text":"none"}]}`,
		},
		{
			name:    "CEL runtime error skips the rule",
			rules:   []Rule{{Name: "bad", Tools: []string{"*"}, When: `args.missing == 1`, Text: []string{"x"}}, textRule("good", "ok")},
			in:      `{"content":[]}`,
			want:    `{"content":[{"type":"text","text":"ok"}]}`,
			wantErr: []string{`rule 0 "bad": When: no such key`},
		},
		{
			name:    "CEL non-bool at run time",
			rules:   []Rule{{Name: "dyn", Tools: []string{"*"}, When: `args.n`, Text: []string{"x"}}},
			in:      `{"content":[]}`,
			wantErr: []string{`rule 0 "dyn": When: expression gave int, want bool`},
		},
		{
			name:    "CEL cost limit",
			rules:   []Rule{{Name: "costly", Tools: []string{"*"}, When: `[1,2,3,4,5,6,7,8,9,10].all(a, [1,2,3,4,5,6,7,8,9,10].all(b, [1,2,3,4,5,6,7,8,9,10].all(c, a+b+c > 0)))`, Text: []string{"x"}}},
			opts:    []Option{WithLimits(Limits{MaxCELCost: 500})},
			in:      `{"content":[]}`,
			wantErr: []string{`rule 0 "costly": When:`, "cost limit"},
		},
		{
			name: "globs",
			rules: []Rule{
				{Name: "g1", Tools: []string{"jira__*", "github__get_?ssue"}, Text: []string{"g1"}},
				{Name: "g2", Tools: []string{"github__get_"}, Text: []string{"g2"}},
				{Name: "g3", Tools: []string{"*issue"}, Text: []string{"g3"}},
			},
			in:   `{"content":[]}`,
			want: `{"content":[{"type":"text","text":"g1"},{"type":"text","text":"g3"}]}`,
		},
		{
			name:  "structured merge into an object",
			rules: []Rule{{Name: "s", Tools: []string{"*"}, Structured: map[string]string{"owner": `{"team": {{json .caller.claims.team}}}`, "repo": "{{.args.repo}}", "n": "{{.args.n}}", "id": "  007 ", "empty": "{{.args.nope}}"}}},
			in:    `{"content":[],"structuredContent":{ "id":1 } ,"_meta":{}}`,
			want:  `{"content":[],"structuredContent":{ "id":1 ,"n":7,"owner":{"team":"core"},"repo":"acme/api"} ,"_meta":{}}`,
		},
		{
			name:  "structured merge into an empty object",
			rules: []Rule{{Name: "s", Tools: []string{"*"}, Structured: map[string]string{"k": "true"}}},
			in:    `{"content":[],"structuredContent":{}}`,
			want:  `{"content":[],"structuredContent":{"k":true}}`,
		},
		{
			name:  "structured overwrite",
			rules: []Rule{{Name: "s", Tools: []string{"*"}, Overwrite: true, Structured: map[string]string{"id": `"x"`, "new": "1"}}},
			in:    `{"content":[],"structuredContent":{"id":1,"\u0069d2":2}}`,
			want:  `{"content":[],"structuredContent":{"id":"x","\u0069d2":2,"new":1}}`,
		},
		{
			name: "structured: first rule wins without Overwrite",
			rules: []Rule{
				{Name: "a", Tools: []string{"*"}, Structured: map[string]string{"k": "1"}},
				{Name: "b", Tools: []string{"*"}, Structured: map[string]string{"k": "2"}},
				{Name: "c", Tools: []string{"*"}, Structured: map[string]string{"j": "3"}, Overwrite: true},
				{Name: "d", Tools: []string{"*"}, Structured: map[string]string{"j": "4"}, Overwrite: true},
			},
			in:   `{"content":[],"structuredContent":{}}`,
			want: `{"content":[],"structuredContent":{"k":1,"j":4}}`,
		},
		{
			name:  "structured absent: text only",
			rules: []Rule{{Name: "s", Tools: []string{"*"}, Text: []string{"t"}, Structured: map[string]string{"k": "1"}}},
			in:    `{"content":[]}`,
			want:  `{"content":[{"type":"text","text":"t"}]}`,
		},
		{
			name:  "structured not an object",
			rules: []Rule{{Name: "s", Tools: []string{"*"}, Structured: map[string]string{"k": "1"}}},
			in:    `{"content":[],"structuredContent":[1,2]}`,
		},
		{
			name:  "links",
			rules: []Rule{{Name: "l", Tools: []string{"*"}, Links: []Link{{URI: "https://docs.example/{{pathescape .tool}}", Name: "docs", Title: "Docs for {{.tool}}", MimeType: "text/html"}, {URI: "{{.args.nope}}"}}}},
			in:    `{"content":[]}`,
			want:  `{"content":[{"type":"resource_link","uri":"https://docs.example/github__get_issue","name":"docs","title":"Docs for github__get_issue","mimeType":"text/html"}]}`,
		},
		{
			name: "failing rule is all or nothing",
			rules: []Rule{
				{Name: "half", Tools: []string{"*"}, Text: []string{"first"}, Links: []Link{{URI: "relative/{{.tool}}"}}, Structured: map[string]string{"k": "1"}},
				textRule("whole", "second"),
			},
			in:      `{"content":[],"structuredContent":{}}`,
			want:    `{"content":[{"type":"text","text":"second"}],"structuredContent":{}}`,
			wantErr: []string{`rule 0 "half": Links[0]`, "not absolute"},
		},
		{
			name:    "template error skips the rule",
			rules:   []Rule{textRule("idx", `{{index .caller.claims.groups 9}}`)},
			in:      `{"content":[]}`,
			wantErr: []string{`rule 0 "idx": Text[0]`, "out of range"},
		},
		{
			name:    "output over the limit",
			rules:   []Rule{textRule("big", strings.Repeat("x", 200)), textRule("small", "ok")},
			opts:    []Option{WithLimits(Limits{MaxOutputBytes: 100})},
			in:      `{"content":[]}`,
			want:    `{"content":[{"type":"text","text":"ok"}]}`,
			wantErr: []string{`rule 0 "big": Text[0]`, "over the limit"},
		},
		{
			name:    "unreadable arguments",
			rules:   []Rule{textRule("a", "[{{.args.x}}]")},
			call:    &Call{Tool: "t", Arguments: json.RawMessage(`[1]`)},
			in:      `{"content":[]}`,
			want:    `{"content":[{"type":"text","text":"[]"}]}`,
			wantErr: []string{"arguments"},
		},
		{
			name:  "invalid UTF-8 from the caller is replaced",
			rules: []Rule{textRule("id", "{{.caller.identity}}")},
			call:  &Call{Tool: "t", Identity: "a\xffb"},
			in:    `{"content":[]}`,
			want:  `{"content":[{"type":"text","text":"a` + "\uFFFD" + `b"}]}`,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := mustNew(t, tc.rules, tc.opts...)
			c := tc.call
			if c == nil {
				c = call
			}
			in := []byte(tc.in)
			out, errs := e.Apply(context.Background(), c, in)
			want := tc.want
			if want == "" {
				want = tc.in
				if len(out) > 0 && &out[0] != &in[0] {
					t.Errorf("out is a copy; want the input itself")
				}
			}
			if string(out) != want {
				t.Errorf("out:\n got %s\nwant %s", out, want)
			}
			if !jsontext.Value(out).IsValid() && jsontext.Value(in).IsValid() {
				t.Errorf("out is not valid JSON: %s", out)
			}
			checkErrs(t, errs, tc.wantErr)
		})
	}
}

// checkErrs wants one error holding all of want's substrings, or none.
func checkErrs(t *testing.T, errs []error, want []string) {
	t.Helper()
	if len(want) == 0 {
		if len(errs) > 0 {
			t.Errorf("errs = %v, want none", errs)
		}
		return
	}
	if len(errs) != 1 {
		t.Fatalf("errs = %v, want one with %q", errs, want)
	}
	for _, w := range want {
		if w == "<unusable>" {
			if !errors.Is(errs[0], ErrUnusable) {
				t.Errorf("err %v is not ErrUnusable", errs[0])
			}
			continue
		}
		if !strings.Contains(errs[0].Error(), w) {
			t.Errorf("err %q does not contain %q", errs[0], w)
		}
	}
	var re *RuleError
	if !errors.Is(errs[0], ErrUnusable) && !strings.Contains(errs[0].Error(), "arguments") && !errors.As(errs[0], &re) {
		t.Errorf("err %v is not a *RuleError", errs[0])
	}
}

func TestNewErrors(t *testing.T) {
	tests := []struct {
		rule Rule
		want string
	}{
		{Rule{Name: "r", Text: []string{"x"}}, `rule 1 "r": Tools: no tool globs`},
		{Rule{Name: "r", Tools: []string{"a", "b[1]"}, Text: []string{"x"}}, `rule 1 "r": Tools[1]: pattern "b[1]"`},
		{Rule{Name: "r", Tools: []string{"*"}, When: "args.", Text: []string{"x"}}, `rule 1 "r": When: ERROR`},
		{Rule{Name: "r", Tools: []string{"*"}, When: "1 + 1", Text: []string{"x"}}, `rule 1 "r": When: expression has type int, want bool`},
		{Rule{Name: "r", Tools: []string{"*"}, When: "nope == 1", Text: []string{"x"}}, `undeclared reference to 'nope'`},
		{Rule{Name: "r", Tools: []string{"*"}}, `rule 1 "r": adds nothing`},
		{Rule{Name: "r", Tools: []string{"*"}, Text: []string{"ok", "{{.x"}}, `rule 1 "r": Text[1]:`},
		{Rule{Name: "r", Tools: []string{"*"}, Text: []string{"{{nofunc .x}}"}}, `function "nofunc" not defined`},
		{Rule{Name: "r", Tools: []string{"*"}, Links: []Link{{Name: "n"}}}, `rule 1 "r": Links[0].URI: empty`},
		{Rule{Name: "r", Tools: []string{"*"}, Links: []Link{{URI: "u", Title: "{{end}}"}}}, `rule 1 "r": Links[0].Title:`},
		{Rule{Name: "r", Tools: []string{"*"}, Structured: map[string]string{"": "1"}}, `rule 1 "r": Structured[""]: empty key`},
		{Rule{Name: "r", Tools: []string{"*"}, Structured: map[string]string{"k": "{{if}}"}}, `rule 1 "r": Structured["k"]:`},
	}
	for _, tc := range tests {
		_, err := New([]Rule{textRule("fine", "x"), tc.rule})
		var re *RuleError
		if !errors.As(err, &re) || re.Index != 1 || re.Name != "r" {
			t.Errorf("%+v: err = %v, want a *RuleError for rule 1", tc.rule, err)
			continue
		}
		if !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: err = %q, want %q", tc.rule, err, tc.want)
		}
	}
}

func TestCELContext(t *testing.T) {
	const slow = `[0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23,24,25,26,27,28,29,30,31,32,33,34,35,36,37,38,39,40,41,42,43,44,45,46,47,48,49].all(a, ` +
		`[0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23,24,25,26,27,28,29,30,31,32,33,34,35,36,37,38,39,40,41,42,43,44,45,46,47,48,49].all(b, ` +
		`[0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23,24,25,26,27,28,29,30,31,32,33,34,35,36,37,38,39,40,41,42,43,44,45,46,47,48,49].all(c, ` +
		`[0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23,24,25,26,27,28,29,30,31,32,33,34,35,36,37,38,39,40,41,42,43,44,45,46,47,48,49].all(d, a+b+c+d >= 0))))`
	e := mustNew(t, []Rule{{Name: "slow", Tools: []string{"*"}, When: slow, Text: []string{"x"}}}, WithLimits(Limits{MaxCELCost: 1 << 62}))
	in := []byte(`{"content":[]}`)

	// A hostile expression with no cost limit to speak of stops at the
	// request's deadline.
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	start := time.Now()
	out, errs := e.Apply(ctx, &Call{Tool: "t"}, in)
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("Apply took %v after a 50ms deadline", d)
	}
	if string(out) != string(in) || len(errs) != 1 || !errors.Is(errs[0], context.DeadlineExceeded) {
		t.Errorf("out %s, errs %v; want the input and a deadline error", out, errs)
	}

	// The default cost limit stops it too.
	e = mustNew(t, []Rule{{Name: "slow", Tools: []string{"*"}, When: slow, Text: []string{"x"}}})
	start = time.Now()
	_, errs = e.Apply(context.Background(), &Call{Tool: "t"}, in)
	if len(errs) != 1 || !strings.Contains(errs[0].Error(), "cost limit") {
		t.Errorf("errs %v, want a cost limit error", errs)
	}
	t.Logf("default cost limit reached in %v", time.Since(start))

	// The default limit lets a rule scan a large text.
	e = mustNew(t, []Rule{{Name: "scan", Tools: []string{"*"}, When: `text.contains("needle")`, Text: []string{"found"}}})
	big := []byte(`{"content":[{"type":"text","text":"` + strings.Repeat("hay ", 200_000) + `needle"}]}`)
	if out, errs := e.Apply(context.Background(), &Call{Tool: "t"}, big); len(errs) != 0 || !strings.HasSuffix(string(out), `{"type":"text","text":"found"}]}`) {
		t.Errorf("scan of 800 KB: errs %v", errs)
	}

	// A canceled request applies nothing.
	ctx, cancel = context.WithCancel(context.Background())
	cancel()
	e = mustNew(t, []Rule{textRule("a", "x")})
	out, errs = e.Apply(ctx, &Call{Tool: "t"}, in)
	if string(out) != string(in) || len(errs) != 1 || !errors.Is(errs[0], context.Canceled) {
		t.Errorf("out %s, errs %v; want the input and a canceled error", out, errs)
	}
}

func TestHooks(t *testing.T) {
	var seen struct {
		text, sc string
		blocks   int
	}
	hooks := []Hook{
		func(ctx context.Context, call *Call, res *Result) error {
			seen.text, seen.sc, seen.blocks = res.Text(), string(res.StructuredContent()), len(res.Content())
			if err := res.AppendText("from " + call.Tool); err != nil {
				return err
			}
			if err := res.AppendLink(Link{URI: "https://x.example/a", Title: "A"}); err != nil {
				return err
			}
			if err := res.Merge("owner", json.RawMessage(` { "team" : "core" } `), false); err != nil {
				return err
			}
			if err := res.Merge("owner", json.RawMessage(`1`), false); !errors.Is(err, ErrKeyExists) {
				t.Errorf("second Merge: %v, want ErrKeyExists", err)
			}
			if err := res.Merge("id", json.RawMessage(`1`), false); !errors.Is(err, ErrKeyExists) {
				t.Errorf("Merge over the upstream's key: %v, want ErrKeyExists", err)
			}
			if err := res.Append(json.RawMessage(`{"text":"x"}`)); err == nil {
				t.Errorf("Append of a block without type: no error")
			}
			return res.Append(json.RawMessage(`{"type":"text", "text":"raw"}`))
		},
		nil, // ignored
		func(ctx context.Context, call *Call, res *Result) error {
			_ = res.AppendText("discarded")
			return errors.New("hook failed")
		},
		func(ctx context.Context, call *Call, res *Result) error {
			_ = res.AppendText("discarded too")
			panic("hook panicked")
		},
		func(ctx context.Context, call *Call, res *Result) error {
			if err := res.AppendText(strings.Repeat("x", 300)); !errors.Is(err, ErrTooLarge) {
				t.Errorf("AppendText over the limit: %v, want ErrTooLarge", err)
			}
			return nil
		},
	}
	e := mustNew(t, []Rule{textRule("rule", "r")}, WithHooks(hooks...), WithLimits(Limits{MaxOutputBytes: 250}), nil)
	in := `{"content":[{"type":"text","text":"a"},{"type":"text","text":"b"}],"structuredContent":{"id":1}}`
	out, errs := e.Apply(context.Background(), &Call{Tool: "t"}, []byte(in))
	want := `{"content":[{"type":"text","text":"a"},{"type":"text","text":"b"},{"type":"text","text":"r"},{"type":"text","text":"from t"},{"type":"resource_link","uri":"https://x.example/a","name":"https://x.example/a","title":"A"},{"type":"text","text":"raw"}],"structuredContent":{"id":1,"owner":{"team":"core"}}}`
	if string(out) != want {
		t.Errorf("out:\n got %s\nwant %s", out, want)
	}
	if seen.text != "a\nb" || seen.sc != `{"id":1}` || seen.blocks != 2 {
		t.Errorf("hook saw %+v", seen)
	}
	if len(errs) != 2 || !strings.Contains(errs[0].Error(), "enrich: hook 1: hook failed") || !strings.Contains(errs[1].Error(), "enrich: hook 2: panic: hook panicked") {
		t.Errorf("errs = %v", errs)
	}

	// Hooks run whatever the tool, and not on error results.
	e = mustNew(t, nil, WithHooks(func(ctx context.Context, call *Call, res *Result) error {
		if err := res.Merge("k", json.RawMessage(`1`), false); !errors.Is(err, ErrNotObject) {
			t.Errorf("Merge without structuredContent: %v, want ErrNotObject", err)
		}
		return res.AppendText("h")
	}))
	if out, _ := e.Apply(context.Background(), &Call{Tool: "any"}, []byte(`{"content":[]}`)); string(out) != `{"content":[{"type":"text","text":"h"}]}` {
		t.Errorf("out = %s", out)
	}
	if out, _ := e.Apply(context.Background(), &Call{Tool: "any"}, []byte(`{"content":[],"isError":true}`)); string(out) != `{"content":[],"isError":true}` {
		t.Errorf("error result: out = %s", out)
	}
}

// TestConcurrent runs Apply from many goroutines (for -race).
func TestConcurrent(t *testing.T) {
	e := mustNew(t, []Rule{{Name: "c", Tools: []string{"*"}, When: `args.n > 0`, Text: []string{"{{.args.n}}"}, Structured: map[string]string{"k": "{{.args.n}}"}}})
	done := make(chan struct{})
	for g := 0; g < 8; g++ {
		go func() {
			defer func() { done <- struct{}{} }()
			for i := 0; i < 50; i++ {
				out, errs := e.Apply(context.Background(), &Call{Tool: "t", Arguments: json.RawMessage(`{"n":3}`)}, []byte(`{"content":[],"structuredContent":{}}`))
				if string(out) != `{"content":[{"type":"text","text":"3"}],"structuredContent":{"k":3}}` || errs != nil {
					t.Errorf("out %s errs %v", out, errs)
					return
				}
			}
		}()
	}
	for g := 0; g < 8; g++ {
		<-done
	}
}

func TestOversize(t *testing.T) {
	e := mustNew(t, []Rule{textRule("t", "x")})
	in := []byte(`{"content":[{"type":"text","text":"` + strings.Repeat("a", MaxResult) + `"}]}`)
	out, errs := e.Apply(context.Background(), &Call{Tool: "t"}, in)
	if &out[0] != &in[0] || len(errs) != 1 || !errors.Is(errs[0], ErrUnusable) {
		t.Errorf("errs = %v, want the input and ErrUnusable", errs)
	}
}

func BenchmarkApply(b *testing.B) {
	// A typical 1 KiB result: a text block, structured content, _meta.
	in := []byte(`{"content":[{"type":"text","text":"` + strings.Repeat("issue body text ", 40) + `"}],` +
		`"structuredContent":{"number":42,"title":"Crash on start","state":"open","labels":["bug","p1"],"assignee":{"login":"alice","id":1234}},` +
		`"_meta":{"io.modelcontextprotocol/related-task":{"taskId":"abc"}}}`)
	e := mustNew(b, []Rule{{
		Name:       "owners",
		Tools:      []string{"github__*"},
		When:       `result.state == "open"`,
		Text:       []string{"Owned by {{.caller.claims.team}}; see {{.args.repo}}"},
		Links:      []Link{{URI: "https://docs.example/repos/{{pathescape .args.repo}}", Name: "runbook"}},
		Structured: map[string]string{"owner": `{"team":{{json .caller.claims.team}}}`},
	}})
	call := &Call{Tool: "github__get_issue", Upstream: "github", Arguments: json.RawMessage(`{"repo":"acme/api","number":42}`), Claims: map[string]any{"team": "core"}}
	b.SetBytes(int64(len(in)))
	b.ReportAllocs()
	for b.Loop() {
		if _, errs := e.Apply(context.Background(), call, in); errs != nil {
			b.Fatal(errs)
		}
	}
}

func BenchmarkApplyNoMatch(b *testing.B) {
	in := []byte(`{"content":[{"type":"text","text":"` + strings.Repeat("x", 1000) + `"}]}`)
	e := mustNew(b, []Rule{{Name: "jira", Tools: []string{"jira__*"}, Text: []string{"x"}}})
	b.ReportAllocs()
	for b.Loop() {
		e.Apply(context.Background(), &Call{Tool: "t"}, in)
	}
}

func TestStructuredKeys(t *testing.T) {
	e, err := New([]Rule{
		{Name: "a", Tools: []string{"files__*"}, Structured: map[string]string{"owner": `"x"`, "lineage": `"y"`}},
		{Name: "b", Tools: []string{"files__read"}, Structured: map[string]string{"owner": `"z"`, "pii": `false`}},
		{Name: "c", Tools: []string{"*"}, Text: []string{"t"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprint(e.StructuredKeys("files__read")); got != "[lineage owner pii]" {
		t.Errorf("files__read: %s", got)
	}
	if got := e.StructuredKeys("weather__now"); len(got) != 0 {
		t.Errorf("weather__now: %v", got)
	}
}
