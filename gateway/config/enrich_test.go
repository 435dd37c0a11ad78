package config

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/toolwire/toolwire/gateway/enrich"
)

func TestEnrichment(t *testing.T) {
	src := `enrichment:
  - name: owners
    tools: ["files__*"]
    when: 'args.path.startsWith("/srv")'
    text: ["Owner of {{.args.path}}: data team", "{{$$p := .args.path}}{{$$p}}"]
    links:
      - {uri: "https://wiki/{{.tool}}", name: docs}
      - {uri: "file:///srv/README", name: readme, title: Read me, description: The data team's notes, mime_type: text/markdown}
    structured: {owner: '"data-team"'}
    overwrite: true
  - name: second
    tools: [weather__forecast, "x?"]
    text: [hi]
`
	d := &decoder{name: "g.yaml", opts: newOptions(nil)}
	f := d.decode([]byte(src))
	if err := d.err(); err != nil {
		t.Fatal(err)
	}
	want := []enrich.Rule{
		{Name: "owners", Tools: []string{"files__*"}, When: `args.path.startsWith("/srv")`,
			Text: []string{"Owner of {{.args.path}}: data team", "{{$p := .args.path}}{{$p}}"},
			Links: []enrich.Link{{URI: "https://wiki/{{.tool}}", Name: "docs"},
				{URI: "file:///srv/README", Name: "readme", Title: "Read me", Description: "The data team's notes", MimeType: "text/markdown"}},
			Structured: map[string]string{"owner": `"data-team"`}, Overwrite: true},
		{Name: "second", Tools: []string{"weather__forecast", "x?"}, Text: []string{"hi"}},
	}
	if diff := cmp.Diff(want, d.enrichRules); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	e, ok := f.Gateway.Enrich.(*enrich.Enricher)
	if !ok {
		t.Fatalf("Enrich is a %T", f.Gateway.Enrich)
	}
	out, errs := e.Apply(context.Background(), &enrich.Call{Tool: "files__read", Arguments: json.RawMessage(`{"path":"/srv/a"}`)},
		json.RawMessage(`{"content":[],"structuredContent":{}}`))
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	for _, s := range []string{"Owner of /srv/a: data team", `"owner":"data-team"`, "https://wiki/files__read"} {
		if !strings.Contains(string(out), s) {
			t.Errorf("the result %s lacks %s", out, s)
		}
	}
	// No rules: a nil interface.
	f, err := Parse([]byte("enrichment: []\n"), "g.yaml")
	if err != nil || f.Gateway.Enrich != nil {
		t.Errorf("no rules: %v, %v", f.Gateway.Enrich, err)
	}
}

func TestEnrichmentErrors(t *testing.T) {
	for _, c := range []struct{ src, want string }{
		{"enrichment:\n  - name: a\n    tools: [x]\n    when: 'args.'\n    text: [t]\n", `g.yaml:4:11: enrichment: rule 0 "a": when: `},
		{"enrichment:\n  - name: a\n    tools: [x]\n    when: '1 + 1'\n    text: [t]\n", `g.yaml:4:11: enrichment: rule 0 "a": when: `},
		{"enrichment:\n  - name: a\n    tools: [x]\n    text: [ok, '{{.args']\n", `g.yaml:4:16: enrichment: rule 0 "a": text[1]: template: rule 0 "a" Text[1]:1: unclosed action`},
		{"enrichment:\n  - name: a\n    tools: [x]\n    links: [{uri: '{{', name: n}]\n", `g.yaml:4:19: enrichment: rule 0 "a": links[0]: uri: `},
		{"enrichment:\n  - name: a\n    tools: [x]\n    links: [{name: n}]\n", `g.yaml:4:13: enrichment: rule 0 "a": links[0]: no uri`},
		{"enrichment:\n  - name: a\n    tools: [x]\n    links: [{uri: u, mime: x}]\n", `g.yaml:4:22: unknown key "mime" in enrichment: rule 0 "a": links[0] (did you mean "name"?)`},
		{"enrichment:\n  - name: a\n    tools: [x]\n    structured: {k: '{{end}}'}\n", `g.yaml:4:21: enrichment: rule 0 "a": structured: k: template: rule 0 "a" Structured["k"]:1: unexpected {{end}}`},
		{"enrichment:\n  - name: a\n    tools: [x]\n", `g.yaml:2:5: enrichment: rule 0 "a": adds nothing: no Text, Links or Structured`},
		{"enrichment:\n  - name: a\n    tools: []\n    text: [t]\n", `g.yaml:3:12: enrichment: rule 0 "a": tools: no tool globs: a rule names at least one`},
		{"enrichment:\n  - name: a\n    text: [t]\n", `g.yaml:2:5: enrichment: rule 0 "a": no tools (a list of globs over tool names)`},
		{"enrichment:\n  - name: a\n    tools: ['x{y}']\n    text: [t]\n", `g.yaml:3:13: enrichment: rule 0 "a": tools: pattern "x{y}": '{' at offset 1 is reserved (only * and ? are special)`},
		{"enrichment:\n  - tools: [x]\n    text: [t]\n", `g.yaml:2:5: enrichment: rule 0: no name`},
		{"enrichment:\n  - name: A\n    tools: [x]\n    text: [t]\n", `g.yaml:2:11: enrichment: rule 0: name: "A": a name is 1 to 64 of a-z 0-9 _ . -`},
		{"enrichment:\n  - {name: a, tools: [x], text: [t]}\n  - {name: a, tools: [x], text: [t]}\n", `g.yaml:3:12: enrichment: rule 1: name: "a" is also the name of the rule at 2:12`},
		{"enrichment:\n  - name: a\n    tols: [x]\n", `g.yaml:2:5: enrichment: rule 0 "a": no tools (a list of globs over tool names)` + "\n" + `g.yaml:3:5: unknown key "tols" in enrichment: rule 0 "a" (did you mean "tools"?)`},
		{"enrichment:\n  - name: a\n    tools: [x]\n    text: [t]\n    overwrite: sometimes\n", `g.yaml:5:16: enrichment: rule 0 "a": overwrite: "sometimes" is neither true nor false`},
		{"enrichment:\n  - name: a\n    tools: [x]\n    text: ['{{$x := 1}}']\n", `g.yaml:4:12: enrichment: rule 0 "a": text: a $ not starting ${NAME}: write $$ for a literal $`},
		{"enrichment: {name: a}\n", `g.yaml:1:13: enrichment: want a list, not a mapping`},
		{"enrichment:\n  - x\n", `g.yaml:2:5: enrichment: rule 0: want a mapping, not a string`},
		{"enrichment:\n  -\n", `g.yaml:2:5: enrichment: rule 0: no settings (want name, tools and what to add)`},
	} {
		_, err := Parse([]byte(c.src), "g.yaml")
		if err == nil || !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("%q:\n got %v\nwant %s...", c.src, err, c.want)
		}
	}
}
