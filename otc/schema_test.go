package otc_test

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolwire/toolwire/otc"
)

// TestPublishedSchemaRejectsSeedExamples documents the defect: the
// published CallToolResponse schema forbids "value" and "error" at the top
// level, so every seed example fails it. The corrected schema accepts them.
func TestPublishedSchemaRejectsSeedExamples(t *testing.T) {
	published := loadSchema(t, "call-tool-response.published.json")
	corrected := loadSchema(t, "call-tool-response.json")
	for _, tc := range seedCases {
		ex := readJSON(t, filepath.Join("testdata", "seed004", tc.file))
		err := validate(t, published, ex)
		if err == nil {
			t.Errorf("%s: the published schema accepts it; the defect this test documents is gone", tc.file)
		} else if !strings.Contains(err.Error(), "value") && !strings.Contains(err.Error(), "error") {
			t.Errorf("%s: published schema rejects it, but not for value/error: %v", tc.file, err)
		}
		if err := validate(t, corrected, ex); err != nil {
			t.Errorf("%s: corrected schema rejects a spec example: %v", tc.file, err)
		}
	}
	// The one shape both accept: success with no value at all.
	null := map[string]any{"call_id": "x", "success": true}
	if err := validate(t, published, null); err != nil {
		t.Errorf("published schema rejects the null response: %v", err)
	}
	if err := validate(t, corrected, null); err != nil {
		t.Errorf("corrected schema rejects the null response: %v", err)
	}
}

// TestCorrectedSchemaStillRejects checks the correction loosened nothing
// but the two members.
func TestCorrectedSchemaStillRejects(t *testing.T) {
	corrected := loadSchema(t, "call-tool-response.json")
	for name, body := range map[string]string{
		"missing call_id":           `{"success":true,"value":1}`,
		"missing success":           `{"call_id":"x","value":1}`,
		"success with error":        `{"call_id":"x","success":true,"error":{"message":"m"}}`,
		"failure without error":     `{"call_id":"x","success":false}`,
		"failure with value":        `{"call_id":"x","success":false,"value":1,"error":{"message":"m"}}`,
		"unknown member":            `{"call_id":"x","success":true,"value":1,"extra":true}`,
		"error without message":     `{"call_id":"x","success":false,"error":{"can_retry":true}}`,
		"fractional retry_after_ms": `{"call_id":"x","success":false,"error":{"message":"m","retry_after_ms":1.5}}`,
		"duration not a number":     `{"call_id":"x","success":true,"value":1,"duration":"50ms"}`,
		"can_retry not a boolean":   `{"call_id":"x","success":false,"error":{"message":"m","can_retry":"yes"}}`,
		"call_id not a string":      `{"call_id":7,"success":true}`,
	} {
		if err := corrected.ValidateJSON([]byte(body)); err == nil {
			t.Errorf("%s: corrected schema accepts %s", name, body)
		}
	}
}

// TestResponseEncodingMatchesSchema validates what CallToolResponse
// marshals to, for every shape the mapping produces.
func TestResponseEncodingMatchesSchema(t *testing.T) {
	corrected := loadSchema(t, "call-tool-response.json")
	ms := int64(250)
	d := 1.5
	for name, r := range map[string]otc.CallToolResponse{
		"value":      {CallID: "a", Success: true, Value: json.RawMessage(`{"x":1}`), Duration: &d},
		"no value":   {CallID: "b", Success: true},
		"error":      {CallID: "c", Error: &otc.ToolError{Message: "m", DeveloperMessage: "d", CanRetry: true, RetryAfterMs: &ms, AdditionalPromptContent: "p"}},
		"nil error":  {CallID: "d"},
		"both given": {CallID: "e", Success: true, Value: json.RawMessage(`1`), Error: &otc.ToolError{Message: "ignored"}},
	} {
		raw, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		if err := corrected.ValidateJSON(raw); err != nil {
			t.Errorf("%s: %s fails the schema: %v", name, raw, err)
		}
		var back otc.CallToolResponse
		if err := json.Unmarshal(raw, &back); err != nil {
			t.Errorf("%s: %s does not decode: %v", name, raw, err)
		}
	}
}
