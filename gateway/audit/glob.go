package audit

import (
	"strings"
	"unicode/utf8"
)

// Filter.Tool globs have SQLite's GLOB semantics. The SQLite store hands
// them to GLOB; a store without GLOB narrows its rows with the LIKE pattern
// globLike returns (a superset) and keeps those globMatch accepts.

// globMatch reports whether s matches pattern as SQLite's GLOB does: * any
// run of characters, ? one character, [...] one character of a set (with
// ranges a-z, ^ first to invert, ] first to include ]), everything else
// itself, case-sensitively. A set without its closing ] matches nothing.
func globMatch(pattern, s string) bool {
	px, sx := 0, 0
	// Where to resume after a mismatch: the last * and the text after the
	// characters it has taken so far.
	starPx, starSx := -1, -1
	for px < len(pattern) || sx < len(s) {
		if px < len(pattern) {
			switch pattern[px] {
			case '*':
				starPx, starSx = px, sx
				px++
				continue
			case '?':
				if sx < len(s) {
					_, n := utf8.DecodeRuneInString(s[sx:])
					px++
					sx += n
					continue
				}
			case '[':
				end := globSetEnd(pattern[px:])
				if end < 0 {
					return false
				}
				if sx < len(s) {
					r, n := utf8.DecodeRuneInString(s[sx:])
					if globSetHas(pattern[px:px+end], r) {
						px += end
						sx += n
						continue
					}
				}
			default:
				if sx < len(s) {
					_, pn := utf8.DecodeRuneInString(pattern[px:])
					_, n := utf8.DecodeRuneInString(s[sx:])
					if pattern[px:px+pn] == s[sx:sx+n] {
						px += pn
						sx += n
						continue
					}
				}
			}
		}
		// Mismatch: let the last * take one more character, if any is left.
		if starPx >= 0 && starSx < len(s) {
			_, n := utf8.DecodeRuneInString(s[starSx:])
			starSx += n
			px, sx = starPx+1, starSx
			continue
		}
		return false
	}
	return true
}

// globSetEnd returns the length of the set that set starts with ('['
// through the closing ']'), or -1 when it is not closed.
func globSetEnd(set string) int {
	i := 1
	if i < len(set) && set[i] == '^' {
		i++
	}
	if i < len(set) && set[i] == ']' {
		i++
	}
	if j := strings.IndexByte(set[i:], ']'); j >= 0 {
		return i + j + 1
	}
	return -1
}

// globSetHas reports whether the closed set ("[...]") matches r, as
// SQLite's patternCompare does.
func globSetHas(set string, r rune) bool {
	body := set[1 : len(set)-1]
	invert := false
	if strings.HasPrefix(body, "^") {
		invert, body = true, body[1:]
	}
	seen := false
	if strings.HasPrefix(body, "]") {
		seen, body = r == ']', body[1:]
	}
	prior := rune(-1)
	for i := 0; i < len(body); {
		c, n := utf8.DecodeRuneInString(body[i:])
		if c == '-' && prior >= 0 && i+n < len(body) {
			hi, hn := utf8.DecodeRuneInString(body[i+n:])
			if prior <= r && r <= hi {
				seen = true
			}
			prior = -1
			i += n + hn
			continue
		}
		if c == r {
			seen = true
		}
		prior = c
		i += n
	}
	return seen != invert
}

// globLike returns a LIKE pattern (escape character \) that matches every
// string pattern matches as a glob, and maybe more: * ? and sets become %,
// other characters stand for themselves.
func globLike(pattern string) string {
	var b strings.Builder
	pct := false // b ends with an unescaped %
	wild := func() {
		if !pct {
			b.WriteByte('%')
			pct = true
		}
	}
	for i := 0; i < len(pattern); {
		switch c := pattern[i]; c {
		case '*', '?':
			wild()
			i++
		case '[':
			wild()
			end := globSetEnd(pattern[i:])
			if end < 0 {
				return b.String()
			}
			i += end
		case '%', '_', '\\':
			b.WriteByte('\\')
			b.WriteByte(c)
			pct = false
			i++
		default:
			b.WriteByte(c)
			pct = false
			i++
		}
	}
	return b.String()
}
