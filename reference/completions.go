package reference

import (
	"context"

	"github.com/toolwire/toolwire/mcp"
	"github.com/toolwire/toolwire/server"
)

// departments maps each department of completable-prompt to the team
// members its name argument offers.
var departments = map[string][]string{
	"Engineering": {"Alice", "Bob", "Charlie"},
	"Sales":       {"David", "Eve", "Frank"},
	"Marketing":   {"Grace", "Henry", "Iris"},
	"Support":     {"John", "Kim", "Lee"},
}

// cities are what args-prompt's city argument completes to.
var cities = []string{"Amsterdam", "Berlin", "Boston", "Chicago", "London", "Los Angeles", "New York", "Paris", "San Francisco", "Tokyo"}

// addCompletions adds completable-prompt and the completions of the other
// prompts' arguments (the templates complete {id} themselves).
func (c *config) addCompletions(s *server.Server) error {
	err := server.AddPrompt(s, &mcp.Prompt{Name: "completable-prompt", Title: "Team Management",
		Description: "First argument choice narrows values for second argument.",
		Arguments: []mcp.PromptArgument{
			{Name: "department", Description: "Choose the department.", Required: true},
			{Name: "name", Description: "Choose a team member to lead the selected department.", Required: true},
		}},
		func(_ context.Context, _ *server.PromptRequest, args map[string]string) (*mcp.GetPromptResult, error) {
			return &mcp.GetPromptResult{Messages: []mcp.PromptMessage{{Role: mcp.RoleUser,
				Content: &mcp.TextContent{Text: "Please promote " + args["name"] + " to the head of the " + args["department"] + " team."}}}}, nil
		})
	if err != nil {
		return err
	}
	for _, add := range []struct {
		prompt, arg string
		f           server.CompleteFunc
	}{
		{"completable-prompt", "department", server.CompleteFromList("Engineering", "Sales", "Marketing", "Support")},
		{"completable-prompt", "name", func(ctx context.Context, req *server.CompleteRequest) (*mcp.Completion, error) {
			names, ok := departments[req.Context["department"]]
			if !ok {
				return &mcp.Completion{Values: []string{}}, nil
			}
			return server.CompleteFromList(names...)(ctx, req)
		}},
		{"args-prompt", "city", server.CompleteFromList(cities...)},
		{"resource-prompt", "resourceType", server.CompleteFromList("text", "blob")},
		{"resource-prompt", "resourceId", completeID},
	} {
		if err := server.AddPromptCompletion(s, add.prompt, add.arg, add.f); err != nil {
			return err
		}
	}
	return nil
}
