// Package suggest finds the names a mistyped one was probably meant to be,
// for the "did you mean" of the config file, flows and the command line.
package suggest

import (
	"sort"
	"strings"
)

// Nearest is the name in names a typo away from want (an edit distance of
// at most 2, and less than want's length), the first of the closest.
func Nearest(want string, names []string) (string, bool) {
	best, bestD := "", 3
	for _, name := range names {
		if d := Distance(want, name); d < bestD && d < len([]rune(want)) {
			best, bestD = name, d
		}
	}
	return best, best != ""
}

// maxDistanceRunes bounds the strings Distance compares: its time grows
// with the product of their lengths.
const maxDistanceRunes = 64

// Distance is the edit (Levenshtein) distance between a and b, in runes;
// strings longer than 64 runes are that far from everything.
func Distance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	if len(ra) > maxDistanceRunes || len(rb) > maxDistanceRunes {
		return maxDistanceRunes
	}
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(rb)]
}

// Closest returns the names nearest to want by edit distance, best first.
func Closest(want string, names []string, n int) []string {
	type cand struct {
		name string
		d    int
	}
	var cs []cand
	lw := strings.ToLower(want)
	for _, name := range names {
		d := Distance(lw, strings.ToLower(name))
		if strings.Contains(strings.ToLower(name), lw) || strings.Contains(lw, strings.ToLower(name)) {
			d = min(d, 1)
		}
		if d <= max(2, len(want)/3) {
			cs = append(cs, cand{name, d})
		}
	}
	sort.SliceStable(cs, func(i, j int) bool {
		if cs[i].d != cs[j].d {
			return cs[i].d < cs[j].d
		}
		return cs[i].name < cs[j].name
	})
	var out []string
	for i := 0; i < len(cs) && i < n; i++ {
		out = append(out, cs[i].name)
	}
	return out
}
