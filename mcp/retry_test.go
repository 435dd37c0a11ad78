package mcp_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/toolwire/toolwire/mcp"
)

func TestRetryGuidanceRoundTripsThroughResultJSON(t *testing.T) {
	want := mcp.RetryGuidance{DeveloperMessage: "dev", CanRetry: true, RetryAfterMs: 500, AdditionalPromptContent: "ids: a,b"}
	res := mcp.ErrorResult("Doorbell ID not found")
	res.Meta = res.Meta.SetRetryGuidance(want)
	raw, err := json.Marshal(res)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(raw), `"_meta":{"dev.toolwire/retry":{"additionalPromptContent":"ids: a,b","canRetry":true,"developerMessage":"dev","retryAfterMs":500}}`) {
		t.Errorf("wire form: %s", raw)
	}
	var back mcp.CallToolResult
	if err := json.Unmarshal(raw, &back); err != nil {
		t.Fatal(err)
	}
	got, err := back.RetryGuidance()
	if err != nil || got == nil || *got != want {
		t.Fatalf("decoded guidance %+v, %v; want %+v", got, err, want)
	}
}

func TestRetryGuidanceAbsentAndMalformed(t *testing.T) {
	if g, err := mcp.TextResult("ok").RetryGuidance(); g != nil || err != nil {
		t.Errorf("no guidance: got %+v, %v", g, err)
	}
	for name, body := range map[string]string{
		"not an object":  `"retry later"`,
		"wrong type":     `{"canRetry":"yes"}`,
		"negative delay": `{"retryAfterMs":-5}`,
		"fractional ms":  `{"retryAfterMs":1.5}`,
	} {
		var r mcp.CallToolResult
		if err := json.Unmarshal([]byte(`{"content":[],"isError":true,"_meta":{"dev.toolwire/retry":`+body+`}}`), &r); err != nil {
			t.Fatal(err)
		}
		if g, err := r.RetryGuidance(); err == nil || !strings.Contains(err.Error(), mcp.MetaRetryGuidance) {
			t.Errorf("%s: got %+v, %v; want an error naming the key", name, g, err)
		}
	}
}
