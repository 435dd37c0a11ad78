package server

import (
	"slices"
	"testing"
)

// A sorted set keeps names in order, refuses a taken name, and pages by
// cursors that name the last entry shown, so a page boundary holds when
// entries come and go before it.
func TestSortedSetPaging(t *testing.T) {
	var r sortedSet[int]
	for i, n := range []string{"d", "b", "a", "c", "e"} {
		if !r.add(n, i) {
			t.Fatalf("add %s refused", n)
		}
	}
	if r.add("c", 9) {
		t.Fatal("a taken name was added")
	}
	if got := r.names; !slices.Equal(got, []string{"a", "b", "c", "d", "e"}) {
		t.Fatalf("names %v", got)
	}
	first, next, err := r.page("x:", "", 2, nil)
	if err != nil || !slices.Equal(first, []int{2, 1}) || next == "" {
		t.Fatalf("first page %v %q %v", first, next, err)
	}
	r.remove("a") // before the boundary
	r.add("bb", 7)
	second, next2, err := r.page("x:", next, 2, nil)
	if err != nil || !slices.Equal(second, []int{7, 3}) || next2 == "" {
		t.Fatalf("second page %v %q %v", second, next2, err)
	}
	last, next3, err := r.page("x:", next2, 2, nil)
	if err != nil || !slices.Equal(last, []int{0, 4}) || next3 != "" {
		t.Fatalf("last page %v %q %v", last, next3, err)
	}
	if _, _, err := r.page("y:", next, 2, nil); err == nil {
		t.Fatal("a cursor of another list was taken")
	}
	if r.remove("zz") || !r.remove("bb") || r.remove("bb") {
		t.Fatal("remove reports wrongly")
	}
}
