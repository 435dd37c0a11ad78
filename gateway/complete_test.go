package gateway_test

import (
	"context"
	"slices"
	"testing"

	"github.com/toolwire/toolwire/client"
	"github.com/toolwire/toolwire/gateway"
	"github.com/toolwire/toolwire/mcp"
	"github.com/toolwire/toolwire/server"
)

// TestCompletionAcrossTheHop: completion/complete of an upstream's prompt
// argument (under its gateway name) and template variable reaches that
// upstream, with the arguments already chosen; an upstream that does not
// complete gives no values; an unknown ref is -32602.
func TestCompletionAcrossTheHop(t *testing.T) {
	up := server.New(mcp.Implementation{Name: "places", Version: "1"})
	must(server.AddPrompt(up, &mcp.Prompt{Name: "trip", Arguments: []mcp.PromptArgument{{Name: "country"}, {Name: "city"}}},
		func(context.Context, *server.PromptRequest, map[string]string) (*mcp.GetPromptResult, error) {
			return &mcp.GetPromptResult{Messages: []mcp.PromptMessage{{Role: "user", Content: &mcp.TextContent{Text: "go"}}}}, nil
		}))
	must(server.AddPromptCompletion(up, "trip", "city", func(_ context.Context, req *server.CompleteRequest) (*mcp.Completion, error) {
		if req.Context["country"] == "fr" {
			return &mcp.Completion{Values: []string{"Paris", "Pau"}}, nil
		}
		return &mcp.Completion{Values: []string{"Porto"}}, nil
	}))
	must(server.AddResourceTemplate(up, &mcp.ResourceTemplate{URITemplate: "places://city/{name}", Name: "city"},
		func(context.Context, *server.ResourceRequest) (*mcp.ReadResourceResult, error) {
			return nil, server.ErrResourceNotFound
		},
		server.WithVarCompletion("name", server.CompleteFromList("Lyon", "Lille", "Nice"))))
	g := newGateway(t, gateway.Config{Upstreams: []gateway.Upstream{
		{Name: "p", Server: up},
		{Name: "plain", Server: echoServer("plain")},
	}})
	for _, era := range []mcp.Era{mcp.EraLegacy, mcp.EraModern} {
		t.Run(era.String(), func(t *testing.T) {
			c := downstream(t, g, client.WithEra(era))
			if c.ServerCapabilities().Completions == nil {
				t.Fatal("the gateway does not declare completions")
			}
			ctx := t.Context()
			got, err := c.Complete(ctx, mcp.CompletionReference{Type: mcp.RefPrompt, Name: "p__trip"},
				mcp.CompletionArgument{Name: "city", Value: "P"}, map[string]string{"country": "fr"})
			if err != nil || !slices.Equal(got.Values, []string{"Paris", "Pau"}) {
				t.Fatalf("prompt completion: %+v, %v", got, err)
			}
			got, err = c.Complete(ctx, mcp.CompletionReference{Type: mcp.RefResource, URI: "places://city/{name}"},
				mcp.CompletionArgument{Name: "name", Value: "l"}, nil)
			if err != nil || !slices.Equal(got.Values, []string{"Lyon", "Lille"}) {
				t.Fatalf("template completion: %+v, %v", got, err)
			}
			got, err = c.Complete(ctx, mcp.CompletionReference{Type: mcp.RefPrompt, Name: "plain__greet"},
				mcp.CompletionArgument{Name: "who", Value: "a"}, nil)
			if err != nil || len(got.Values) != 0 {
				t.Fatalf("an upstream without completions: %+v, %v", got, err)
			}
			_, err = c.Complete(ctx, mcp.CompletionReference{Type: mcp.RefPrompt, Name: "trip"},
				mcp.CompletionArgument{Name: "city", Value: ""}, nil)
			var je *client.JSONRPCError
			if !asJSONRPC(err, &je) || je.Code != -32602 {
				t.Fatalf("unknown prompt: %v, want -32602", err)
			}
		})
	}
}
