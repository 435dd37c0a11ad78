package schema_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/toolwire/toolwire/schema"
)

type portableItem struct {
	ID   int           `json:"id"`
	Next *portableItem `json:"-"`
}

type portableOut struct {
	Name  string         `json:"name"`
	Home  *address       `json:"home"`
	Tags  []string       `json:"tags"`
	Items []portableItem `json:"items,omitempty"`
}

// rootType returns the root "type" member as written.
func rootType(t *testing.T, raw json.RawMessage) string {
	t.Helper()
	var s struct {
		Type json.RawMessage `json:"type"`
	}
	if err := json.Unmarshal(raw, &s); err != nil {
		t.Fatal(err)
	}
	return string(s.Type)
}

// TestInferredRootIsNeverATypeArray: a pointer is inferred as what it points
// to and a slice as an array, so the root "type" is one string that every
// client can decode.
func TestInferredRootIsNeverATypeArray(t *testing.T) {
	for _, c := range []struct {
		name string
		raw  func() (json.RawMessage, error)
		want string
	}{
		{"*struct", schema.For[*portableOut], `"object"`},
		{"**struct", schema.For[**portableOut], `"object"`},
		{"[]struct", schema.For[[]portableOut], `"array"`},
		{"[]*struct", schema.For[[]*portableOut], `"array"`},
		{"*[]int", schema.For[*[]int], `"array"`},
		{"*int", schema.For[*int], `"integer"`},
		{"struct", schema.For[portableOut], `"object"`},
	} {
		raw, err := c.raw()
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if got := rootType(t, raw); got != c.want {
			t.Errorf("%s: root type %s, want %s: %s", c.name, got, c.want, raw)
		}
	}
}

// TestPointerRootKeepsTheObjectSchema: a *T root is T's schema, tags
// included: properties, required and additionalProperties.
func TestPointerRootKeepsTheObjectSchema(t *testing.T) {
	byValue, err := schema.For[input]()
	if err != nil {
		t.Fatal(err)
	}
	byPointer, err := schema.For[*input]()
	if err != nil {
		t.Fatal(err)
	}
	if string(byValue) != string(byPointer) {
		t.Errorf("schema of *input differs from input:\n%s\n%s", byPointer, byValue)
	}
	s, err := schema.Compile(byPointer)
	if err != nil {
		t.Fatal(err)
	}
	if s.RootType() != "object" {
		t.Errorf("RootType = %q", s.RootType())
	}
	if err := s.ValidateJSON([]byte(`null`)); err == nil {
		t.Error("null accepted by the schema of a pointer root")
	}
}

// TestFieldsKeepNull: below the root, a pointer or slice field may encode as
// null (encoding/json writes a nil one so), and its schema says so with
// jsonschema-go's ["null", T]; a slice's items stay typed.
func TestFieldsKeepNull(t *testing.T) {
	raw, err := schema.For[[]portableOut]()
	if err != nil {
		t.Fatal(err)
	}
	s, err := schema.Compile(raw)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.ValidateJSON([]byte(`[{"name":"a","home":null,"tags":null},{"name":"b","home":{"city":"x"},"tags":["t"]}]`)); err != nil {
		t.Errorf("nil fields rejected: %v", err)
	}
	if err := s.ValidateJSON([]byte(`null`)); err == nil {
		t.Error("null accepted by the schema of a slice root")
	}
	if err := s.ValidateJSON([]byte(`[]`)); err != nil {
		t.Errorf("empty array rejected: %v", err)
	}
	if !strings.Contains(string(raw), `"items":{"type":"object"`) {
		t.Errorf("items not an object schema: %s", raw)
	}
}
