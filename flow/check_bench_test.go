package flow_test

import (
	"path/filepath"
	"testing"

	"github.com/toolwire/toolwire/flow"
)

// BenchmarkCheckExamples loads (parses and statically checks, results
// typed and narrowed) every manifest of examples/flows once per iteration.
func BenchmarkCheckExamples(b *testing.B) {
	paths, err := filepath.Glob(filepath.Join("..", "examples", "flows", "*.flow.yaml"))
	if err != nil || len(paths) == 0 {
		b.Fatalf("no examples (%v)", err)
	}
	for b.Loop() {
		for _, p := range paths {
			if _, err := flow.Load(p); err != nil {
				b.Fatal(err)
			}
		}
	}
}
