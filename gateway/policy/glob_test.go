package policy

import (
	"path"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestGlobMatch(t *testing.T) {
	for _, c := range []struct {
		pattern, name string
		want          bool
	}{
		{"*", "", true},
		{"*", "anything/at.all", true},
		{"?", "", false},
		{"?", "a", true},
		{"?", "é", true}, // one character, two bytes
		{"?", "ab", false},
		{"??", "é", false},
		{"read_file", "read_file", true},
		{"read_file", "read_files", false},
		{"read_file", "pread_file", false},
		{"read_*", "read_", true},
		{"read_*", "read_file", true},
		{"read_*", "write_file", false},
		{"*_file", "read_file", true},
		{"*_file", "read_files", false},
		{"github.*", "github.create_issue", true},
		{"github.*", "github", false},
		{"*.delete_*", "github.delete_repo", true},
		{"*.delete_*", "github.deleterepo", false},
		{"a*b*c", "abc", true},
		{"a*b*c", "axxbyyc", true},
		{"a*b*c", "acb", false},
		{"a*b*c", "abcbc", true},
		{"a**b", "ab", true},
		{"*a*a*a*a*b", strings.Repeat("a", 200), false}, // no backtracking blow-up
		{"a?c", "abc", true},
		{"a?c", "ac", false},
		{"*?", "", false},
		{"*??", "x", false},
		{"*??", "xy", true},
		{"?*?", "é€", true},
		{"file:///docs/*", "file:///docs/a/b.md", true},
		{"file:///docs/*", "file:///etc/passwd", false},
		{"ab*", "a", false},
		{"*ab", "b", false},
		{"x*yx", "xyx", true},
		{"\uFFFD", "\xff", false}, // literals compare as bytes
		{"?", "\xff", true},       // '?' takes an invalid byte as one character
	} {
		g, err := CompileGlob(c.pattern)
		if err != nil {
			t.Fatalf("CompileGlob(%q): %v", c.pattern, err)
		}
		if got := g.Match(c.name); got != c.want {
			t.Errorf("%q.Match(%q) = %v, want %v", c.pattern, c.name, got, c.want)
		}
	}
}

func TestGlobInvalid(t *testing.T) {
	for _, p := range []string{"", "[abc]", "a]", "{a,b}", `a\*`, "a\x00", "a\nb", "\xff"} {
		if g, err := CompileGlob(p); err == nil {
			t.Errorf("CompileGlob(%q) = %v, want an error", p, g)
		}
	}
	_, err := CompileGlob("tool[1]")
	if err == nil || !strings.Contains(err.Error(), `"tool[1]"`) || !strings.Contains(err.Error(), "offset 4") {
		t.Errorf("error does not name the pattern and offset: %v", err)
	}
}

// globRegexp is a second oracle that, unlike path.Match, lets '*' cross
// '/': the glob as an anchored regular expression.
func globRegexp(pattern string) *regexp.Regexp {
	var b strings.Builder
	b.WriteString(`(?s)^`)
	for _, r := range pattern {
		switch r {
		case '*':
			b.WriteString(`.*`)
		case '?':
			b.WriteString(`.`)
		default:
			b.WriteString(regexp.QuoteMeta(string(r)))
		}
	}
	b.WriteString(`$`)
	return regexp.MustCompile(b.String())
}

// FuzzGlob checks that compiling and matching never panic, and that a
// compiled glob agrees with two oracles: path.Match, whose syntax is a
// superset of ours (the reserved characters aside) with the difference
// that its '*' and '?' never match '/', so it is consulted for names and
// patterns without '/'; and an equivalent regular expression, for valid
// UTF-8 names (regexp reads an invalid byte as U+FFFD, where a glob
// literal compares bytes).
func FuzzGlob(f *testing.F) {
	for _, s := range [][2]string{
		{"*", ""}, {"read_*", "read_file"}, {"*.delete_*", "gh.delete_repo"},
		{"a*b*c", "abcbc"}, {"?", "é"}, {"*??", "x"}, {"x*yx", "xyx"},
		{"file:///docs/*", "file:///docs/a"}, {"[a]", "a"}, {"?*?", "é€"},
		{"*a*a*b", "aaaaaaaaaaaaaaaa"}, {"?*??", "0€"}, {"\uFFFD", "\xff"}, {"a\\*", "a*"},
	} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, pattern, name string) {
		g, err := CompileGlob(pattern)
		if err != nil {
			return
		}
		got := g.Match(name)
		// path.Match is consulted on ASCII names only: after a '*' it tries
		// the rest at every byte offset, so a '?' can match the bytes of a
		// multi-byte character one by one ("?*??" matches "0€" there).
		if !strings.Contains(pattern, "/") && !strings.Contains(name, "/") && isASCII(name) {
			want, perr := path.Match(pattern, name)
			if perr == nil && got != want {
				t.Fatalf("%q.Match(%q) = %v, path.Match says %v", pattern, name, got, want)
			}
		}
		if utf8.ValidString(name) {
			if want := globRegexp(pattern).MatchString(name); got != want {
				t.Fatalf("%q.Match(%q) = %v, regexp says %v", pattern, name, got, want)
			}
		}
	})
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}
