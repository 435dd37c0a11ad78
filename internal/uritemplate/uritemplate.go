// Package uritemplate matches URIs against RFC 6570 URI templates in linear
// time and expands templates.
//
// Templates are parsed and validated by github.com/yosida95/uritemplate/v3,
// whose Regexp gives one capture group per expression. Matching runs that
// expression through Go's regexp package (RE2: time linear in the input, no
// backtracking), then splits each captured expression into its variables
// with plain string operations. A backtracking matcher (the cause of a ReDoS
// in another MCP SDK, whose templates such as "x://{a}{b}{c}" made it try
// every split of a long input) is never used. Callers should still bound
// the length of the URIs they match: the cost is linear, not constant.
//
// Expansion is this package's own: yosida95/uritemplate v3.0.2
// percent-encodes a character's code point rather than its UTF-8 octets
// ("é" becomes "%E9", not "%C3%A9" as RFC 6570 section 1.6 requires) and
// refuses values that are not valid UTF-8.
package uritemplate

import (
	"fmt"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"

	yt "github.com/yosida95/uritemplate/v3"
)

// Template is a parsed URI template. It is safe for concurrent use.
type Template struct {
	raw   string
	re    *regexp.Regexp
	parts []part // literals and expressions, in order
	names []string
}

// part is a literal (expr nil) or an expression.
type part struct {
	literal string
	expr    *expression
}

type expression struct {
	op       byte // 0 for a simple expression
	first    string
	sep      string
	named    bool
	ifemp    string
	reserved bool // + and #: reserved characters pass unencoded
	vars     []varspec
}

type varspec struct {
	name    string
	maxlen  int
	explode bool
}

// Parse parses an RFC 6570 template (levels 1 to 4). A template that names
// a variable twice ("{a}/{a}", "{a,a}") is refused: a linear-time match
// cannot check that both places agree, and expanding what it matched could
// give a URI the template does not match.
func Parse(s string) (t *Template, err error) {
	parsed, err := yt.New(s)
	if err != nil {
		return nil, err
	}
	defer func() {
		// Regexp compiles with MustCompile: a template RE2 refuses (more
		// than 1000 variables in one expression) is an error here.
		if p := recover(); p != nil {
			t, err = nil, fmt.Errorf("uritemplate: template too complex: %v", p)
		}
	}()
	re := parsed.Regexp()
	parts, err := split(s)
	if err != nil {
		return nil, err
	}
	t = &Template{raw: s, re: re, parts: parts}
	seen := map[string]bool{}
	exprs := 0
	for _, p := range parts {
		if p.expr == nil {
			continue
		}
		exprs++
		for _, v := range p.expr.vars {
			if seen[v.name] {
				return nil, fmt.Errorf("uritemplate: %q: variable %q appears more than once", s, v.name)
			}
			seen[v.name] = true
			t.names = append(t.names, v.name)
		}
	}
	if re.NumSubexp() != exprs {
		return nil, fmt.Errorf("uritemplate: %q: %d expressions but %d groups", s, exprs, re.NumSubexp())
	}
	return t, nil
}

// split cuts an already validated template into literals and expressions.
func split(s string) ([]part, error) {
	var parts []part
	for s != "" {
		i := strings.IndexByte(s, '{')
		if i < 0 {
			parts = append(parts, part{literal: s})
			break
		}
		if i > 0 {
			parts = append(parts, part{literal: s[:i]})
		}
		j := strings.IndexByte(s[i:], '}')
		if j < 0 {
			return nil, fmt.Errorf("uritemplate: unclosed expression")
		}
		e, err := parseExpression(s[i+1 : i+j])
		if err != nil {
			return nil, err
		}
		parts = append(parts, part{expr: e})
		s = s[i+j+1:]
	}
	return parts, nil
}

func parseExpression(body string) (*expression, error) {
	e := &expression{sep: ","}
	if body != "" && strings.IndexByte("+#./;?&", body[0]) >= 0 {
		e.op = body[0]
		body = body[1:]
	}
	switch e.op {
	case '+':
		e.reserved = true
	case '#':
		e.first, e.reserved = "#", true
	case '.':
		e.first, e.sep = ".", "."
	case '/':
		e.first, e.sep = "/", "/"
	case ';':
		e.first, e.sep, e.named = ";", ";", true
	case '?':
		e.first, e.sep, e.named, e.ifemp = "?", "&", true, "="
	case '&':
		e.first, e.sep, e.named, e.ifemp = "&", "&", true, "="
	}
	for _, spec := range strings.Split(body, ",") {
		v := varspec{name: spec}
		if n, ok := strings.CutSuffix(spec, "*"); ok {
			v.name, v.explode = n, true
		} else if n, l, ok := strings.Cut(spec, ":"); ok {
			maxlen, err := strconv.Atoi(l)
			if err != nil {
				return nil, fmt.Errorf("uritemplate: bad prefix modifier %q", spec)
			}
			v.name, v.maxlen = n, maxlen
		}
		if v.name == "" {
			return nil, fmt.Errorf("uritemplate: empty variable name")
		}
		e.vars = append(e.vars, v)
	}
	return e, nil
}

