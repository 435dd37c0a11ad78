package wirejson_test

import (
	"testing"

	"github.com/toolwire/toolwire/internal/wirejson"
)

// KindOf names each JSON type by the value's first byte.
func TestKindOf(t *testing.T) {
	for v, want := range map[string]string{
		`{"a":1}`: "an object", `[1]`: "an array", `"s"`: "a string", `-1.5e3`: "a number", `0`: "a number",
		`true`: "a boolean", `false`: "a boolean", `null`: "null", ``: "nothing",
	} {
		if got := wirejson.KindOf([]byte(v)); got != want {
			t.Errorf("KindOf(%q) = %q, want %q", v, got, want)
		}
	}
}
