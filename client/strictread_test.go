package client

import (
	"encoding/json"
	"testing"

	"github.com/toolwire/toolwire/mcp"
)

// What a server sent is read exactly wherever the client looks into it:
// a member name twice, or a case variant of a member the client reads, is
// not taken for that member, so the answer is read as not saying what it
// would say to a lenient reader.
func TestServerBytesReadExactly(t *testing.T) {
	for body, want := range map[string]bool{
		`{"error":{"code":-32000,"message":"Bad Request: No valid session ID provided"}}`:                true,
		`{"error":{"code":-32000,"Message":"Bad Request: No valid session ID provided"}}`:                false,
		`{"error":{"code":-32600,"message":"x","code":-32000,"message":"No valid session ID provided"}}`: false,
	} {
		if got := rejectsSession([]byte(body)); got != want {
			t.Errorf("rejectsSession(%s) = %v, want %v", body, got, want)
		}
	}

	required := func(data string) error {
		return &JSONRPCError{Code: mcp.CodeMissingRequiredClientCapability, Data: json.RawMessage(data)}
	}
	for data, want := range map[string]bool{
		`{"requiredCapabilities":{"extensions":{"io.modelcontextprotocol/tasks":{}}}}`:                                          true,
		`{"RequiredCapabilities":{"extensions":{"io.modelcontextprotocol/tasks":{}}}}`:                                          false,
		`{"requiredCapabilities":{"extensions":{}},"requiredCapabilities":{"extensions":{"io.modelcontextprotocol/tasks":{}}}}`: false,
	} {
		if got := IsTaskRequired(required(data)); got != want {
			t.Errorf("IsTaskRequired(data %s) = %v, want %v", data, got, want)
		}
	}

	var got int
	ts := &taskState{progress: map[string]func(json.RawMessage){"tok": func(json.RawMessage) { got++ }}}
	for params, want := range map[string]bool{
		`{"progressToken":"tok","progress":1}`:                         true,
		`{"ProgressToken":"tok","progress":1}`:                         false,
		`{"progressToken":"other","progressToken":"tok","progress":1}`: false,
	} {
		if routed := ts.routeProgress(json.RawMessage(params)); routed != want {
			t.Errorf("routeProgress(%s) = %v, want %v", params, routed, want)
		}
	}
	if got != 1 {
		t.Errorf("the task's progress function ran %d times, want 1", got)
	}
}
