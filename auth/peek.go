package auth

import (
	"errors"

	"github.com/toolwire/toolwire/internal/wirejson"
)

// peekTarget reads a JSON-RPC message's top-level "method" and the member
// of params naming what it is about: "uri" for resources/read, "name"
// otherwise (tools/call, prompts/get). It decodes the way the server does
// (exact member names, no duplicates, valid UTF-8), so that what it sees is
// what the server will act on; anything else is an error.
func peekTarget(body []byte) (method, name string, err error) {
	var msg struct {
		Method *string `json:"method"`
		Params *struct {
			Name any `json:"name"`
			URI  any `json:"uri"`
		} `json:"params"`
	}
	if err := wirejson.Unmarshal(body, &msg); err != nil {
		return "", "", errors.New("the body is not a JSON-RPC message: " + err.Error())
	}
	if msg.Method == nil {
		// A response or an invalid message: the server refuses the
		// latter, and a response (to its own request) names no method.
		return "", "", nil
	}
	method = *msg.Method
	if msg.Params != nil {
		v := msg.Params.Name
		if method == "resources/read" {
			v = msg.Params.URI
		}
		// A non-string is left to the method to refuse; it names nothing.
		name, _ = v.(string)
	}
	return method, name, nil
}
