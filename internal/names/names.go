// Package names holds the rule the gateway applies to a name it is given
// rather than one it lists: a tool, prompt or resource name in a request,
// and a tool name a configuration overrides. Names an upstream lists may
// be anything; a name that arrives from outside and is empty, or that
// holds control characters or surrounding space a reader may trim, matches
// no listed name anyone meant and is refused with the reason.
package names

import "strings"

// Problem says why name cannot stand for a catalog entry: it is empty,
// begins or ends with white space, or contains a control character.
// It returns "" for a name without any of these.
func Problem(name string) string {
	switch {
	case name == "":
		return "must not be empty"
	case strings.TrimSpace(name) != name:
		return "must not begin or end with white space"
	case strings.ContainsFunc(name, func(r rune) bool { return r < 0x20 || r == 0x7f }):
		return "must not contain control characters"
	}
	return ""
}
