package schema_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/toolwire/toolwire/schema"
)

type address struct {
	City string `json:"city" jsonschema:"city name"`
}

type input struct {
	Name  string   `json:"name" jsonschema:"who to greet"`
	Mood  string   `json:"mood,omitempty" enum:"happy,sad" default:"happy"`
	Times int      `json:"times,omitempty" default:"1"`
	Tags  []string `json:"tags,omitempty"`
	Home  *address `json:"home,omitempty"`
}

func TestForInfersFromTags(t *testing.T) {
	raw, err := schema.For[input]()
	if err != nil {
		t.Fatal(err)
	}
	var s struct {
		Type       string                     `json:"type"`
		Required   []string                   `json:"required"`
		Properties map[string]json.RawMessage `json:"properties"`
		Additional *bool                      `json:"additionalProperties"`
	}
	if err := json.Unmarshal(raw, &s); err != nil {
		t.Fatal(err)
	}
	if s.Type != "object" || len(s.Required) != 1 || s.Required[0] != "name" {
		t.Errorf("type/required wrong: %s", raw)
	}
	if s.Additional == nil || *s.Additional {
		t.Errorf("structs must not allow additional properties: %s", raw)
	}
	for prop, want := range map[string]string{
		"name":  `"description":"who to greet"`,
		"mood":  `"enum":["happy","sad"]`,
		"times": `"default":1`,
	} {
		if !strings.Contains(string(s.Properties[prop]), want) {
			t.Errorf("property %s = %s, want it to contain %s", prop, s.Properties[prop], want)
		}
	}
	if !strings.Contains(string(s.Properties["mood"]), `"default":"happy"`) {
		t.Errorf("mood default missing: %s", s.Properties["mood"])
	}
	if !strings.Contains(string(s.Properties["home"]), `"description":"city name"`) {
		t.Errorf("nested description missing: %s", s.Properties["home"])
	}
}

func TestForRejectsBadTags(t *testing.T) {
	type bad struct {
		N int `json:"n" default:"many"`
	}
	if _, err := schema.For[bad](); err == nil || !strings.Contains(err.Error(), "default") {
		t.Errorf("bad default accepted: %v", err)
	}
	// A default that names a member twice would publish a schema whose
	// readers disagree on it.
	type dup struct {
		M map[string]int `json:"m" default:"{\"a\":1,\"a\":2}"`
	}
	if _, err := schema.For[dup](); err == nil || !strings.Contains(err.Error(), "duplicate member name") {
		t.Errorf("default naming a member twice accepted: %v", err)
	}
	type ch struct {
		C chan int `json:"c"`
	}
	if _, err := schema.For[ch](); err == nil {
		t.Error("channel field accepted")
	}
}

func TestCompileDialects(t *testing.T) {
	cases := map[string]string{
		"default 2020-12": `{"type":"object","properties":{"a":{"type":"number"}},"required":["a"]}`,
		"2020-12":         `{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object","properties":{"a":{"type":"number"}},"required":["a"]}`,
		"draft-07":        `{"$schema":"http://json-schema.org/draft-07/schema#","type":"object","properties":{"a":{"type":"number"}},"required":["a"]}`,
		"2019-09":         `{"$schema":"https://json-schema.org/draft/2019-09/schema","type":"object","properties":{"a":{"type":"number"}},"required":["a"]}`,
	}
	for name, raw := range cases {
		s, err := schema.Compile(json.RawMessage(raw))
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if err := s.ValidateJSON([]byte(`{"a":1}`)); err != nil {
			t.Errorf("%s: valid value rejected: %v", name, err)
		}
		if err := s.ValidateJSON([]byte(`{"a":"x"}`)); err == nil {
			t.Errorf("%s: invalid value accepted", name)
		}
	}
}

