package jsonrpc

import "github.com/toolwire/toolwire/internal/jsonscan"

// envelope is a message's top-level members as slices of the input.
type envelope struct {
	jsonrpc, method           []byte // string contents, without quotes
	hasJSONRPC, hasMethod     bool
	id, params, result, error []byte // raw values; nil when absent
}

var envelopeMembers = []string{"jsonrpc", "method", "id", "params", "result", "error"}

// scanEnvelope reads the top-level object of a message without allocating.
// It handles the common, well-formed shape only; ok is false for anything
// else (invalid JSON, escaped names or values, repeated or case-folded
// members, very deep nesting), and the caller falls back to encoding/json,
// which then decides, so both paths accept and reject the same messages.
func scanEnvelope(data []byte) (e envelope, ok bool) {
	ok = jsonscan.Members(data, envelopeMembers, func(name, value []byte) bool {
		switch string(name) {
		case "jsonrpc":
			e.jsonrpc, e.hasJSONRPC = jsonscan.PlainString(value)
			return e.hasJSONRPC
		case "method":
			e.method, e.hasMethod = jsonscan.PlainString(value)
			return e.hasMethod
		case "id":
			e.id = value
		case "params":
			e.params = value
		case "result":
			e.result = value
		case "error":
			e.error = value
		}
		return true
	})
	return e, ok
}
