package smallmap

import (
	"math/rand/v2"
	"testing"
)

// entry is a value that carries its key, as a request carries its id.
type entry struct {
	key int
	val int
}

func (e *entry) Key() int { return e.key }

// TestMatchesAGoMap: any sequence of puts and deletes leaves the Map
// holding what a Go map holds after the same sequence: the same Len, the
// same Get for every key, the same values from All.
func TestMatchesAGoMap(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for round := 0; round < 200; round++ {
		var m Map[int, *entry]
		want := map[int]*entry{}
		for op := 0; op < 50; op++ {
			k := r.IntN(4) // few keys, so puts and deletes meet
			if r.IntN(3) == 0 {
				m.Delete(k)
				delete(want, k)
			} else {
				e := &entry{key: k, val: r.Int()}
				m.Put(e)
				want[k] = e
			}
			if m.Len() != len(want) {
				t.Fatalf("round %d op %d: Len %d, want %d", round, op, m.Len(), len(want))
			}
			for k := range 4 {
				got, ok := m.Get(k)
				w, wok := want[k]
				if ok != wok || got != w {
					t.Fatalf("round %d op %d: Get(%d) = %v, %v; want %v, %v", round, op, k, got, ok, w, wok)
				}
			}
			seen := map[int]*entry{}
			for k, v := range m.All() {
				if _, dup := seen[k]; dup {
					t.Fatalf("All yields key %d twice", k)
				}
				if v.key != k {
					t.Fatalf("All yields key %d with the value of key %d", k, v.key)
				}
				seen[k] = v
			}
			if len(seen) != len(want) {
				t.Fatalf("All yields %d values, want %d", len(seen), len(want))
			}
			for k, v := range want {
				if seen[k] != v {
					t.Fatalf("All yields %v for key %d, want %v", seen[k], k, v)
				}
			}
		}
	}
}

// TestOneAtATimeAllocatesNothing: values put and deleted one at a time
// never make a Go map, even after a time with two at once, since the map
// made then is dropped when it empties.
func TestOneAtATimeAllocatesNothing(t *testing.T) {
	var m Map[int, *entry]
	a, b, c := &entry{key: 1}, &entry{key: 2}, &entry{key: 3}
	m.Put(a)
	m.Put(b) // two at once: a Go map for the second
	m.Delete(2)
	m.Delete(1)
	if m.more != nil {
		t.Fatal("the Go map is kept after it emptied")
	}
	allocs := testing.AllocsPerRun(100, func() {
		m.Put(c)
		m.Delete(3)
	})
	if allocs != 0 {
		t.Errorf("a put and delete allocate %v times, want 0", allocs)
	}
	if m.Len() != 0 {
		t.Errorf("Len %d after every value was deleted", m.Len())
	}
}

// TestDeleteReleasesTheValue: a deleted value held in place is no longer
// referenced, so it can be collected.
func TestDeleteReleasesTheValue(t *testing.T) {
	var m Map[int, *entry]
	m.Put(&entry{key: 1})
	m.Delete(1)
	if m.one != nil {
		t.Errorf("after Delete the map still holds %v", m.one)
	}
}

// TestAllStopsEarly: All stops when the loop breaks, in place or in the
// Go map.
func TestAllStopsEarly(t *testing.T) {
	var m Map[int, *entry]
	for k := range 5 {
		m.Put(&entry{key: k})
	}
	n := 0
	for range m.All() {
		n++
		if n == 2 {
			break
		}
	}
	if n != 2 {
		t.Errorf("ranged %d values after a break at 2", n)
	}
}
