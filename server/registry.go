package server

import (
	"slices"
	"sort"

	"github.com/toolwire/toolwire/jsonrpc"
)

// sortedSet holds entries by name with the names kept in order: the
// deterministic order of a list result, whose cursors name the last entry
// of a page so that a page boundary stays put when entries come and go
// elsewhere. It does no locking: its owner does.
type sortedSet[T any] struct {
	by    map[string]T
	names []string
}

// get returns the entry named name.
func (r *sortedSet[T]) get(name string) (T, bool) {
	v, ok := r.by[name]
	return v, ok
}

// add adds an entry, reporting false (and changing nothing) when the name
// is taken.
func (r *sortedSet[T]) add(name string, v T) bool {
	if _, dup := r.by[name]; dup {
		return false
	}
	if r.by == nil {
		r.by = map[string]T{}
	}
	r.by[name] = v
	i, _ := slices.BinarySearch(r.names, name)
	r.names = slices.Insert(r.names, i, name)
	return true
}

// remove removes an entry, reporting whether it was there.
func (r *sortedSet[T]) remove(name string) bool {
	if _, ok := r.by[name]; !ok {
		return false
	}
	delete(r.by, name)
	i, _ := slices.BinarySearch(r.names, name)
	r.names = slices.Delete(r.names, i, i+1)
	return true
}

// values returns every entry in name order.
func (r *sortedSet[T]) values() []T {
	out := make([]T, len(r.names))
	for i, n := range r.names {
		out[i] = r.by[n]
	}
	return out
}

// page returns the entries after a cursor's (all from the start for ""),
// at most size of those keep accepts (nil: all), and the cursor of the next
// page ("" for the last). A cursor that is not one of this list's (prefix)
// is -32602.
func (r *sortedSet[T]) page(prefix, cursor string, size int, keep func(string) bool) ([]T, string, *jsonrpc.Error) {
	names, next, err := page(r.names, prefix, cursor, size, keep)
	if err != nil {
		return nil, "", err
	}
	out := make([]T, len(names))
	for i, n := range names {
		out[i] = r.by[n]
	}
	return out, next, nil
}

// page returns the names of a sorted list after a cursor's, at most size
// of those keep accepts (nil: all), and the cursor of the next page (""
// for the last). With a filter, a page is followed by another only when
// some later name is kept, so the last page is never empty.
func page(sorted []string, prefix, cursor string, size int, keep func(string) bool) ([]string, string, *jsonrpc.Error) {
	start := 0
	if cursor != "" {
		after, ok := decodeCursor(prefix, cursor)
		if !ok {
			return nil, "", jsonrpc.NewError(jsonrpc.CodeInvalidParams, "invalid cursor %q: pass back a nextCursor this server returned", cursor)
		}
		start = sort.SearchStrings(sorted, after)
		if start < len(sorted) && sorted[start] == after {
			start++
		}
	}
	if keep == nil {
		end := min(start+size, len(sorted))
		next := ""
		if end < len(sorted) {
			next = encodeCursor(prefix, sorted[end-1])
		}
		return sorted[start:end], next, nil
	}
	var out []string
	for i := start; i < len(sorted); i++ {
		if !keep(sorted[i]) {
			continue
		}
		if len(out) == size {
			return out, encodeCursor(prefix, out[len(out)-1]), nil
		}
		out = append(out, sorted[i])
	}
	return out, "", nil
}
