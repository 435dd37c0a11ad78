// Package jsontest holds reference answers about JSON text that fuzz tests
// compare the tree's hand-written scanners and decoders against: written
// the plain way, so that a disagreement points at the fast code.
package jsontest

// Depth is how deep objects and arrays nest in JSON text: the deepest
// nesting of brackets outside strings. It expects text that scans as JSON
// (escapes inside strings are skipped, nothing is validated).
func Depth(text []byte) int {
	depth, deepest, inString := 0, 0, false
	for i := 0; i < len(text); i++ {
		switch c := text[i]; {
		case inString && c == '\\':
			i++
		case c == '"':
			inString = !inString
		case inString:
		case c == '{' || c == '[':
			depth++
			deepest = max(deepest, depth)
		case c == '}' || c == ']':
			depth--
		}
	}
	return deepest
}
