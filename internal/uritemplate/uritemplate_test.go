package uritemplate

import (
	"maps"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestMatch(t *testing.T) {
	cases := []struct {
		tmpl, uri string
		want      map[string]string // nil: no match
	}{
		{"test://template/{id}/data", "test://template/123/data", map[string]string{"id": "123"}},
		{"test://template/{id}/data", "test://template/1%2F2/data", map[string]string{"id": "1/2"}},
		{"test://template/{id}/data", "test://template/1/2/data", nil},
		{"test://template/{id}/data", "test://other/1/data", nil},
		{"file:///{+path}", "file:///a/b/c.txt", map[string]string{"path": "a/b/c.txt"}},
		{"file:///{name}", "file:///caf%C3%A9", map[string]string{"name": "café"}},
		{"x://{a}/{b}", "x://1/", map[string]string{"a": "1", "b": ""}},
		{"x://{a,b}", "x://1,2", map[string]string{"a": "1", "b": "2"}},
		{"x://h{/seg,rest}", "x://h/a/b", map[string]string{"seg": "a", "rest": "b"}},
		{"x://h{/seg,rest}", "x://h/a/b/c", nil},
		{"x://h{/seg,rest*}", "x://h/a/b/c", map[string]string{"seg": "a", "rest": "b/c"}},
		{"x://h{/path*}", "x://h/a/b/c", map[string]string{"path": "a/b/c"}},
		{"x://s{?q,lang}", "x://s?q=go&lang=en", map[string]string{"q": "go", "lang": "en"}},
		{"x://s{?q,lang}", "x://s?lang=en", map[string]string{"lang": "en"}},
		{"x://s{?q,lang}", "x://s", map[string]string{}},
		{"x://s{?q,lang}", "x://s?other=1", nil},
		{"x://s{?q}", "x://s?q=1&q=2", nil},
		{"x://s{?q*}", "x://s?q=1&q=2", map[string]string{"q": "1,2"}},
		{"x://m{;x,y}", "x://m;x=1;y", map[string]string{"x": "1", "y": ""}},
		{"x://{id:3}", "x://abc", map[string]string{"id": "abc"}},
		{"x://{id:3}", "x://abcd", nil},
		{"x://d{#frag}", "x://d#sec/1", map[string]string{"frag": "sec/1"}},
		{"x://{a}.{b}", "x://f.txt", map[string]string{"a": "f", "b": "txt"}},
	}
	for _, c := range cases {
		tm, err := Parse(c.tmpl)
		if err != nil {
			t.Fatalf("%s: %v", c.tmpl, err)
		}
		got, ok := tm.Match(c.uri)
		if ok != (c.want != nil) || ok && !maps.Equal(got, c.want) {
			t.Errorf("Match(%q, %q) = %v, %v; want %v", c.tmpl, c.uri, got, ok, c.want)
		}
	}
}

func TestExpand(t *testing.T) {
	cases := []struct {
		tmpl string
		vars map[string]string
		want string
	}{
		{"x://{a}", map[string]string{"a": "café/1%"}, "x://caf%C3%A9%2F1%25"},
		{"x://{+a}", map[string]string{"a": "p/q?r"}, "x://p/q?r"},
		{"x://s{?q,lang}", map[string]string{"lang": "en"}, "x://s?lang=en"},
		{"x://s{?q,lang}", map[string]string{"q": ""}, "x://s?q="},
		{"x://m{;x}", map[string]string{"x": ""}, "x://m;x"},
		{"x://{id:3}", map[string]string{"id": "héllo"}, "x://h%C3%A9l"},
		{"x://h{/a,b}", map[string]string{"a": "1", "b": "2"}, "x://h/1/2"},
		// Undefined and empty expand alike; a simple expression matches
		// the empty string as empty.
		{"x://{a}", map[string]string{}, "x://"},
	}
	for _, c := range cases {
		tm, err := Parse(c.tmpl)
		if err != nil {
			t.Fatal(err)
		}
		if got := tm.Expand(c.vars); got != c.want {
			t.Errorf("Expand(%q, %v) = %q, want %q", c.tmpl, c.vars, got, c.want)
		}
		if got, ok := tm.Match(tm.Expand(c.vars)); !ok {
			t.Errorf("%q: expansion %q does not match", c.tmpl, tm.Expand(c.vars))
		} else if c.tmpl != "x://{id:3}" && len(c.vars) > 0 && !maps.Equal(got, c.vars) {
			t.Errorf("%q: Match(Expand(%v)) = %v", c.tmpl, c.vars, got)
		}
	}
}

func TestParseErrors(t *testing.T) {
	for _, s := range []string{"x://{a", "x://{}", "x://{a b}", "x://{a:x}", "x://}{", "x://{a}/{a}", "x://{a,a}", "{#0}{0}"} {
		if _, err := Parse(s); err == nil {
			t.Errorf("Parse(%q) succeeded", s)
		}
	}
	// More variables in one expression than RE2 repeats is an error, not a
	// panic.
	names := make([]string, 1100)
	for i := range names {
		names[i] = "v" + strings.Repeat("x", i%7) + string(rune('a'+i%26)) + itoa(i)
	}
	if _, err := Parse("x://{" + strings.Join(names, ",") + "}"); err == nil {
		t.Error("a 1100-variable expression parsed")
	}
	tm, err := Parse("x://{a}/{b}{?c}")
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(tm.Varnames(), ","); got != "a,b,c" || !tm.Has("c") || tm.Has("d") || tm.Raw() != "x://{a}/{b}{?c}" {
		t.Errorf("Varnames %s", got)
	}
}

func itoa(i int) string {
	if i == 0 {
		return "0"
	}
	var b []byte
	for ; i > 0; i /= 10 {
		b = append([]byte{byte('0' + i%10)}, b...)
	}
	return string(b)
}

// TestHostileURIIsLinear feeds a template of many adjacent variables a URI
// that makes a backtracking matcher try every split: about n^5/120
// (10^23 for n = 100,000) before failing. RE2 answers in one pass; the test
// would not finish otherwise. Results are checked, not time.
func TestHostileURIIsLinear(t *testing.T) {
	tm, err := Parse("x://{a}{b}{c}{d}{e}/{f}")
	if err != nil {
		t.Fatal(err)
	}
	long := strings.Repeat("a", 100_000)
	if _, ok := tm.Match("x://" + long + "!"); ok {
		t.Error("a URI with a character no variable takes matched")
	}
	if _, ok := tm.Match("x://" + long); ok {
		t.Error("a URI without the literal / matched")
	}
	got, ok := tm.Match("x://" + long + "/f")
	if !ok || got["a"] != long || got["b"] != "" || got["e"] != "" || got["f"] != "f" {
		t.Errorf("match: %v (a has %d bytes)", ok, len(got["a"]))
	}
}

func FuzzTemplateMatch(f *testing.F) {
	seeds := [][2]string{
		{"test://template/{id}/data", "test://template/123/data"},
		{"x://{a}{b}{c}{d}{e}/{f}", "x://aaaaaaaaaaaaaaaaaaaa/f"},
		{"file:///{+path}", "file:///a/b%20c"},
		{"x://s{?q,lang}", "x://s?q=go&lang=en"},
		{"x://s{?q*}", "x://s?q=1&q=2"},
		{"x://h{/seg,rest*}", "x://h/a/b/c"},
		{"x://{a}A{b}", "A%41"},
		{"x://{id:3}", "x://ab%C3%A9"},
		{"x://{a}/{a}", "x://1/1"},
		{"x://m{;x,y}{#f}", "x://m;x=1;y#z"},
		{"{.a,b}{&c}", ".x.y&c=%2C"},
	}
	for _, s := range seeds {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, tmpl, uri string) {
		tm, err := Parse(tmpl)
		if err != nil {
			return
		}
		vars, ok := tm.Match(uri)
		if !ok {
			return
		}
		for k, v := range vars {
			if !tm.Has(k) {
				t.Fatalf("Match(%q, %q) defined %q, not a variable of the template", tmpl, uri, k)
			}
			_ = utf8.ValidString(v)
		}
		// What was matched expands to a URI the template matches, and that
		// URI is stable: expanding its match gives it back.
		u2 := tm.Expand(vars)
		vars2, ok := tm.Match(u2)
		if !ok {
			t.Fatalf("Match(%q, %q) = %v, whose expansion %q does not match", tmpl, uri, vars, u2)
		}
		if u3 := tm.Expand(vars2); u3 != u2 {
			t.Fatalf("template %q, uri %q: expansion %q rematches as %v, expanding to %q", tmpl, uri, u2, vars2, u3)
		}
	})
}
