package main

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"sync"
	"time"

	"github.com/toolwire/toolwire/internal/backoff"
	"github.com/toolwire/toolwire/jsonrpc"
	"github.com/toolwire/toolwire/mcp"
	"github.com/toolwire/toolwire/server"
	"github.com/toolwire/toolwire/transport/streamable"
)

// Fixture payloads the conformance suite expects.
const (
	pngBase64 = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg=="
	wavBase64 = "UklGRiYAAABXQVZFZm10IBAAAAABAAEAQB8AAAB9AAACABAAZGF0YQIAAAA="

	reconnectionText = "Reconnection test completed successfully. If you received this, the client properly reconnected after stream closure."

	// jsonSchema2020 is the inputSchema json-schema-2020-12 checks keyword by
	// keyword; it is served exactly as written.
	jsonSchema2020 = `{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object",` +
		`"$defs":{"address":{"$anchor":"addressDef","type":"object","properties":{"street":{"type":"string"},"city":{"type":"string"}}}},` +
		`"properties":{"name":{"type":"string"},"address":{"$ref":"#/$defs/address"},` +
		`"contactMethod":{"type":"string","enum":["phone","email"]},"phone":{"type":"string"},"email":{"type":"string"}},` +
		`"allOf":[{"anyOf":[{"required":["phone"]},{"required":["email"]}]}],` +
		`"if":{"properties":{"contactMethod":{"const":"phone"}},"required":["contactMethod"]},` +
		`"then":{"required":["phone"]},"else":{"required":["email"]},"additionalProperties":false}`

	// customHeaderSchema mirrors "region" into the Mcp-Param-Region header
	// (http-custom-header-server-validation).
	customHeaderSchema = `{"type":"object","properties":{` +
		`"region":{"type":"string","description":"Region to query","x-mcp-header":"Region"},` +
		`"query":{"type":"string","description":"Query text; not mirrored into a header"}},"required":["region"]}`
)

func mustDecode(s string) []byte {
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		panic(err)
	}
	return b
}

type noArgs struct{}

func text(s string) *mcp.CallToolResult { return mcp.TextResult("%s", s) }

