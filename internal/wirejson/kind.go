package wirejson

import "github.com/go-json-experiment/json/jsontext"

// KindOf names the JSON type of the value v starts ("an object", "an
// array", "a string", "a number", "a boolean", "null"), for error messages
// that say what a member held instead of what it must hold; an empty v is
// "nothing".
func KindOf(v []byte) string {
	if len(v) == 0 {
		return "nothing"
	}
	return jsonKind(jsontext.Value(v).Kind())
}
