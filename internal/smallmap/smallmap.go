// Package smallmap is a table for values that are nearly always one or
// none at a time, such as a session's requests in flight: the first value
// is held in place and a Go map is made only for a second one at once, and
// dropped when it empties. A session that serves its requests one at a
// time then keeps no map at all, and serving them allocates none.
package smallmap

import "iter"

// Keyed is a value that carries its own key, such as a pointer to a
// request that knows its id.
type Keyed[K comparable] interface {
	comparable
	Key() K
}

// Map holds values by their keys. The zero value is empty and ready to
// use. It is not safe for concurrent use: its owner locks around it.
type Map[K comparable, V Keyed[K]] struct {
	one  V       // a value held in place; the zero V when there is none
	more map[K]V // the values besides it; nil when there are none
}

// Get returns the value held for k, and whether there is one.
func (m *Map[K, V]) Get(k K) (V, bool) {
	var zero V
	if m.one != zero && m.one.Key() == k {
		return m.one, true
	}
	v, ok := m.more[k]
	return v, ok
}

// Put holds v for its key, in place of the value held for that key if
// there is one. v must not be the zero V.
func (m *Map[K, V]) Put(v V) {
	var zero V
	k := v.Key()
	switch {
	case m.one != zero && m.one.Key() == k:
		m.one = v
	case m.one == zero && !m.inMore(k):
		m.one = v
	default:
		if m.more == nil {
			m.more = make(map[K]V, 1)
		}
		m.more[k] = v
	}
}

func (m *Map[K, V]) inMore(k K) bool {
	_, ok := m.more[k]
	return ok
}

// Delete drops the value held for k, if there is one.
func (m *Map[K, V]) Delete(k K) {
	var zero V
	if m.one != zero && m.one.Key() == k {
		m.one = zero
		return
	}
	if m.more == nil {
		return
	}
	delete(m.more, k)
	if len(m.more) == 0 {
		m.more = nil
	}
}

// Len is the number of values held.
func (m *Map[K, V]) Len() int {
	var zero V
	n := len(m.more)
	if m.one != zero {
		n++
	}
	return n
}

// All yields every value with its key, the one held in place first, the
// others in no particular order. The map must not change while it is
// ranged over.
func (m *Map[K, V]) All() iter.Seq2[K, V] {
	return func(yield func(K, V) bool) {
		var zero V
		if m.one != zero && !yield(m.one.Key(), m.one) {
			return
		}
		for k, v := range m.more {
			if !yield(k, v) {
				return
			}
		}
	}
}
