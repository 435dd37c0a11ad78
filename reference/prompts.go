package reference

import (
	"context"
	"fmt"
	"strconv"

	"github.com/toolwire/toolwire/mcp"
	"github.com/toolwire/toolwire/server"
)

// addPrompts adds the reference prompts: one without arguments, one with a
// required and an optional argument, and one embedding a resource.
func (c *config) addPrompts(s *server.Server) error {
	user := func(content mcp.Content) mcp.PromptMessage {
		return mcp.PromptMessage{Role: mcp.RoleUser, Content: content}
	}
	steps := []error{
		server.AddPrompt(s, &mcp.Prompt{Name: "simple-prompt", Title: "Simple Prompt", Description: "A prompt without arguments"},
			func(context.Context, *server.PromptRequest, map[string]string) (*mcp.GetPromptResult, error) {
				return &mcp.GetPromptResult{Messages: []mcp.PromptMessage{user(&mcp.TextContent{Text: "This is a simple prompt without arguments."})}}, nil
			}),
		server.AddPrompt(s, &mcp.Prompt{Name: "args-prompt", Title: "Arguments Prompt", Description: "A prompt with a required and an optional argument",
			Arguments: []mcp.PromptArgument{
				{Name: "city", Description: "Name of the city", Required: true},
				{Name: "state", Description: "Name of the state or region"},
			}},
			func(_ context.Context, _ *server.PromptRequest, args map[string]string) (*mcp.GetPromptResult, error) {
				where := args["city"]
				if st := args["state"]; st != "" {
					where += ", " + st
				}
				return &mcp.GetPromptResult{Messages: []mcp.PromptMessage{user(&mcp.TextContent{Text: "What's the weather in " + where + "?"})}}, nil
			}),
		server.AddPrompt(s, &mcp.Prompt{Name: "resource-prompt", Title: "Resource Prompt", Description: "A prompt that embeds a reference resource",
			Arguments: []mcp.PromptArgument{
				{Name: "resourceType", Description: `"text" or "blob"`, Required: true},
				{Name: "resourceId", Description: "ID of the resource (1-100)", Required: true},
			}},
			func(_ context.Context, _ *server.PromptRequest, args map[string]string) (*mcp.GetPromptResult, error) {
				kind := args["resourceType"]
				if kind != "text" && kind != "blob" {
					return nil, &server.PromptArgumentError{Argument: "resourceType", Reason: `must be "text" or "blob"`}
				}
				id, err := strconv.Atoi(args["resourceId"])
				if err != nil || id < 1 || id > MaxResourceID {
					return nil, &server.PromptArgumentError{Argument: "resourceId", Reason: fmt.Sprintf("must be an integer from 1 to %d", MaxResourceID)}
				}
				contents := demoContents(kind, id)
				return &mcp.GetPromptResult{Messages: []mcp.PromptMessage{
					user(&mcp.TextContent{Text: fmt.Sprintf("This prompt includes the %s resource %d:", kind, id)}),
					user(&mcp.EmbeddedResource{Resource: contents}),
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

// demoContents is the body of demo://text/{id} and demo://blob/{id}.
func demoContents(kind string, id int) mcp.ResourceContents {
	uri := fmt.Sprintf("demo://%s/%d", kind, id)
	if kind == "blob" {
		return &mcp.BlobResourceContents{URI: uri, MIMEType: "application/octet-stream",
			Blob: []byte(fmt.Sprintf("Resource %d: this is a binary resource", id))}
	}
	return &mcp.TextResourceContents{URI: uri, MIMEType: "text/plain", Text: fmt.Sprintf("Resource %d: this is a plaintext resource", id)}
}