// register adds every test_* tool the scenarios this server covers call.
func register(s *server.Server) error {
	png, wav := mustDecode(pngBase64), mustDecode(wavBase64)
	fixed := func(name, desc string, res func() *mcp.CallToolResult) error {
		return server.AddTool(s, &mcp.Tool{Name: name, Description: desc},
			func(ctx context.Context, req *server.CallRequest, _ noArgs) (*mcp.CallToolResult, error) {
				return res(), nil
			})
	}
	steps := []error{
		fixed("test_simple_text", "Returns a simple text response", func() *mcp.CallToolResult {
			return text("This is a simple text response for testing.")
		}),
		fixed("test_image_content", "Returns an image", func() *mcp.CallToolResult {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.ImageContent{Data: png, MIMEType: "image/png"}}}
		}),
		fixed("test_audio_content", "Returns audio", func() *mcp.CallToolResult {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.AudioContent{Data: wav, MIMEType: "audio/wav"}}}
		}),
		fixed("test_embedded_resource", "Returns an embedded resource", func() *mcp.CallToolResult {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.EmbeddedResource{Resource: &mcp.TextResourceContents{
				URI: "test://embedded-resource", MIMEType: "text/plain", Text: "This is an embedded resource content."}}}}
		}),
		fixed("test_multiple_content_types", "Returns text, an image and a resource", func() *mcp.CallToolResult {
			return &mcp.CallToolResult{Content: []mcp.Content{
				&mcp.TextContent{Text: "Multiple content types test:"},
				&mcp.ImageContent{Data: png, MIMEType: "image/png"},
				&mcp.EmbeddedResource{Resource: &mcp.TextResourceContents{
					URI: "test://mixed-content-resource", MIMEType: "application/json", Text: `{"test":"data","value":123}`}},
			}}
		}),
		fixed("test_error_handling", "Always fails with a tool error", func() *mcp.CallToolResult {
			return mcp.ErrorResult("This tool intentionally returns an error for testing")
		}),
		fixed("test_streaming_elicitation", "Answers on its response stream without sending requests", func() *mcp.CallToolResult {
			return text("Streaming complete")
		}),
		server.AddTool(s, &mcp.Tool{Name: "test_logging_tool", Description: "Logs at info; a 2026-07-28 request gets the message only if it set a log level"},
			func(ctx context.Context, req *server.CallRequest, _ noArgs) (string, error) {
				if err := req.Log(ctx, mcp.LevelInfo, "test_logging_tool", "Logging evaluated"); err != nil {
					return "", err
				}
				return "Logging evaluated", nil
			}),
		server.AddTool(s, &mcp.Tool{Name: "test_tool_with_logging", Description: "Logs three info messages 50 ms apart"},
			func(ctx context.Context, req *server.CallRequest, _ noArgs) (string, error) {
				for i, msg := range []string{"Tool execution started", "Tool processing data", "Tool execution completed"} {
					if i > 0 {
						if err := backoff.Sleep(ctx, 50*time.Millisecond); err != nil {
							return "", err
						}
					}
					if err := req.Log(ctx, mcp.LevelInfo, "test_tool_with_logging", msg); err != nil {
						return "", err
					}
				}
				return "Logging test completed", nil
			}),
		server.AddTool(s, &mcp.Tool{Name: "test_tool_with_progress", Description: "Reports progress 0, 50 and 100 of 100"},
			func(ctx context.Context, req *server.CallRequest, _ noArgs) (string, error) {
				for i, p := range []float64{0, 50, 100} {
					if i > 0 {
						if err := backoff.Sleep(ctx, 50*time.Millisecond); err != nil {
							return "", err
						}
					}
					if err := req.Progress(ctx, p, 100, fmt.Sprintf("Completed step %d of 100", int(p))); err != nil {
						return "", err
					}
				}
				return fmt.Sprint(req.Meta()[mcp.MetaProgressToken]), nil
			}),
		server.AddTool(s, &mcp.Tool{Name: "test_reconnection", Description: "Closes its SSE stream mid-call; the result arrives after the client reconnects (SEP-1699)"},
			func(ctx context.Context, req *server.CallRequest, _ noArgs) (string, error) {
				streamable.CloseSSEStream(ctx)
				if err := backoff.Sleep(ctx, 100*time.Millisecond); err != nil {
					return "", err
				}
				return reconnectionText, nil
			}),
		server.AddTool(s, &mcp.Tool{Name: "json_schema_2020_12_tool", Description: "Takes a JSON Schema 2020-12 input",
			InputSchema: json.RawMessage(jsonSchema2020)},
			func(ctx context.Context, req *server.CallRequest, _ json.RawMessage) (string, error) {
				return "JSON Schema 2020-12 tool called with: " + string(req.Arguments), nil
			}),
		server.AddTool(s, &mcp.Tool{Name: "test_missing_capability", Description: "Requires the sampling client capability"},
			func(ctx context.Context, req *server.CallRequest, _ noArgs) (string, error) {
				if len(req.Peer.ClientCapabilities.Sampling) == 0 {
					return "", jsonrpc.NewError(mcp.CodeMissingRequiredClientCapability, "this tool needs the sampling client capability").
						WithData(map[string]any{"requiredCapabilities": map[string]any{"sampling": map[string]any{}}})
				}
				return "The client declared sampling.", nil
			}),
		server.AddTool(s, &mcp.Tool{Name: "test_custom_header", Description: "Echoes a region sent in the Mcp-Param-Region header too",
			InputSchema: json.RawMessage(customHeaderSchema)},
			func(ctx context.Context, req *server.CallRequest, in struct {
				Region string `json:"region"`
			}) (string, error) {
				return "region=" + in.Region, nil
			}),
		addTrigger(s),
		addPromptTrigger(s),
	}
	for _, err := range steps {
		if err != nil {
			return err
		}
	}
	return nil
}

// addTrigger registers test_trigger_tool_change, which really changes the
// tool list (adding or removing test_dynamic_tool), so subscribers get
// notifications/tools/list_changed.
func addTrigger(s *server.Server) error {
	return addToggle(s, "test_trigger_tool_change", "test_dynamic_tool", s.RemoveTool, func() error {
		return server.AddTool(s, &mcp.Tool{Name: "test_dynamic_tool", Description: "Exists between two trigger calls"},
			func(ctx context.Context, req *server.CallRequest, _ noArgs) (string, error) { return "dynamic", nil })
	})
}

// addPromptTrigger registers test_trigger_prompt_change, which adds or
// removes test_dynamic_prompt, so subscribers get
// notifications/prompts/list_changed.
func addPromptTrigger(s *server.Server) error {
	return addToggle(s, "test_trigger_prompt_change", "test_dynamic_prompt", s.RemovePrompt, func() error {
		return server.AddPrompt(s, &mcp.Prompt{Name: "test_dynamic_prompt", Description: "Exists between two trigger calls"},
			func(context.Context, *server.PromptRequest, map[string]string) (*mcp.GetPromptResult, error) {
				return &mcp.GetPromptResult{Messages: []mcp.PromptMessage{{Role: mcp.RoleUser, Content: &mcp.TextContent{Text: "dynamic"}}}}, nil
			})
	})
}

// addToggle registers the trigger tool named trigger: each call removes the
// item named dynamic when remove finds it and adds it back with add
// otherwise, one call at a time.
func addToggle(s *server.Server, trigger, dynamic string, remove func(string) bool, add func() error) error {
	var mu sync.Mutex
	return server.AddTool(s, &mcp.Tool{Name: trigger, Description: "Adds or removes " + dynamic},
		func(ctx context.Context, req *server.CallRequest, _ noArgs) (string, error) {
			mu.Lock()
			defer mu.Unlock()
			if remove(dynamic) {
				return "Removed " + dynamic, nil
			}
			if err := add(); err != nil {
				return "", err
			}
			return "Added " + dynamic, nil
		})
}
