package audit

import (
	"strings"
	"testing"
)

// A Filter.Tool glob with a reserved character fails the query; the same
// characters in a plain name are just characters.
func TestToolGlobReserved(t *testing.T) {
	for _, tool := range []string{"a[bc]*", "x{y}?", `a\*`} {
		f := Filter{Tool: tool}
		if _, err := f.toolGlob(); err == nil || !strings.Contains(err.Error(), "reserved") {
			t.Errorf("Tool %q: %v, want a refusal naming the reserved character", tool, err)
		}
	}
	for _, tool := range []string{"a[b]", "plain", ""} {
		f := Filter{Tool: tool}
		if g, err := f.toolGlob(); err != nil || g != nil {
			t.Errorf("Tool %q: %v, %v; want a name, not a glob", tool, g, err)
		}
	}
}
