package config

import (
	"fmt"
	"strings"
)

// expand replaces ${NAME} and ${NAME:-default} in s with values from
// lookup and $$ with $. Its result is never expanded or parsed again.
func expand(s string, lookup func(string) (string, bool)) (string, error) {
	if !strings.Contains(s, "$") {
		return s, nil
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		c := s[i]
		if c != '$' {
			b.WriteByte(c)
			i++
			continue
		}
		if i+1 < len(s) && s[i+1] == '$' {
			b.WriteByte('$')
			i += 2
			continue
		}
		if i+1 >= len(s) || s[i+1] != '{' {
			return "", fmt.Errorf("a $ not starting ${NAME}: write $$ for a literal $")
		}
		end := strings.IndexByte(s[i+2:], '}')
		if end < 0 {
			return "", fmt.Errorf("unterminated ${ (no closing })")
		}
		body := s[i+2 : i+2+end]
		i += 2 + end + 1
		name, def, hasDef := strings.Cut(body, ":-")
		if !validEnvName(name) {
			return "", fmt.Errorf("malformed ${%s}: want ${NAME} or ${NAME:-default}, NAME of letters, digits and _ not starting with a digit", body)
		}
		v, ok := lookup(name)
		switch {
		case hasDef && (!ok || v == ""):
			v = def
		case !ok:
			return "", fmt.Errorf("environment variable %s is not set (write ${%s:-default} for a default)", name, name)
		}
		b.WriteString(v)
	}
	return b.String(), nil
}

// validEnvName reports whether s is a portable environment variable name
// (POSIX: letters, digits and underscore, not starting with a digit).
func validEnvName(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '_', 'A' <= c && c <= 'Z', 'a' <= c && c <= 'z':
		case '0' <= c && c <= '9' && i > 0:
		default:
			return false
		}
	}
	return true
}
