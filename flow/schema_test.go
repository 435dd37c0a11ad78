package flow

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/goccy/go-yaml"
	"github.com/goccy/go-yaml/ast"
	yamlparser "github.com/goccy/go-yaml/parser"
	"github.com/santhosh-tekuri/jsonschema/v6"
)

// schemaPath is the JSON Schema of a flow document, published for editors
// (yaml-language-server: # yaml-language-server: $schema=...).
var schemaPath = filepath.Join("..", "docs", "flow.schema.json")

// loadSchemaDoc reads the published schema as JSON values.
func loadSchemaDoc(t *testing.T) map[string]any {
	t.Helper()
	data, err := os.ReadFile(schemaPath)
	if err != nil {
		t.Fatal(err)
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
	if err != nil {
		t.Fatalf("%s: %v", schemaPath, err)
	}
	m, ok := doc.(map[string]any)
	if !ok {
		t.Fatalf("%s is not an object", schemaPath)
	}
	return m
}

// compileFlowSchema compiles the published schema.
func compileFlowSchema(t *testing.T) *jsonschema.Schema {
	t.Helper()
	c := jsonschema.NewCompiler()
	c.AssertFormat()
	if err := c.AddResource("flow.schema.json", loadSchemaDoc(t)); err != nil {
		t.Fatal(err)
	}
	sch, err := c.Compile("flow.schema.json")
	if err != nil {
		t.Fatalf("the schema does not compile: %v", err)
	}
	return sch
}

// propsAt is the property names of the schema object at a path of keys.
func propsAt(t *testing.T, doc map[string]any, path ...string) []string {
	t.Helper()
	var cur any = doc
	for _, k := range path {
		m, ok := cur.(map[string]any)
		if !ok {
			t.Fatalf("schema: %s: not an object at %q", strings.Join(path, "/"), k)
		}
		cur = m[k]
	}
	m, ok := cur.(map[string]any)
	if !ok {
		t.Fatalf("schema: no object at %s", strings.Join(path, "/"))
	}
	props, _ := m["properties"].(map[string]any)
	out := make([]string, 0, len(props))
	for k := range props {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func sorted(keys ...[]string) []string {
	set := map[string]bool{}
	for _, ks := range keys {
		for _, k := range ks {
			set[k] = true
		}
	}
	out := make([]string, 0, len(set))
	for k := range set {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// TestSchemaKeysMatchParser: every key the parser accepts is in the
// schema, at the same place, and the schema has no other: the flow's
// keys, each step kind with the common keys, its own keys and (besides
// assert) the step's own assert:, the keys under call, list, read and
// prompt, throw, catch handlers, assert, retry, inputs, clients and a
// step's assert: {duration: ...}.
func TestSchemaKeysMatchParser(t *testing.T) {
	doc := loadSchemaDoc(t)
	defs := []string{"definitions"}
	at := func(name string) []string { return append(append([]string{}, defs...), name) }
	check := func(what string, got, want []string) {
		t.Helper()
		if strings.Join(got, ",") != strings.Join(want, ",") {
			t.Errorf("%s: the schema has %v, the parser accepts %v", what, got, want)
		}
	}
	check("flow", propsAt(t, doc), sorted(flowKeys))
	var kinds []string
	for k := range doc["definitions"].(map[string]any) {
		if kind, ok := strings.CutPrefix(k, "step_"); ok {
			kinds = append(kinds, kind)
		}
	}
	sort.Strings(kinds)
	check("step kinds", kinds, sorted(kindKeys))
	for _, kind := range kindKeys {
		want := sorted(commonKeys, []string{kind}, auxKeys[kind])
		if kind != "assert" {
			want = sorted(want, []string{"assert"})
		}
		check("a "+kind+" step", propsAt(t, doc, at("step_"+kind)...), want)
		if mk, ok := mcpKeys[kind]; ok {
			check(kind, propsAt(t, doc, append(at("step_"+kind), "properties", kind)...), sorted(mk))
		}
	}
	check("throw", propsAt(t, doc, append(at("step_throw"), "properties", "throw")...), sorted(throwKeys))
	check("catch handler", propsAt(t, doc, append(at("step_try"), "properties", "catch", "items")...), sorted(catchKeys))
	check("assert", propsAt(t, doc, at("assert")...), sorted(assertKeys))
	check("retry", propsAt(t, doc, at("retry")...), sorted(retryKeys))
	check("input", propsAt(t, doc, at("input")...), sorted(inputKeys))
	check("client", propsAt(t, doc, at("client")...), sorted(clientKeys))
	check("a step's assert", propsAt(t, doc, at("stepAssert")...), sorted(expectKeys))
	check("assert duration", propsAt(t, doc, append(at("stepAssert"), "properties", "duration")...), sorted(durationKeys))

	types := doc["definitions"].(map[string]any)["input"].(map[string]any)["properties"].(map[string]any)["type"].(map[string]any)["enum"].([]any)
	var got []string
	for _, x := range types {
		got = append(got, x.(string))
	}
	var want []string
	for k := range inputTypes {
		want = append(want, k)
	}
	check("input types", sorted(got), sorted(want))
}

// yamlDocs reads every document of a manifest as JSON values (through
// JSON, so numbers are what a JSON Schema validator expects).
func yamlDocs(t *testing.T, path string) []any {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	f, err := yamlparser.ParseBytes(data, 0)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	var out []any
	for _, d := range f.Docs {
		if d == nil || d.Body == nil {
			continue
		}
		if _, ok := d.Body.(*ast.CommentGroupNode); ok {
			continue
		}
		var v any
		if err := yaml.NodeToValue(d.Body, &v); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		j, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		out = append(out, j)
	}
	return out
}

// validFlows are the manifests that pass the check: the examples and the
// package's valid test manifests.
func validFlows(t *testing.T) []string {
	t.Helper()
	var out []string
	for _, pat := range []string{
		filepath.Join("..", "examples", "flows", "*.flow.yaml"),
		filepath.Join("testdata", "guarded", "*.flow.yaml"),
		filepath.Join("testdata", "valid", "*.flow.yaml"),
	} {
		m, err := filepath.Glob(pat)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, m...)
	}
	if len(out) < 10 {
		t.Fatalf("only %d valid manifests found", len(out))
	}
	return out
}

// TestSchemaAcceptsValidFlows: every example flow and every valid test
// manifest passes both the check and the JSON Schema, document by
// document.
func TestSchemaAcceptsValidFlows(t *testing.T) {
	sch := compileFlowSchema(t)
	for _, path := range validFlows(t) {
		if _, err := Load(path); err != nil {
			t.Errorf("%s does not pass the check: %v", path, err)
			continue
		}
		for i, doc := range yamlDocs(t, path) {
			if err := sch.Validate(doc); err != nil {
				t.Errorf("%s, document %d: the schema rejects it:\n%v", path, i+1, err)
			}
		}
	}
}

// TestSchemaRejectsStructuralMistakes: each broken manifest marked
// "# structural: true" (a mistake of shape: an unknown or misspelt key, a
// wrong type) is rejected by the JSON Schema too, not only by the check.
func TestSchemaRejectsStructuralMistakes(t *testing.T) {
	sch := compileFlowSchema(t)
	paths, err := filepath.Glob(filepath.Join("testdata", "broken", "*.flow.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, path := range paths {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Contains(data, []byte("# structural: true")) {
			continue
		}
		n++
		rejected := false
		for _, doc := range yamlDocs(t, path) {
			rejected = rejected || sch.Validate(doc) != nil
		}
		if !rejected {
			t.Errorf("%s: the schema accepts a structural mistake", path)
		}
	}
	if n == 0 {
		t.Fatal("no broken manifest is marked # structural: true")
	}
}

// TestSchemaLoopsAndVariables: the schema takes until:, vars:, set steps
// and a step's assert: {duration: ...}, and refuses them misplaced.
func TestSchemaLoopsAndVariables(t *testing.T) {
	sch := compileFlowSchema(t)
	docs := map[string]bool{
		"vars: {n: 0}\nsteps:\n  - while: true\n    max_iterations: 3\n    until: \"${{ vars.n > 1 }}\"\n    do: [{set: {n: 1}}]\n": true,
		"steps:\n  - call: {tool: t}\n    assert: {duration: {below: 500ms}}\n":                                                     true,
		"steps:\n  - value: 1\n    until: true\n":                                                                                   false,
		"steps:\n  - call: {tool: t}\n    assert: {duration: {below: soon}}\n":                                                      false,
		"steps:\n  - set: {}\n": false,
		"inputs: {t: {type: string, secret: yes-please}}\nsteps: [{value: 1}]\n": false,
	}
	dir := t.TempDir()
	i := 0
	for src, ok := range docs {
		i++
		p := filepath.Join(dir, "d"+string(rune('a'+i))+".flow.yaml")
		if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
		err := sch.Validate(yamlDocs(t, p)[0])
		if (err == nil) != ok {
			t.Errorf("want accepted=%v, got %v:\n%s", ok, err, src)
		}
	}
}

// TestReferenceExamples: every complete flow the reference page shows (a
// yaml block with steps:) passes the check and the JSON Schema.
func TestReferenceExamples(t *testing.T) {
	sch := compileFlowSchema(t)
	data, err := os.ReadFile(filepath.Join("..", "docs", "flows.md"))
	if err != nil {
		t.Fatal(err)
	}
	blocks := strings.Split(string(data), "```yaml\n")
	dir := t.TempDir()
	n := 0
	for _, b := range blocks[1:] {
		src, _, _ := strings.Cut(b, "```")
		if !strings.Contains(src, "\nsteps:\n") {
			continue
		}
		n++
		p := filepath.Join(dir, "example.flow.yaml")
		if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := Load(p); err != nil {
			t.Errorf("the reference's example does not pass the check: %v\n%s", err, src)
		}
		for _, doc := range yamlDocs(t, p) {
			if err := sch.Validate(doc); err != nil {
				t.Errorf("the schema rejects the reference's example: %v\n%s", err, src)
			}
		}
	}
	if n == 0 {
		t.Error("no complete flow in docs/flows.md")
	}
}
