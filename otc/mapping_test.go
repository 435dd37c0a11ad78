package otc_test

import (
	"encoding/json"
	"testing"

	"github.com/toolwire/toolwire/mcp"
	"github.com/toolwire/toolwire/otc"
)

func TestResponseFromResult(t *testing.T) {
	guided := mcp.ErrorResult("Doorbell ID not found")
	guided.Meta = guided.Meta.SetRetryGuidance(mcp.RetryGuidance{DeveloperMessage: "dev", CanRetry: true, RetryAfterMs: 500, AdditionalPromptContent: "ids"})
	badGuidance := mcp.ErrorResult("boom")
	badGuidance.Meta = mcp.Meta{mcp.MetaRetryGuidance: "not an object"}
	for name, tc := range map[string]struct {
		res  *mcp.CallToolResult
		want string
	}{
		"structured":        {&mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: `{"x":1}`}}, StructuredContent: json.RawMessage(`{"x":1}`)}, `{"call_id":"c","success":true,"value":{"x":1}}`},
		"structured scalar": {&mcp.CallToolResult{StructuredContent: json.RawMessage(`15`)}, `{"call_id":"c","success":true,"value":15}`},
		"no content":        {&mcp.CallToolResult{}, `{"call_id":"c","success":true,"value":null}`},
		"nil result":        {nil, `{"call_id":"c","success":true,"value":null}`},
		"lone text":         {mcp.TextResult(`{"looks":"like json"}`), `{"call_id":"c","success":true,"value":"{\"looks\":\"like json\"}"}`},
		"several blocks": {&mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "a"}, &mcp.ImageContent{Data: []byte{1, 2}, MIMEType: "image/png"}}},
			`{"call_id":"c","success":true,"value":[{"type":"text","text":"a"},{"type":"image","data":"AQI=","mimeType":"image/png"}]}`},
		"lone image": {&mcp.CallToolResult{Content: []mcp.Content{&mcp.ImageContent{Data: []byte{1}, MIMEType: "image/png"}}},
			`{"call_id":"c","success":true,"value":[{"type":"image","data":"AQ==","mimeType":"image/png"}]}`},
		"error":          {mcp.ErrorResult("it broke"), `{"call_id":"c","success":false,"error":{"message":"it broke"}}`},
		"error, guided":  {guided, `{"call_id":"c","success":false,"error":{"message":"Doorbell ID not found","developer_message":"dev","can_retry":true,"additional_prompt_content":"ids","retry_after_ms":500}}`},
		"error, no text": {&mcp.CallToolResult{IsError: true}, `{"call_id":"c","success":false,"error":{"message":"the tool call failed"}}`},
		"error, two texts": {&mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: "one"}, &mcp.TextContent{Text: "two"}}},
			`{"call_id":"c","success":false,"error":{"message":"one\ntwo"}}`},
		"error, malformed guidance": {badGuidance, `{"call_id":"c","success":false,"error":{"message":"boom"}}`},
	} {
		raw, err := json.Marshal(otc.ResponseFromResult("c", tc.res))
		if err != nil {
			t.Fatal(err)
		}
		if string(raw) != tc.want {
			t.Errorf("%s:\n got %s\nwant %s", name, raw, tc.want)
		}
		if err := loadSchema(t, "call-tool-response.json").ValidateJSON(raw); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// TestMappingRoundTrips maps MCP -> OTC -> MCP -> OTC and checks the two OTC
// responses agree, and that guidance survives both ways.
func TestMappingRoundTrips(t *testing.T) {
	guided := (&mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: "retry me"}}}).Meta.
		SetRetryGuidance(mcp.RetryGuidance{CanRetry: true, RetryAfterMs: 20, DeveloperMessage: "d", AdditionalPromptContent: "p"})
	for name, res := range map[string]*mcp.CallToolResult{
		"structured": {StructuredContent: json.RawMessage(`{"emails":[{"id":"email_1"}]}`)},
		"array":      {StructuredContent: json.RawMessage(`[1,2,3]`)},
		"text":       mcp.TextResult("hello"),
		"none":       {},
		"blocks":     {Content: []mcp.Content{&mcp.TextContent{Text: "a"}, &mcp.TextContent{Text: "b"}}},
		"guided":     {IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: "retry me"}}, Meta: guided},
	} {
		first := otc.ResponseFromResult("id", res)
		back := otc.ResultFromResponse(&first)
		second := otc.ResponseFromResult("id", back)
		a, _ := json.Marshal(first)
		b, _ := json.Marshal(second)
		if string(a) != string(b) {
			t.Errorf("%s: %s != %s", name, a, b)
		}
		if back.IsError != res.IsError {
			t.Errorf("%s: isError %v", name, back.IsError)
		}
	}
	// OTC -> MCP: the guidance an OTC server sends reaches MCP clients.
	ms := int64(500)
	back := otc.ResultFromResponse(&otc.CallToolResponse{Error: &otc.ToolError{Message: "m", CanRetry: true, RetryAfterMs: &ms}})
	g, err := back.RetryGuidance()
	if err != nil || g == nil || !g.CanRetry || g.RetryAfterMs != 500 {
		t.Errorf("guidance %+v %v", g, err)
	}
	// An OTC object value becomes structuredContent plus its JSON as text.
	back = otc.ResultFromResponse(&otc.CallToolResponse{Success: true, Value: json.RawMessage(`{"status":"sent"}`)})
	if string(back.StructuredContent) != `{"status":"sent"}` || len(back.Content) != 1 {
		t.Errorf("object value: %+v", back)
	}
}

