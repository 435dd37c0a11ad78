package config

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// FuzzParse: Parse never panics, is deterministic, reports errors against
// the file's name, and what it accepts passes Validate.
func FuzzParse(f *testing.F) {
	lookup := WithLookupEnv(func(k string) (string, bool) {
		v, ok := map[string]string{"HOME": "/home/op", "EMPTY": "", "TOKEN": "t0k"}[k]
		return v, ok
	})
	f.Fuzz(func(t *testing.T, data []byte) {
		got, err := Parse(data, "f.yaml", lookup, WithBaseDir("/base"))
		again, err2 := Parse(data, "f.yaml", lookup, WithBaseDir("/base"))
		if (err == nil) != (err2 == nil) || err != nil && err.Error() != err2.Error() {
			t.Fatalf("not deterministic: %v / %v", err, err2)
		}
		if err != nil {
			if got != nil {
				t.Fatalf("a File with an error: %v", err)
			}
			if !strings.HasPrefix(err.Error(), "f.yaml:") {
				t.Fatalf("error without the file name: %v", err)
			}
			return
		}
		if diff := cmp.Diff(got, again); diff != "" {
			t.Fatalf("not deterministic:\n%s", diff)
		}
		if err := Validate(got); err != nil {
			t.Fatalf("Parse accepted what Validate refuses: %v\n%q", err, data)
		}
	})
}
