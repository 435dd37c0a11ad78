package wirejson

import (
	"math"
	"runtime"
	"testing"
)

// metaLike decodes as mcp.Meta does: a generic tree, numbers exact.
type metaLike map[string]any

func (m *metaLike) UnmarshalJSON(data []byte) error {
	var v map[string]any
	if err := UnmarshalUseNumber(data, &v); err != nil {
		return err
	}
	*m = v
	return nil
}

var discardSeeds = []string{
	`{}`, `{"_meta":null}`, `{"_meta":{}}`, `{"_meta":{"a":{"b":1,"b":2}}}`, `{"_meta":{"a":1,"a":2}}`,
	"{\"_meta\":{\"a\":\"\xff\"}}", `{"_meta":[1,{"x":1,"x":1}]}`, `{"_meta":5}`, `{"_meta":"s"}`, `{"_meta":true}`,
	`{"_meta":{"a":tru}}`, `{"_META":{}}`, `{"cursor":"x","_meta":{"a":[1,2}}`, `{"_meta":x}`, `{"_meta":{"a":"\ud800"}}`,
	`{"_meta":{"progressToken":1,"big":[1,2,3,{"deep":[[[]]]}]},"cursor":"c"}`, `{"_meta":{},"_meta":{}}`, `{"_meta":`,
}

// compareDiscard checks that a DiscardObject member refuses what a generic
// member (mcp.Meta) refuses, with the same error, and accepts the rest.
func compareDiscard(t *testing.T, data []byte) {
	t.Helper()
	var tree struct {
		Cursor string   `json:"cursor,omitempty"`
		Meta   metaLike `json:"_meta"`
	}
	var discard struct {
		Cursor string        `json:"cursor,omitempty"`
		Meta   DiscardObject `json:"_meta"`
	}
	werr := Unmarshal(data, &tree)
	gerr := Unmarshal(data, &discard)
	if (gerr == nil) != (werr == nil) || gerr != nil && gerr.Error() != werr.Error() {
		t.Fatalf("%q: DiscardObject: %v; a generic member: %v", data, gerr, werr)
	}
	if gerr == nil && discard.Cursor != tree.Cursor {
		t.Fatalf("%q: cursor %q, want %q", data, discard.Cursor, tree.Cursor)
	}
}

// FuzzDiscardObject compares a DiscardObject member with a generic one:
// the same input refused with the same error. go test runs it over
// discardSeeds.
func FuzzDiscardObject(f *testing.F) {
	for _, s := range discardSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		compareDiscard(t, data)
	})
}

// A discarded member costs no memory for its content: the bytes allocated
// reading a _meta of 100000 numbers (200 KB; a tree of them would take some
// 5 MB) are those for one number, give or take a few hundred bytes.
func TestDiscardObjectAllocatesNothingForItsContent(t *testing.T) {
	small := []byte(`{"cursor":"c","_meta":{"a":[1]}}`)
	big := []byte(`{"cursor":"c","_meta":{"a":[` + repeatInts(100000) + `]}}`)
	var v struct {
		Cursor string        `json:"cursor"`
		Meta   DiscardObject `json:"_meta"`
	}
	// The fewest bytes of 20 runs: pooled buffers the decoder reuses are
	// sometimes dropped (always possible, frequent under -race), which adds
	// a buffer's worth to a run without saying anything about the content.
	allocated := func(data []byte) uint64 {
		_ = Unmarshal(data, &v) // warm-up
		least := uint64(math.MaxUint64)
		for range 20 {
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			_ = Unmarshal(data, &v)
			runtime.ReadMemStats(&after)
			least = min(least, after.TotalAlloc-before.TotalAlloc)
		}
		return least
	}
	if a, b := allocated(small), allocated(big); b > a+512 {
		t.Errorf("%d bytes allocated for a _meta of 100000 numbers, %d for one", b, a)
	}
}

func repeatInts(n int) string {
	b := make([]byte, 0, 2*n)
	for i := range n {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, byte('0'+i%10))
	}
	return string(b)
}
