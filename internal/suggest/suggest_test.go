package suggest

import (
	"slices"
	"strings"
	"testing"
)

func TestDistance(t *testing.T) {
	for _, c := range []struct {
		a, b string
		want int
	}{
		{"", "", 0},
		{"abc", "", 3},
		{"", "abc", 3},
		{"command", "comand", 1},
		{"kitten", "sitting", 3},
		{"separator", "seperator", 1},
		{"héllo", "hello", 1}, // runes, not bytes
		{strings.Repeat("a", 65), "a", 64},
		{"a", strings.Repeat("a", 100), 64},
	} {
		if got := Distance(c.a, c.b); got != c.want {
			t.Errorf("Distance(%q, %q) = %d, want %d", c.a, c.b, got, c.want)
		}
		if got := Distance(c.b, c.a); got != c.want {
			t.Errorf("Distance(%q, %q) = %d, want %d (not symmetric)", c.b, c.a, got, c.want)
		}
	}
}

func TestNearest(t *testing.T) {
	known := []string{"command", "url", "headers", "timeout", "max_message_size"}
	for _, c := range []struct {
		want, got string
		ok        bool
	}{
		{"comand", "command", true},
		{"timeot", "timeout", true},
		{"urls", "url", true},
		{"colour", "", false},
		{"x", "", false}, // a one-letter key is near everything short: no guess
		{"max_mesage_siz", "max_message_size", true},
	} {
		got, ok := Nearest(c.want, known)
		if got != c.got || ok != c.ok {
			t.Errorf("Nearest(%q) = %q, %v; want %q, %v", c.want, got, ok, c.got, c.ok)
		}
	}
}

func TestClosest(t *testing.T) {
	names := []string{"get-sum", "get-tiny-image", "echo", "get-structured-content", "safe_divide"}
	if got := Closest("get-sun", names, 3); len(got) == 0 || got[0] != "get-sum" {
		t.Errorf("Closest(get-sun) = %v", got)
	}
	if got := Closest("ech", names, 3); len(got) == 0 || got[0] != "echo" {
		t.Errorf("Closest(ech) = %v", got)
	}
	if got := Closest("zzzzzzzz", names, 3); len(got) != 0 {
		t.Errorf("Closest(zzzzzzzz) = %v", got)
	}
	if got := Closest("GET", names, 2); !slices.Equal(got, []string{"get-structured-content", "get-sum"}) {
		t.Errorf("Closest(GET, 2) = %v", got)
	}
}
