package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/toolwire/toolwire/mcp"
	"github.com/toolwire/toolwire/server"
)

// The fixtures below ask the client for input with one handler each for
// both eras: a 2025-11-25 session gets real elicitation/create,
// sampling/createMessage and roots/list requests, a 2026-07-28 request an
// input_required result (SEP-2322) answered on retry.

func form(message, schema string) *mcp.ElicitParams {
	return &mcp.ElicitParams{Message: message, RequestedSchema: json.RawMessage(schema)}
}

func userText(text string) []mcp.SamplingMessage {
	return []mcp.SamplingMessage{{Role: mcp.RoleUser, Content: []mcp.Content{&mcp.TextContent{Text: text}}}}
}

// sampledText is the text of a sampling result's first text block.
func sampledText(res *mcp.CreateMessageResult) string {
	for _, c := range res.Content {
		if t, ok := c.(*mcp.TextContent); ok {
			return t.Text
		}
	}
	return ""
}

func elicited(res *mcp.ElicitResult) string {
	content, _ := json.Marshal(res.Content)
	if res.Content == nil {
		content = []byte("{}")
	}
	return fmt.Sprintf("action=%s, content=%s", res.Action, content)
}

const (
	nameSchema    = `{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}`
	confirmSchema = `{"type":"object","properties":{"ok":{"type":"boolean"}},"required":["ok"]}`

	defaultsSchema = `{"type":"object","properties":{` +
		`"name":{"type":"string","default":"John Doe"},` +
		`"age":{"type":"integer","default":30},` +
		`"score":{"type":"number","default":95.5},` +
		`"status":{"type":"string","enum":["active","inactive","pending"],"default":"active"},` +
		`"verified":{"type":"boolean","default":true}}}`

	enumsSchema = `{"type":"object","properties":{` +
		`"untitledSingle":{"type":"string","enum":["option1","option2","option3"]},` +
		`"titledSingle":{"type":"string","oneOf":[{"const":"value1","title":"First Option"},{"const":"value2","title":"Second Option"},{"const":"value3","title":"Third Option"}]},` +
		`"legacyEnum":{"type":"string","enum":["opt1","opt2","opt3"],"enumNames":["Option One","Option Two","Option Three"]},` +
		`"untitledMulti":{"type":"array","items":{"type":"string","enum":["option1","option2","option3"]}},` +
		`"titledMulti":{"type":"array","items":{"anyOf":[{"const":"value1","title":"First Choice"},{"const":"value2","title":"Second Choice"},{"const":"value3","title":"Third Choice"}]}}}}`
)

