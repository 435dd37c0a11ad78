package jsontest

import (
	"bytes"
	"encoding/json"
	"strings"
)

// String is s as a JSON string the way encoding/json writes it without
// HTML escaping (invalid UTF-8 as U+FFFD, U+2028 and U+2029 escaped): the
// reference the hand-written JSON string writers are held to.
func String(s string) string {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(s); err != nil {
		panic(err) // not reached: a Go string always encodes
	}
	return strings.TrimSuffix(buf.String(), "\n")
}
