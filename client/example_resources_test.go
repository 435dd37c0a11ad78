package client_test

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/toolwire/toolwire/client"
	"github.com/toolwire/toolwire/jsonrpc"
	"github.com/toolwire/toolwire/mcp"
	"github.com/toolwire/toolwire/server"
)

// ExampleClient_ReadResource reads a resource from a server connected in
// memory, and tells a URI the server does not serve from other failures.
func ExampleClient_ReadResource() {
	srv := server.New(mcp.Implementation{Name: "files", Version: "1.0.0"})
	err := server.AddMethod(srv, server.MethodSpec{Name: mcp.MethodReadResource, Capability: "resources", NameParam: "uri"},
		func(ctx context.Context, r *server.Request, p *mcp.ReadResourceParams) (*mcp.ReadResourceResult, error) {
			if p.URI != "file:///notes.txt" {
				data, _ := json.Marshal(mcp.ResourceNotFoundData{URI: p.URI})
				return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "Resource not found", Data: data}
			}
			return &mcp.ReadResourceResult{Contents: []mcp.ResourceContents{
				&mcp.TextResourceContents{URI: p.URI, MIMEType: "text/plain", Text: "buy milk"},
			}}, nil
		})
	inMemory(srv, err, func(ctx context.Context, c *client.Client) error {
		res, err := c.ReadResource(ctx, "file:///notes.txt")
		if err != nil {
			return err
		}
		for _, rc := range res.Contents {
			if t, ok := rc.(*mcp.TextResourceContents); ok {
				fmt.Println(t.URI, t.MIMEType, t.Text)
			}
		}
		_, err = c.ReadResource(ctx, "file:///missing.txt")
		fmt.Println(client.IsResourceNotFound(err), client.CodeOf(err))
		return nil
	})
	// Output:
	// file:///notes.txt text/plain buy milk
	// true ERR_MCP_JSON_RPC_ERROR
}

// ExampleClient_Complete asks a server for completions of a prompt
// argument, given another argument already chosen.
func ExampleClient_Complete() {
	srv := server.New(mcp.Implementation{Name: "completer", Version: "1.0.0"})
	err := server.AddMethod(srv, server.MethodSpec{Name: mcp.MethodComplete, Capability: "completions"},
		func(ctx context.Context, r *server.Request, p *mcp.CompleteParams) (*mcp.CompleteResult, error) {
			var vals []string
			for _, city := range []string{"Paris", "Parma", "Prague"} {
				if len(city) >= len(p.Argument.Value) && city[:len(p.Argument.Value)] == p.Argument.Value {
					vals = append(vals, city+", "+p.Context.Arguments["country"])
				}
			}
			return &mcp.CompleteResult{Completion: mcp.Completion{Values: vals}}, nil
		})
	inMemory(srv, err, func(ctx context.Context, c *client.Client) error {
		comp, err := c.Complete(ctx, mcp.CompletionReference{Type: mcp.RefPrompt, Name: "trip"},
			mcp.CompletionArgument{Name: "city", Value: "Par"}, map[string]string{"country": "any"})
		if err != nil {
			return err
		}
		fmt.Println(comp.Values)
		return nil
	})
	// Output:
	// [Paris, any Parma, any]
}

// ExampleWithElicitationHandler answers a legacy server's
// elicitation/create: the client declares the elicitation capability
// because it has a handler, and the handler sees only valid forms.
func ExampleWithElicitationHandler() {
	srv := server.New(mcp.Implementation{Name: "asker", Version: "1.0.0"})
	err := server.AddMethod(srv, server.MethodSpec{Name: "demo/greet", Eras: server.Legacy},
		func(ctx context.Context, r *server.Request, _ *struct{}) (map[string]string, error) {
			raw, err := r.Call(ctx, mcp.MethodElicitationCreate, &mcp.ElicitParams{
				Message:         "Your name?",
				RequestedSchema: json.RawMessage(`{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}`),
			})
			if err != nil {
				return nil, err
			}
			var res mcp.ElicitResult
			if err := json.Unmarshal(raw, &res); err != nil {
				return nil, err
			}
			return map[string]string{"greeting": fmt.Sprintf("hello %v (%s)", res.Content["name"], res.Action)}, nil
		})
	answer := client.WithElicitationHandler(func(ctx context.Context, p *mcp.ElicitParams) (*mcp.ElicitResult, error) {
		fmt.Println("asked:", p.Message)
		return &mcp.ElicitResult{Action: mcp.ActionAccept, Content: map[string]any{"name": "Ada"}}, nil
	})
	inMemory(srv, err, func(ctx context.Context, c *client.Client) error {
		raw, err := c.Call(ctx, "demo/greet", nil)
		if err != nil {
			return err
		}
		var out struct{ Greeting string }
		json.Unmarshal(raw, &out)
		fmt.Println(out.Greeting)
		return nil
	}, client.WithEra(mcp.EraLegacy), answer)
	// Output:
	// asked: Your name?
	// hello Ada (accept)
}
