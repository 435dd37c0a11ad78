package otc_test

import (
	"context"
	"fmt"
	"net/http/httptest"

	"github.com/toolwire/toolwire/mcp"
	"github.com/toolwire/toolwire/otc"
	"github.com/toolwire/toolwire/server"
)

// A toolwire server's tools served as Open Tool Calling 1.0, and called with
// the OTC client.
func Example() {
	s := server.New(mcp.Implementation{Name: "calc", Version: "1.0.0"})
	type in struct {
		A float64 `json:"a" jsonschema:"First addend"`
		B float64 `json:"b" jsonschema:"Second addend"`
	}
	_ = server.AddTool(s, &mcp.Tool{Name: "Calculator.Add", Description: "Adds two numbers"},
		func(ctx context.Context, _ *server.CallRequest, in in) (float64, error) { return in.A + in.B, nil })

	h, err := otc.NewHandler(otc.NewServerBackend(s), otc.WithAPIKeys("secret-key"))
	if err != nil {
		panic(err)
	}
	ts := httptest.NewServer(h) // in a program: http.ListenAndServe(addr, h)
	defer ts.Close()

	c, _ := otc.NewClient(ts.URL, otc.WithAPIKey("secret-key"))
	tools, _ := c.ListTools(context.Background())
	fmt.Println(tools[0].ID, tools[0].Name)
	resp, _ := c.Call(context.Background(), "Calculator.Add@1", map[string]any{"a": 7, "b": 8})
	fmt.Println(resp.Success, string(resp.Value))
	// Output:
	// Calculator.Add@1.0.0 Calculator_Add
	// true 15
}

// A tool fails with retry guidance; OTC clients read it from the error.
func ExampleResponseFromResult() {
	res := (&server.RetryableError{
		Message:       "Doorbell ID not found",
		RetryGuidance: mcp.RetryGuidance{CanRetry: true, RetryAfterMs: 500, AdditionalPromptContent: "ids: doorbell42"},
	}).ToolResult()
	out, _ := otc.ResponseFromResult("call-1", res).MarshalJSON()
	fmt.Println(string(out))
	// Output:
	// {"call_id":"call-1","success":false,"error":{"message":"Doorbell ID not found","can_retry":true,"additional_prompt_content":"ids: doorbell42","retry_after_ms":500}}
}
