package policy

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Glob is a compiled name pattern: `*` matches any run of characters
// (including none, and including '/' and '.', so "github.*" covers every
// tool of an upstream and "file:///docs/*" every resource below a path),
// `?` matches exactly one character, and every other character matches
// itself. The characters [ ] { } \ are reserved: they are refused rather
// than taken literally, so a pattern written for a richer glob syntax
// fails loudly instead of silently matching nothing.
type Glob struct {
	pattern string
	// parts are the pattern split at '*': parts[0] must match at the
	// start, the last part at the end, the others in order in between.
	parts []string
	star  bool // the pattern contains at least one '*'
}

// CompileGlob compiles pattern, or says why it is not a valid glob.
func CompileGlob(pattern string) (*Glob, error) {
	if pattern == "" {
		return nil, fmt.Errorf("empty pattern")
	}
	if !utf8.ValidString(pattern) {
		return nil, fmt.Errorf("pattern %q is not valid UTF-8", pattern)
	}
	for i, r := range pattern {
		switch {
		case strings.ContainsRune(`[]{}\`, r):
			return nil, fmt.Errorf("pattern %q: %q at offset %d is reserved (only * and ? are special)", pattern, r, i)
		case unicode.IsControl(r):
			return nil, fmt.Errorf("pattern %q: control character %U at offset %d", pattern, r, i)
		}
	}
	g := &Glob{pattern: pattern, parts: strings.Split(pattern, "*")}
	g.star = len(g.parts) > 1
	return g, nil
}

// String is the pattern as written.
func (g *Glob) String() string { return g.pattern }

// Match reports whether name matches the whole pattern. It runs in
// O(len(pattern)·len(name)) at worst, without backtracking blow-up.
func (g *Glob) Match(name string) bool {
	if !g.star {
		return matchPrefix(g.parts[0], name) == len(name)
	}
	first, last := g.parts[0], g.parts[len(g.parts)-1]
	n := matchPrefix(first, name)
	if n < 0 {
		return false
	}
	name = name[n:]
	// Each middle part is matched at its leftmost position: leftmost is
	// always safe, since anything that fits after a later position also
	// fits after an earlier one (the next part is preceded by a '*').
	for _, p := range g.parts[1 : len(g.parts)-1] {
		end := find(p, name)
		if end < 0 {
			return false
		}
		name = name[end:]
	}
	return matchSuffix(last, name)
}

// matchPrefix matches p (no '*') against the start of s and returns the
// number of bytes consumed, or -1.
func matchPrefix(p, s string) int {
	i := 0
	for j, pr := range p {
		if i >= len(s) {
			return -1
		}
		if pr == '?' {
			_, w := utf8.DecodeRuneInString(s[i:])
			i += w
			continue
		}
		// Literals compare as bytes, so an invalid byte in a name
		// never equals U+FFFD in a pattern.
		w := utf8.RuneLen(pr)
		if !strings.HasPrefix(s[i:], p[j:j+w]) {
			return -1
		}
		i += w
	}
	return i
}

// find returns the end of the leftmost match of p in s, or -1.
func find(p, s string) int {
	for i := 0; i <= len(s); {
		if n := matchPrefix(p, s[i:]); n >= 0 {
			return i + n
		}
		if i == len(s) {
			break
		}
		_, w := utf8.DecodeRuneInString(s[i:])
		i += w
	}
	return -1
}

// matchSuffix reports whether p (no '*') matches some suffix of s, which
// is all that the final part after a '*' must do. '?' counts characters,
// so the suffix is found by counting characters back from the end.
func matchSuffix(p, s string) bool {
	want := utf8.RuneCountInString(p)
	i := len(s)
	for k := 0; k < want; k++ {
		if i == 0 {
			return false
		}
		_, w := utf8.DecodeLastRuneInString(s[:i])
		i -= w
	}
	return matchPrefix(p, s[i:]) == len(s)-i
}
