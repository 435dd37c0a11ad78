package jsonscan

import (
	"strings"
	"testing"
)

// foldEqual must agree with strings.EqualFold and never allocate.
func TestFoldEqualMatchesEqualFold(t *testing.T) {
	names := []string{"", "a", "A", "method", "METHOD", "Method", "ſ", "s", "S", "K", "k", "\u212a",
		"io.modelcontextprotocol/protocolVersion", "IO.MODELCONTEXTPROTOCOL/PROTOCOLVERSION", "é", "É", "ß", "ss", "x\xff"}
	for _, a := range names {
		for _, b := range names {
			if got, want := foldEqual([]byte(a), b), strings.EqualFold(a, b); got != want {
				t.Errorf("foldEqual(%q, %q) = %v, want %v", a, b, got, want)
			}
		}
	}
	long := []byte("IO.MODELCONTEXTPROTOCOL/CLIENTCAPABILITIES")
	if n := testing.AllocsPerRun(100, func() { foldEqual(long, "io.modelcontextprotocol/clientCapabilities") }); n != 0 {
		t.Errorf("foldEqual allocates %v times", n)
	}
}
