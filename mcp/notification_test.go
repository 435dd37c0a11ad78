package mcp_test

import (
	"testing"

	"github.com/toolwire/toolwire/mcp"
)

// TestValidProgressToken: strings and integers are tokens; fractions,
// exponents, and the other JSON kinds are not.
func TestValidProgressToken(t *testing.T) {
	for tok, want := range map[string]bool{
		`"abc"`: true, `""`: true, `7`: true, `-3`: true, `0`: true, `12345678901234567890`: true,
		`1.5`: false, `1e3`: false, `-2E1`: false, `null`: false, `true`: false, `{}`: false,
		`[1]`: false, ``: false,
	} {
		if got := mcp.ValidProgressToken(mcp.ProgressToken(tok)); got != want {
			t.Errorf("ValidProgressToken(%q) = %v, want %v", tok, got, want)
		}
	}
}