func TestCompileDraft07Semantics(t *testing.T) {
	// In draft-07, "items" as an array is tuple validation; in 2020-12 that
	// keyword is prefixItems. Each dialect must be honoured as declared.
	s, err := schema.Compile(json.RawMessage(`{"$schema":"http://json-schema.org/draft-07/schema#","type":"array","items":[{"type":"string"}],"additionalItems":false}`))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.ValidateJSON([]byte(`["a",2]`)); err == nil {
		t.Error("draft-07 additionalItems not enforced")
	}
	if s.Dialect() != schema.Draft07 {
		t.Errorf("dialect %s", s.Dialect())
	}
}

func TestCompileUnknownDialect(t *testing.T) {
	_, err := schema.Compile(json.RawMessage(`{"$schema":"https://example.com/my-dialect","type":"object"}`))
	var ud *schema.UnsupportedDialectError
	if !errors.As(err, &ud) || ud.Dialect != "https://example.com/my-dialect" {
		t.Fatalf("got %v", err)
	}
	if !strings.Contains(err.Error(), "https://example.com/my-dialect") {
		t.Errorf("error does not name the dialect: %v", err)
	}
}

func TestCompileRefusesExternalRefs(t *testing.T) {
	_, err := schema.Compile(json.RawMessage(`{"type":"object","properties":{"a":{"$ref":"https://example.com/x.json"}}}`))
	if err == nil || !strings.Contains(err.Error(), "not dereferenced") {
		t.Errorf("external $ref not refused: %v", err)
	}
	s, err := schema.Compile(json.RawMessage(`{"type":"object","$defs":{"n":{"type":"number"}},"properties":{"a":{"$ref":"#/$defs/n"}}}`))
	if err != nil {
		t.Fatalf("local $ref refused: %v", err)
	}
	if s.ValidateJSON([]byte(`{"a":"x"}`)) == nil {
		t.Error("local $ref not applied")
	}
}

func TestValidateNamesEveryPath(t *testing.T) {
	raw, _ := schema.For[input]()
	s, err := schema.Compile(raw)
	if err != nil {
		t.Fatal(err)
	}
	err = s.ValidateJSON([]byte(`{"times":"x","mood":"angry","extra":1,"home":{"city":3}}`))
	var ve *schema.ValidationError
	if !errors.As(err, &ve) {
		t.Fatalf("got %v", err)
	}
	got := map[string]string{}
	for _, v := range ve.Violations {
		got[v.Path] += v.Message
	}
	for path, want := range map[string]string{
		"/name":      "required",
		"/times":     "expected integer, got string",
		"/mood":      "happy",
		"/home/city": "expected string, got number",
		"":           "extra",
	} {
		if !strings.Contains(got[path], want) {
			t.Errorf("path %q: got %q, want it to mention %q (all: %v)", path, got[path], want, ve)
		}
	}
}

func TestApplyDefaults(t *testing.T) {
	raw, _ := schema.For[input]()
	s, _ := schema.Compile(raw)
	v, _ := schema.DecodeValue([]byte(`{"name":"x","times":3}`))
	if !s.ApplyDefaults(v) {
		t.Fatal("nothing applied")
	}
	m := v.(map[string]any)
	if m["mood"] != "happy" || m["times"].(json.Number).String() != "3" {
		t.Errorf("got %v", m)
	}
	v2, _ := schema.DecodeValue([]byte(`{"name":"x","mood":"sad","times":2}`))
	if s.ApplyDefaults(v2) {
		t.Error("defaults overwrote present values")
	}
}

func TestRootType(t *testing.T) {
	s, _ := schema.Compile(json.RawMessage(`{"type":"array","items":{"type":"number"}}`))
	if s.RootType() != "array" {
		t.Errorf("root type %q", s.RootType())
	}
	if _, err := schema.Compile(json.RawMessage(`"nope"`)); err == nil {
		t.Error("string schema accepted")
	}
	if _, err := schema.Compile(json.RawMessage(`{`)); err == nil {
		t.Error("invalid JSON accepted")
	}
}
