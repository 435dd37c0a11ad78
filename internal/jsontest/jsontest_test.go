package jsontest_test

import (
	"testing"

	"github.com/toolwire/toolwire/internal/jsontest"
)

func TestDepth(t *testing.T) {
	for _, c := range []struct {
		text string
		want int
	}{
		{`1`, 0},
		{`{}`, 1},
		{`[[],{"a":[1]}]`, 3},
		{`"[[["`, 0},
		{`["\"[", {"k\\": [[]]}]`, 4},
	} {
		if got := jsontest.Depth([]byte(c.text)); got != c.want {
			t.Errorf("Depth(%s) = %d, want %d", c.text, got, c.want)
		}
	}
}
