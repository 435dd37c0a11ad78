package schema

import (
	"math/big"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// checkSchemas are schemas with a plan (checked on raw bytes) and without
// (checked as trees), for comparing the two ways.
var checkSchemas = []string{
	`{"type":"object"}`,
	`{"type":"object","properties":{"values":{"type":["null","array"],"items":{"type":"integer"}}},"required":["values"],"additionalProperties":false}`,
	`{"type":"object","properties":{"name":{"type":"string","description":"who"},"times":{"type":"integer","default":2},"mood":{"type":"string","enum":["happy","sad"],"default":"happy"},"home":{"type":"object","properties":{"city":{"type":"string","default":"Lisbon"},"zip":{"type":"string"}},"required":["zip"]}},"required":["name","mood"],"additionalProperties":false}`,
	`{"type":"object","properties":{"n":{"type":"number","minimum":-2.5,"maximum":10,"exclusiveMaximum":9.5,"multipleOf":0.5},"i":{"type":"integer","exclusiveMinimum":0},"c":{"const":"x","type":"string"},"b":{"type":["boolean","null"],"enum":[true,null]}},"minProperties":1,"maxProperties":3}`,
	`{"type":"object","properties":{"s":{"type":"string","minLength":2,"maxLength":4,"pattern":"^a"},"a":{"type":"array","minItems":1,"maxItems":2,"items":{"type":"object","additionalProperties":{"type":"integer"}}}},"additionalProperties":{"type":"string"}}`,
	`{"type":"object","properties":{"never":false,"any":true,"deep":{"type":"object","properties":{"x":{"default":{"k":[1,2]}}}}}}`,
	`{"$schema":"http://json-schema.org/draft-07/schema#","type":"object","properties":{"d":{"type":"string","format":"date"},"m":{"type":"number","maximum":3,"exclusiveMaximum":3},"t":{"items":{"type":"string"}}}}`,
	`{"$schema":"http://json-schema.org/draft-04/schema#","type":"object","properties":{"m":{"type":"number","maximum":3,"exclusiveMaximum":true}}}`,
	`{"type":"array","items":{"type":"number","enum":[1,2.5,1e2]}}`,
	`{"type":"string","default":"x"}`,
	`true`,
	`false`,
	// Planned, with the values under some properties validated as trees.
	`{"type":"object","properties":{"a":{"$ref":"#/$defs/a"}},"$defs":{"a":{"type":"integer"}}}`,
	`{"type":"object","properties":{"a":{"anyOf":[{"type":"integer"},{"type":"string"}]}}}`,
	`{"type":"object","properties":{"o":{"anyOf":[{"type":"object","properties":{"x":{"type":"integer","default":5}}},{"type":"null"}],"properties":{"y":{"default":"d"},"z":{"type":"string"}}},"a":{"type":"array","items":{"type":"integer"}}},"required":["a"]}`,
	`{"$defs":{"n":{"type":"object","properties":{"v":{"type":"integer"},"kids":{"type":"array","items":{"$ref":"#/$defs/n"}}}}},"type":"object","properties":{"root":{"$ref":"#/$defs/n"},"a":{"uniqueItems":true}}}`,
	// No plan: the whole value is validated as a tree.
	`{"$dynamicAnchor":"m","type":"object","properties":{"a":{"$dynamicRef":"#m"}}}`,
	`{"type":"array","uniqueItems":true}`,
	`{"anyOf":[{"type":"object"},{"type":"array","items":{"type":"integer"}}]}`,
}

var checkInstances = []string{
	`{}`, `{"values":[1,2,3]}`, `{"values":[1,"x",3.5,1.0,1e2,-0,null]}`, `{"values":null}`, `{"values":[1],"extra":true,"more":1}`,
	`{"name":"ann"}`, `{"name":"ann","times":"x","home":{}}`, `{"name":"a\u006en","mood":"angry","home":{"zip":"1","city":3}}`,
	`{"n":9.5,"i":0,"c":"y","b":false}`, `{"n":-3,"i":1.0,"c":"x","b":true}`, `{"n":0.25}`, `{"n":1e9999999,"i":1e-9999999}`,
	`{"s":"abcde","a":[]}`, `{"s":"b","a":[{"x":"1"},{"y":2},{}]}`, `{"s":"a\u00e9","other":5}`, `{"never":1,"any":[{"a":1}],"deep":{}}`,
	`{"d":"2024-13-40","m":3,"t":[1,"a"]}`, `{"m":2.9}`, `[1,2.5,100,3]`, `"x"`, `5`, `null`, `[]`,
	`{"a":1,"a":2}`, `{"values":[1,2,}`, "{\"s\":\"\xff\"}", `{"\u0061":1,"a":2}`, ` { "name" : "ann" , "mood" : "sad" } `,
	`{"a":{"b":[1,{"c":1,"c":2}]}}`, `[1] x`, `{"home":{"zip":"1","zip":"2"}}`, `{"a":"x"}`, `{"a":[1,1]}`, `[1,1]`,
	`{"o":{},"a":[1]}`, `{"o":{"x":"s","z":1},"a":[1,"2"]}`, `{"o":null}`, `{"o":{"y":1,"y":2}}`, `{"a":5}`,
	`{"root":{"v":1,"kids":[{"v":"x"},{"kids":[{"v":2.5,"w":1}]}]},"a":[1,1]}`, `{"root":{"kids":[{"kids":{}}]}}`,
}

// normalized sorts the names an "additional properties" message lists:
// the validator lists them in map order.
func normalized(ve *ValidationError) []Violation {
	if ve == nil {
		return nil
	}
	re := regexp.MustCompile(`^additional properties (.*) not allowed$`)
	out := slices.Clone(ve.Violations)
	for i, v := range out {
		if m := re.FindStringSubmatch(v.Message); m != nil {
			names := strings.Split(m[1], ", ")
			slices.Sort(names)
			out[i].Message = "additional properties " + strings.Join(names, ", ") + " not allowed"
		}
	}
	return out
}

// compareCheck checks data against the schema both ways, with and without
// defaults, and fails on any difference.
func compareCheck(t *testing.T, rawSchema, data []byte) {
	t.Helper()
	s, err := Compile(rawSchema)
	if err != nil {
		return
	}
	for _, defaults := range []bool{true, false} {
		got, gerr := s.check(data, defaults, 0)
		want, werr := s.checkTree(data, defaults, DefaultMaxViolations)
		if (gerr == nil) != (werr == nil) || gerr != nil && gerr.Error() != werr.Error() {
			t.Fatalf("schema %s, value %q: error %v, tree error %v", rawSchema, data, gerr, werr)
		}
		if gerr != nil {
			continue
		}
		if got.Kind != want.Kind {
			t.Fatalf("schema %s, value %q: kind %c, tree kind %c", rawSchema, data, got.Kind, want.Kind)
		}
		if got.Invalid != nil && got.Invalid.Truncated || want.Invalid != nil && want.Invalid.Truncated {
			// Which violations a truncated list keeps differs (the
			// first found, the first by path); how many does not.
			if got.Invalid == nil || want.Invalid == nil || !got.Invalid.Truncated || !want.Invalid.Truncated ||
				len(got.Invalid.Violations) != DefaultMaxViolations || len(want.Invalid.Violations) != DefaultMaxViolations {
				t.Fatalf("schema %s, value %q: truncated lists differ:\n got %v\nwant %v", rawSchema, data, got.Invalid, want.Invalid)
			}
		} else if numberRange(want.Invalid) || numberRange(got.Invalid) {
			// Numbers beyond MaxCheckedExponent: the validator may fail
			// to read one (reported at the root), the walker does not
			// expand it (reported where it is). Other cases compare.
		} else if !reflect.DeepEqual(normalized(got.Invalid), normalized(want.Invalid)) {
			t.Fatalf("schema %s, value %q (defaults %v):\n got %v\nwant %v", rawSchema, data, defaults, got.Invalid, want.Invalid)
		}
		gv, err := DecodeValue(got.JSON)
		if err != nil {
			t.Fatalf("schema %s, value %q: the checked JSON %q does not decode: %v", rawSchema, data, got.JSON, err)
		}
		wv, _ := DecodeValue(want.JSON)
		if !reflect.DeepEqual(gv, wv) {
			t.Fatalf("schema %s, value %q: checked JSON %s, tree %s", rawSchema, data, got.JSON, want.JSON)
		}
		if string(want.JSON) == string(data) && string(got.JSON) != string(data) {
			t.Fatalf("schema %s, value %q: changed to %s with no default applied", rawSchema, data, got.JSON)
		}
	}
}

func numberRange(ve *ValidationError) bool {
	if ve == nil {
		return false
	}
	for _, v := range ve.Violations {
		if v.Message == ErrNumberRange {
			return true
		}
	}
	return false
}

func TestCheckMatchesTree(t *testing.T) {
	for _, sch := range checkSchemas {
		for _, in := range checkInstances {
			compareCheck(t, []byte(sch), []byte(in))
		}
	}
}

// FuzzCheckMatchesTree compares Check, which validates raw bytes where the
// schema has a plan, with validation of the decoded tree: the same errors
// for bad JSON, the same violations, the same value after defaults.
func FuzzCheckMatchesTree(f *testing.F) {
	for i, sch := range checkSchemas {
		for j, in := range checkInstances {
			if (i+j)%3 == 0 || i < 3 {
				f.Add([]byte(sch), []byte(in))
			}
		}
	}
	slow := regexp.MustCompile(`[eE][+-]?0*[0-9]{5}|[0-9]{1000}`)
	f.Fuzz(func(t *testing.T, sch, data []byte) {
		if slow.Match(sch) || slow.Match(data) {
			// The validator expands such numbers for a tenth of a second
			// each (the walker does not: see MaxCheckedExponent), which
			// would stall the fuzzer on the reference side.
			return
		}
		compareCheck(t, sch, data)
	})
}

func TestPlannedSchemas(t *testing.T) {
	for i, sch := range checkSchemas {
		s, err := Compile([]byte(sch))
		if err != nil {
			t.Fatalf("%s: %v", sch, err)
		}
		if planned, want := s.plan != nil, i < len(checkSchemas)-3; planned != want {
			t.Errorf("%s: planned %v, want %v", sch, planned, want)
		}
	}
}

func TestIsIntegral(t *testing.T) {
	for in, want := range map[string]bool{
		"0": true, "-0": true, "12": true, "1.0": true, "1.50": false, "1e2": true, "100e-2": true, "150e-2": false,
		"0.000": true, "0e-99999999": true, "1e-400": false, "1e400": true, "1e1000001": false, "1E+2": true,
		"-2.000e1": true, "0.1e1": true, "0.01e1": false, "1e99999999999999999999": false, "0e99999999999999999999": false,
	} {
		if got := parseDecimal([]byte(in)).integral(); got != want {
			t.Errorf("isIntegral(%s) = %v, want %v", in, got, want)
		}
	}
}

// A value breaking its schema everywhere lists at most the limit of
// violations, and says there were more; building the list costs no more
// than the list.
func TestCheckListsBoundedViolations(t *testing.T) {
	s, err := Compile([]byte(`{"type":"object","properties":{"v":{"type":"array","items":{"type":"integer"}},"o":{"type":"object","additionalProperties":false}}}`))
	if err != nil {
		t.Fatal(err)
	}
	bad := []byte(`{"v":[` + strings.Repeat(`"x",`, 149) + `"x"],"o":{"a":1}}`)
	c, err := s.Check(bad, 0)
	if err != nil || c.Invalid == nil {
		t.Fatalf("got %+v, %v", c, err)
	}
	if len(c.Invalid.Violations) != DefaultMaxViolations || !c.Invalid.Truncated ||
		c.Invalid.Violations[0] != (Violation{Path: "/v/0", Message: "expected integer, got string"}) ||
		!strings.HasSuffix(c.Invalid.Error(), "; and more (only the first 100 violations are listed)") {
		t.Errorf("got %d violations (truncated %v): %.200s", len(c.Invalid.Violations), c.Invalid.Truncated, c.Invalid)
	}
	c, _ = s.Check(bad, 3)
	if len(c.Invalid.Violations) != 3 || !c.Invalid.Truncated {
		t.Errorf("a limit of 3: got %v", c.Invalid)
	}
	c, _ = s.Check([]byte(`{"v":["x"],"o":{"a":1}}`), 2)
	if len(c.Invalid.Violations) != 2 || c.Invalid.Truncated {
		t.Errorf("two violations, limit 2: got %v (truncated %v)", c.Invalid, c.Invalid.Truncated)
	}
	// Past the limit, violations cost nothing to find: 9800 more of them
	// cost no more allocations than a few (the race detector's own).
	many := []byte(`{"v":[` + strings.Repeat(`"x",`, 9999) + `"x"]}`)
	few := []byte(`{"v":[` + strings.Repeat(`"x",`, 199) + `"x"]}`)
	if a, b := testing.AllocsPerRun(3, func() { _, _ = s.Check(few, 0) }), testing.AllocsPerRun(3, func() { _, _ = s.Check(many, 0) }); b > a+98 {
		t.Errorf("%v allocations for 10000 violations, %v for 200", b, a)
	}
}

// Numbers past MaxCheckedExponent are compared with bounds by magnitude,
// as exactly as math/big would, or refused when magnitude does not decide.
func TestHugeNumbersAgainstBounds(t *testing.T) {
	s, err := Compile([]byte(`{"type":"object","properties":{"n":{"type":"number","minimum":-1e300,"maximum":10},"m":{"type":"number","multipleOf":2},"i":{"type":"integer"}}}`))
	if err != nil {
		t.Fatal(err)
	}
	for in, want := range map[string]string{
		`{"n":1e-20000}`:   "",
		`{"n":-1e-20000}`:  "",
		`{"n":0e99999}`:    "",
		`{"n":-1e20000}`:   ErrNumberRange,
		`{"n":1e20000}`:    ErrNumberRange,
		`{"n":5}`:          "",
		`{"m":4e20000}`:    ErrNumberRange,
		`{"i":1.5e-20000}`: "expected integer, got number",
		`{"i":1.5e20000}`:  "",
	} {
		c, err := s.Check([]byte(in), 0)
		if err != nil {
			t.Fatalf("%s: %v", in, err)
		}
		got := ""
		if c.Invalid != nil {
			got = c.Invalid.Violations[0].Message
		}
		if got != want {
			t.Errorf("%s: got %q, want %q", in, got, want)
		}
	}
	// By magnitude exactly as math/big compares (numbers big enough to
	// compare exactly here).
	d := parseDecimal([]byte("-3.5e400"))
	for _, bound := range []string{"0", "1", "-1", "1e300", "-1e300", "2.5e-300"} {
		b, _ := new(big.Rat).SetString(bound)
		want := new(big.Rat)
		want.SetString("-3.5e400")
		c, ok := d.compareMagnitude(b)
		if !ok || c != want.Cmp(b) {
			t.Errorf("-3.5e400 against %s: %d %v, want %d", bound, c, ok, want.Cmp(b))
		}
	}
}

// A number math/big refuses to expand, compared with a bound, is a
// violation, not a crash of the validator (it dereferenced the nil it got),
// whether the value is checked on its bytes or as a tree.
func TestValidateUnreadableNumberDoesNotPanic(t *testing.T) {
	for _, sch := range []string{
		`{"type":"object","properties":{"n":{"type":"number","maximum":10}}}`,
		`{"type":"object","properties":{"n":{"type":"number","maximum":10}},"anyOf":[{"required":["n"]}]}`,
	} {
		s, err := Compile([]byte(sch))
		if err != nil {
			t.Fatal(err)
		}
		for _, in := range []string{`{"n":1e9999999}`, `{"n":1e99999999999999999999}`} {
			err := s.ValidateJSON([]byte(in))
			if err == nil || !strings.Contains(err.Error(), "cannot be checked against the schema") {
				t.Errorf("%s against %s: got %v", in, sch, err)
			}
		}
	}
}

func TestParseDecimalExponents(t *testing.T) {
	for in, want := range map[string]bool{ // expOK: math/big reads the exponent
		"1e9223372036854775807": true, "1e9223372036854775808": false, "1e-9223372036854775808": true,
		"1e-9223372036854775809": false, "1e00000000000000000000000001": true, "1e99999999999999999999999": false,
	} {
		_, ok := new(big.Rat).SetString(in)
		d := parseDecimal([]byte(in))
		if d.expOK != want {
			t.Errorf("%s: expOK %v, want %v (math/big reads it: %v)", in, d.expOK, want, ok)
		}
	}
}
