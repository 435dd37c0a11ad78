package client_test

import (
	"context"
	"fmt"

	"github.com/toolwire/toolwire/client"
	"github.com/toolwire/toolwire/mcp"
	"github.com/toolwire/toolwire/server"
)

// ExampleClient_GetPrompt registers a prompt template on a server, then
// lists it and fills it in from a client connected in memory.
func ExampleClient_GetPrompt() {
	srv := server.New(mcp.Implementation{Name: "prompter", Version: "1.0.0"})
	err := server.AddPrompt(srv, &mcp.Prompt{
		Name:        "summarize",
		Description: "Summarizes a text",
		Arguments:   []mcp.PromptArgument{{Name: "text", Required: true}, {Name: "length"}},
	}, func(ctx context.Context, req *server.PromptRequest, args map[string]string) (*mcp.GetPromptResult, error) {
		length := args["length"]
		if length == "" {
			length = "one sentence"
		}
		return &mcp.GetPromptResult{Messages: []mcp.PromptMessage{{
			Role:    mcp.RoleUser,
			Content: &mcp.TextContent{Text: "Summarize in " + length + ": " + args["text"]},
		}}}, nil
	})
	inMemory(srv, err, func(ctx context.Context, c *client.Client) error {
		prompts, err := c.ListPrompts(ctx)
		if err != nil {
			return err
		}
		for _, p := range prompts {
			fmt.Println(p.Name, "-", p.Description)
		}
		res, err := c.GetPrompt(ctx, "summarize", map[string]string{"text": "MCP servers offer prompts."})
		if err != nil {
			return err
		}
		for _, m := range res.Messages {
			fmt.Println(m.Role, m.Content.(*mcp.TextContent).Text)
		}
		_, err = c.GetPrompt(ctx, "summarize", nil)
		fmt.Println(err)
		return nil
	})
	// Output:
	// summarize - Summarizes a text
	// user Summarize in one sentence: MCP servers offer prompts.
	// prompts/get: JSON-RPC error -32602: prompt "summarize": missing required argument "text"
}