func registerInput(s *server.Server) error {
	type promptArgs struct {
		Prompt string `json:"prompt"`
	}
	type messageArgs struct {
		Message string `json:"message"`
	}
	tool := func(name, desc string, h func(ctx context.Context, req *server.CallRequest) (string, error)) error {
		return server.AddTool(s, &mcp.Tool{Name: name, Description: desc},
			func(ctx context.Context, req *server.CallRequest, _ noArgs) (string, error) { return h(ctx, req) })
	}
	// elicit is a tool that asks the user p (opts name its input key) and
	// answers with reply of what came back.
	elicit := func(name, desc string, p *mcp.ElicitParams, reply func(*mcp.ElicitResult) string, opts ...server.InputOption) error {
		return tool(name, desc, func(ctx context.Context, req *server.CallRequest) (string, error) {
			res, err := req.Elicit(ctx, p, opts...)
			if err != nil {
				return "", err
			}
			return reply(res), nil
		})
	}
	completed := func(res *mcp.ElicitResult) string { return "Elicitation completed: " + elicited(res) }
	steps := []error{
		server.AddTool(s, &mcp.Tool{Name: "test_sampling", Description: "Asks the client's model to answer a prompt"},
			func(ctx context.Context, req *server.CallRequest, in promptArgs) (string, error) {
				res, err := req.CreateMessage(ctx, &mcp.CreateMessageParams{Messages: userText(in.Prompt), MaxTokens: 100})
				if err != nil {
					return "", err
				}
				return "LLM response: " + sampledText(res), nil
			}),
		server.AddTool(s, &mcp.Tool{Name: "test_elicitation", Description: "Asks the user for a username and email"},
			func(ctx context.Context, req *server.CallRequest, in messageArgs) (string, error) {
				res, err := req.Elicit(ctx, form(in.Message, `{"type":"object","properties":{`+
					`"username":{"type":"string","description":"User's response"},`+
					`"email":{"type":"string","description":"User's email address"}},"required":["username","email"]}`))
				if err != nil {
					return "", err
				}
				return "User response: " + elicited(res), nil
			}),
		elicit("test_elicitation_sep1034_defaults", "Asks for values with defaults of every primitive type (SEP-1034)",
			form("Please review and update the form fields with defaults", defaultsSchema), completed),
		elicit("test_elicitation_sep1330_enums", "Asks for values of the five enum forms (SEP-1330)",
			form("Please select options from the enum fields", enumsSchema), completed),
		elicit("test_input_required_result_elicitation", "Asks the user's name",
			form("What is your name?", nameSchema),
			func(res *mcp.ElicitResult) string { return fmt.Sprintf("Hello, %v!", res.Content["name"]) },
			server.InputKey("user_name")),
		tool("test_input_required_result_sampling", "Asks the client's model a question",
			func(ctx context.Context, req *server.CallRequest) (string, error) {
				res, err := req.CreateMessage(ctx, &mcp.CreateMessageParams{Messages: userText("What is the capital of France?"), MaxTokens: 100},
					server.InputKey("capital_question"))
				if err != nil {
					return "", err
				}
				return "The model answered: " + sampledText(res), nil
			}),
		tool("test_input_required_result_list_roots", "Asks the client for its roots",
			func(ctx context.Context, req *server.CallRequest) (string, error) {
				res, err := req.ListRoots(ctx, server.InputKey("client_roots"))
				if err != nil {
					return "", err
				}
				uris := make([]string, len(res.Roots))
				for i, r := range res.Roots {
					uris[i] = r.URI
				}
				return "Roots: " + strings.Join(uris, ", "), nil
			}),
		elicit("test_input_required_result_request_state", "Asks for a confirmation; the sealed requestState is checked on retry",
			form("Please confirm", confirmSchema),
			func(res *mcp.ElicitResult) string { return fmt.Sprintf("state-ok: confirmed=%v", res.Content["ok"]) },
			server.InputKey("confirm")),
		elicit("test_input_required_result_tampered_state", "Asks for a confirmation; a tampered requestState is refused",
			form("Please confirm", confirmSchema),
			func(res *mcp.ElicitResult) string { return fmt.Sprintf("confirmed=%v", res.Content["ok"]) },
			server.InputKey("confirm")),
		tool("test_input_required_result_multiple_inputs", "Asks for a name, a sampled greeting and the roots at once",
			func(ctx context.Context, req *server.CallRequest) (string, error) {
				name, _ := json.Marshal(form("What is your name?", nameSchema))
				greeting, _ := json.Marshal(&mcp.CreateMessageParams{Messages: userText("Generate a greeting"), MaxTokens: 50})
				answers, err := req.Input(ctx, map[string]mcp.InputRequest{
					"user_name":    {Method: mcp.MethodElicitationCreate, Params: name},
					"greeting":     {Method: mcp.MethodCreateMessage, Params: greeting},
					"client_roots": {Method: mcp.MethodListRoots, Params: json.RawMessage(`{}`)},
				})
				if err != nil {
					return "", err
				}
				return fmt.Sprintf("Received %d answers: user_name, greeting, client_roots", len(answers)), nil
			}),
		tool("test_input_required_result_multi_round", "Asks two questions in two rounds",
			func(ctx context.Context, req *server.CallRequest) (string, error) {
				a, err := req.Elicit(ctx, form("Step 1: What is your name?", nameSchema), server.InputKey("step1"))
				if err != nil {
					return "", err
				}
				b, err := req.Elicit(ctx, form("Step 2: What is your favorite color?",
					`{"type":"object","properties":{"color":{"type":"string"}},"required":["color"]}`), server.InputKey("step2"))
				if err != nil {
					return "", err
				}
				return fmt.Sprintf("%v likes %v", a.Content["name"], b.Content["color"]), nil
			}),
		tool("test_input_required_result_capabilities", "Asks only for what the client declared",
			func(ctx context.Context, req *server.CallRequest) (string, error) {
				caps := req.Peer.ClientCapabilities
				asks := map[string]mcp.InputRequest{}
				if caps.Has("elicitation") {
					p, _ := json.Marshal(form("What is your name?", nameSchema))
					asks["user_name"] = mcp.InputRequest{Method: mcp.MethodElicitationCreate, Params: p}
				}
				if caps.Has("sampling") {
					p, _ := json.Marshal(&mcp.CreateMessageParams{Messages: userText("Say hello"), MaxTokens: 20})
					asks["greeting"] = mcp.InputRequest{Method: mcp.MethodCreateMessage, Params: p}
				}
				answers, err := req.Input(ctx, asks)
				if err != nil {
					return "", err
				}
				return fmt.Sprintf("Received %d answers", len(answers)), nil
			}),
		server.AddPrompt(s, &mcp.Prompt{Name: "test_input_required_result_prompt", Description: "Asks the user for context first"},
			func(ctx context.Context, req *server.PromptRequest, _ map[string]string) (*mcp.GetPromptResult, error) {
				res, err := req.Elicit(ctx, form("What context should the prompt use?",
					`{"type":"object","properties":{"context":{"type":"string"}},"required":["context"]}`), server.InputKey("user_context"))
				if err != nil {
					return nil, err
				}
				return &mcp.GetPromptResult{Messages: []mcp.PromptMessage{{Role: mcp.RoleUser,
					Content: &mcp.TextContent{Text: fmt.Sprintf("Use this context: %v", res.Content["context"])}}}}, nil
			}),
	}
	for _, err := range steps {
		if err != nil {
			return err
		}
	}
	return nil
}
