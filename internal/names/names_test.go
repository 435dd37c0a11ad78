package names_test

import (
	"testing"

	"github.com/toolwire/toolwire/internal/names"
)

// Each problem is named; names without one, spaces inside and non-ASCII
// included, pass.
func TestProblem(t *testing.T) {
	for name, want := range map[string]string{
		"":            "must not be empty",
		" echo":       "must not begin or end with white space",
		"echo\n":      "must not begin or end with white space",
		"ec\x00ho":    "must not contain control characters",
		"ec\x7fho":    "must not contain control characters",
		"echo":        "",
		"web__fetch":  "",
		"two words":   "",
		"café":        "",
		"file:///a b": "",
	} {
		if got := names.Problem(name); got != want {
			t.Errorf("Problem(%q) = %q, want %q", name, got, want)
		}
	}
}
