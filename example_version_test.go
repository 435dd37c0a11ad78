package toolwire_test

import (
	"fmt"
	"strings"

	"github.com/toolwire/toolwire"
)

// The module's version, as `toolwire version` prints it: a tag for a
// release, a pseudo-version for a build from a commit, "(devel)" when
// nothing says.
func ExampleVersion() {
	v := toolwire.Version()
	fmt.Println(v != "" && (strings.HasPrefix(v, "v") || v == "(devel)"))
	// Output: true
}
