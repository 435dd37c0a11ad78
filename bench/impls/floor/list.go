package floor

import (
	"encoding/json"

	"github.com/toolwire/toolwire/bench/tools"
)

// tool is one tools/list entry. The schemas are written out by hand: they
// are what the other servers infer from the Go types in package tools.
type tool struct {
	Name         string          `json:"name"`
	Description  string          `json:"description"`
	InputSchema  json.RawMessage `json:"inputSchema"`
	OutputSchema json.RawMessage `json:"outputSchema,omitempty"`
}

type listResult struct {
	Tools      []tool      `json:"tools"`
	ResultType string      `json:"resultType,omitempty"` // 2026-07-28 only
	Meta       *resultMeta `json:"_meta,omitempty"`      // 2026-07-28 only
}

var tools3 = []tool{
	{Name: tools.Add, Description: tools.AddDesc,
		InputSchema:  json.RawMessage(`{"type":"object","properties":{"a":{"type":"number","description":"first addend"},"b":{"type":"number","description":"second addend"}},"required":["a","b"],"additionalProperties":false}`),
		OutputSchema: json.RawMessage(`{"type":"object","properties":{"sum":{"type":"number","description":"a plus b"}},"required":["sum"],"additionalProperties":false}`)},
	{Name: tools.Big, Description: tools.BigDesc,
		InputSchema: json.RawMessage(`{"type":"object","additionalProperties":false}`)},
	{Name: tools.Echo, Description: tools.EchoDesc,
		InputSchema: json.RawMessage(`{"type":"object","properties":{"message":{"type":"string","description":"the text to send back"}},"required":["message"],"additionalProperties":false}`)},
}

// toolList and modernToolList are the tools/list results of each era, made
// once: listing is not what the benchmark measures.
var (
	toolList       = &listResult{Tools: tools3}
	modernToolList = &listResult{Tools: tools3, ResultType: "complete", Meta: serverMeta}
)