// Raw returns the template as parsed.
func (t *Template) Raw() string { return t.raw }

// Varnames returns the template's variable names in order of first use.
func (t *Template) Varnames() []string { return append([]string(nil), t.names...) }

// Has reports whether the template uses the variable name.
func (t *Template) Has(name string) bool {
	for _, n := range t.names {
		if n == name {
			return true
		}
	}
	return false
}

// Match reports whether uri is an expansion of the template and, if so,
// the values of the variables it defines, percent-decoded. The rules where
// RFC 6570 leaves a choice:
//   - a variable the expansion leaves out is absent from the map;
//   - an expression of several variables ({a,b}, {/a,b}) is split at its
//     separator, in order, the last variable taking what remains;
//   - a named expression ({?q,lang}, {;x}) matches only the names it
//     declares, each at most once; an exploded one ({?list*}) may repeat,
//     its values joined with ",";
//   - an exploded variable ({/path*}) takes its members as one value,
//     separators included ("a/b/c");
//   - a value longer than a prefix modifier allows ({id:3}) does not match.
//
// Match takes time linear in len(uri).
func (t *Template) Match(uri string) (map[string]string, bool) {
	m := t.re.FindStringSubmatchIndex(uri)
	if m == nil {
		return nil, false
	}
	vars := map[string]string{}
	g := 1
	for _, p := range t.parts {
		if p.expr == nil {
			continue
		}
		lo, hi := m[2*g], m[2*g+1]
		g++
		if lo < 0 {
			continue
		}
		if !p.expr.decompose(uri[lo:hi], vars) {
			return nil, false
		}
	}
	return vars, true
}

// decompose assigns an expression's captured text to its variables.
func (e *expression) decompose(text string, vars map[string]string) bool {
	if !e.named {
		pieces := []string{text}
		if len(e.vars) > 1 {
			pieces = strings.SplitN(text, e.sep, len(e.vars))
		}
		for i, p := range pieces {
			if !set(vars, e.vars[i], p, false) {
				return false
			}
		}
		return true
	}
	seen := make(map[string]bool, len(e.vars))
	for _, p := range strings.Split(text, e.sep) {
		name, val, _ := strings.Cut(p, "=")
		i := e.index(name)
		if i < 0 {
			return false
		}
		v := e.vars[i]
		if seen[name] && !v.explode {
			return false
		}
		if !set(vars, v, val, seen[name]) {
			return false
		}
		seen[name] = true
	}
	return true
}

func (e *expression) index(name string) int {
	for i, v := range e.vars {
		if v.name == name {
			return i
		}
	}
	return -1
}

// set decodes a value and records it; appending joins it to the value the
// variable already has in this expression.
func set(vars map[string]string, v varspec, raw string, appending bool) bool {
	val, err := url.PathUnescape(raw)
	if err != nil {
		return false
	}
	if appending {
		vars[v.name] += "," + val
		return true
	}
	if v.maxlen > 0 && utf8.RuneCountInString(val) > v.maxlen {
		return false
	}
	vars[v.name] = val
	return true
}

// Expand writes the template with vars substituted (RFC 6570 section 3.2);
// a variable missing from vars is undefined and left out. Values are
// percent-encoded as UTF-8 octets: every byte but the unreserved characters
// (and, for {+x} and {#x}, the reserved ones) is encoded, '%' included, so
// Match(Expand(vars)) gives vars back for an unambiguous template.
func (t *Template) Expand(vars map[string]string) string {
	var b strings.Builder
	for _, p := range t.parts {
		if p.expr == nil {
			b.WriteString(p.literal)
			continue
		}
		e := p.expr
		first := true
		for _, v := range e.vars {
			val, ok := vars[v.name]
			if !ok {
				continue
			}
			if first {
				b.WriteString(e.first)
				first = false
			} else {
				b.WriteString(e.sep)
			}
			if e.named {
				b.WriteString(v.name)
				if val == "" {
					b.WriteString(e.ifemp)
					continue
				}
				b.WriteByte('=')
			}
			if v.maxlen > 0 {
				val = prefix(val, v.maxlen)
			}
			escape(&b, val, e.reserved)
		}
	}
	return b.String()
}

// prefix returns the first n characters of s.
func prefix(s string, n int) string {
	for i := range s {
		if n == 0 {
			return s[:i]
		}
		n--
	}
	return s
}

const hexDigits = "0123456789ABCDEF"

func escape(b *strings.Builder, s string, reserved bool) {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if unreserved(c) || reserved && strings.IndexByte(":/?#[]@!$&'()*+,;=", c) >= 0 {
			b.WriteByte(c)
			continue
		}
		b.WriteByte('%')
		b.WriteByte(hexDigits[c>>4])
		b.WriteByte(hexDigits[c&15])
	}
}

func unreserved(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' ||
		c == '-' || c == '.' || c == '_' || c == '~'
}
