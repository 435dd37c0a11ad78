package main

import (
	"context"
	"fmt"

	"github.com/toolwire/toolwire/mcp"
	"github.com/toolwire/toolwire/server"
)

// registerPrompts adds the test_* prompts of the prompts-* scenarios.
func registerPrompts(s *server.Server) error {
	png := mustDecode(pngBase64)
	user := func(c mcp.Content) mcp.PromptMessage { return mcp.PromptMessage{Role: mcp.RoleUser, Content: c} }
	steps := []error{
		server.AddPrompt(s, &mcp.Prompt{Name: "test_simple_prompt", Description: "A prompt without arguments"},
			func(context.Context, *server.PromptRequest, map[string]string) (*mcp.GetPromptResult, error) {
				return &mcp.GetPromptResult{Messages: []mcp.PromptMessage{user(&mcp.TextContent{Text: "This is a simple prompt for testing."})}}, nil
			}),
		server.AddPrompt(s, &mcp.Prompt{Name: "test_prompt_with_arguments", Description: "A prompt with two required arguments",
			Arguments: []mcp.PromptArgument{
				{Name: "arg1", Description: "First test argument", Required: true},
				{Name: "arg2", Description: "Second test argument", Required: true},
			}},
			func(_ context.Context, _ *server.PromptRequest, args map[string]string) (*mcp.GetPromptResult, error) {
				return &mcp.GetPromptResult{Messages: []mcp.PromptMessage{user(&mcp.TextContent{
					Text: fmt.Sprintf("Prompt with arguments: arg1='%s', arg2='%s'", args["arg1"], args["arg2"])})}}, nil
			}),
		server.AddPrompt(s, &mcp.Prompt{Name: "test_prompt_with_embedded_resource", Description: "A prompt embedding a resource",
			Arguments: []mcp.PromptArgument{{Name: "resourceUri", Description: "URI of the resource to embed", Required: true}}},
			func(_ context.Context, _ *server.PromptRequest, args map[string]string) (*mcp.GetPromptResult, error) {
				return &mcp.GetPromptResult{Messages: []mcp.PromptMessage{
					user(&mcp.EmbeddedResource{Resource: &mcp.TextResourceContents{URI: args["resourceUri"], MIMEType: "text/plain",
						Text: "Embedded resource content for testing."}}),
					user(&mcp.TextContent{Text: "Please process the embedded resource above."}),
				}}, nil
			}),
		server.AddPrompt(s, &mcp.Prompt{Name: "test_prompt_with_image", Description: "A prompt with an image"},
			func(context.Context, *server.PromptRequest, map[string]string) (*mcp.GetPromptResult, error) {
				return &mcp.GetPromptResult{Messages: []mcp.PromptMessage{
					user(&mcp.ImageContent{Data: png, MIMEType: "image/png"}),
					user(&mcp.TextContent{Text: "Please analyze the image above."}),
				}}, nil
			}),
	}
	for _, err := range steps {
		if err != nil {
			return err
		}
	}
	return nil
}