func TestToolDefinitionSpellings(t *testing.T) {
	for name, body := range map[string]string{
		"OTC": `{"id":"A.B@1.0.0","name":"A_B","description":"d","version":"1.0.0","input_schema":{"parameters":{"type":"object","properties":{"x":{"type":"string"}}}},"output_schema":null}`,
		"OXP": `{"id":"A.B@1.0.0","name":"A_B","description":"d","version":"1.0.0","input_schema":{"type":"object","properties":{"x":{"type":"string"}}},"output_schema":null}`,
	} {
		var d otc.ToolDefinition
		if err := json.Unmarshal([]byte(body), &d); err != nil {
			t.Fatal(err)
		}
		if string(d.InputSchema) != `{"type":"object","properties":{"x":{"type":"string"}}}` {
			t.Errorf("%s: input schema %s", name, d.InputSchema)
		}
		tool := otc.ToolFromDefinition(d)
		ref, err := otc.Naming{}.Map(tool)
		if err != nil || ref.ID() != "A.B@1.0.0" {
			t.Errorf("%s: reverse mapping gives %v, %v", name, ref, err)
		}
		out, _ := json.Marshal(d)
		if string(out) != `{"id":"A.B@1.0.0","name":"A_B","description":"d","version":"1.0.0","input_schema":{"parameters":{"type":"object","properties":{"x":{"type":"string"}}}},"output_schema":null}` {
			t.Errorf("%s: re-encoded as %s", name, out)
		}
	}
	var list otc.ListToolsResponse
	if err := json.Unmarshal([]byte(`{"$schema":"urn:oxp:1.0","items":[{"id":"A.B","name":"A_B","description":"","version":"1.0.0","input_schema":{}}]}`), &list); err != nil || len(list.Tools) != 1 {
		t.Errorf("items: %+v %v", list, err)
	}
}

func TestCallToolResponseDecodingRules(t *testing.T) {
	for name, body := range map[string]string{
		"no call_id":            `{"success":true}`,
		"no success":            `{"call_id":"x"}`,
		"success with error":    `{"call_id":"x","success":true,"error":{"message":"m"}}`,
		"failure without error": `{"call_id":"x","success":false}`,
		"failure with value":    `{"call_id":"x","success":false,"value":1,"error":{"message":"m"}}`,
	} {
		var r otc.CallToolResponse
		if err := json.Unmarshal([]byte(body), &r); err == nil {
			t.Errorf("%s: accepted %s", name, body)
		}
	}
	var r otc.CallToolResponse
	if err := json.Unmarshal([]byte(`{"call_id":"x","success":true}`), &r); err != nil || string(r.Value) != "null" || r.Err() != nil {
		t.Errorf("null response: %+v %v", r, err)
	}
}
