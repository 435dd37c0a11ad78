package main

import (
	"context"
	"fmt"

	"github.com/toolwire/toolwire/mcp"
	"github.com/toolwire/toolwire/server"
)

// registerCatalog adds the resources of the resources-* scenarios and the
// completions of completion-complete.
func registerCatalog(s *server.Server) error {
	png := mustDecode(pngBase64)
	steps := []error{
		server.AddResource(s, &mcp.Resource{URI: "test://static-text", Name: "static-text", MIMEType: "text/plain",
			Description: "A static text resource"},
			func(context.Context, *server.ResourceRequest) (*mcp.ReadResourceResult, error) {
				return &mcp.ReadResourceResult{Contents: []mcp.ResourceContents{&mcp.TextResourceContents{URI: "test://static-text",
					MIMEType: "text/plain", Text: "This is the content of the static text resource."}}}, nil
			}),
		server.AddResource(s, &mcp.Resource{URI: "test://static-binary", Name: "static-binary", MIMEType: "image/png",
			Description: "A static binary resource (a PNG image)"},
			func(context.Context, *server.ResourceRequest) (*mcp.ReadResourceResult, error) {
				return &mcp.ReadResourceResult{Contents: []mcp.ResourceContents{&mcp.BlobResourceContents{URI: "test://static-binary",
					MIMEType: "image/png", Blob: png}}}, nil
			}),
		server.AddResource(s, &mcp.Resource{URI: "test://watched-resource", Name: "watched-resource", MIMEType: "text/plain",
			Description: "A resource clients subscribe to"},
			func(context.Context, *server.ResourceRequest) (*mcp.ReadResourceResult, error) {
				return &mcp.ReadResourceResult{Contents: []mcp.ResourceContents{&mcp.TextResourceContents{URI: "test://watched-resource",
					MIMEType: "text/plain", Text: "Watched resource content."}}}, nil
			}),
		server.AddResourceTemplate(s, &mcp.ResourceTemplate{URITemplate: "test://template/{id}/data", Name: "template-data",
			MIMEType: "application/json", Description: "Data for an id"},
			func(_ context.Context, req *server.ResourceRequest) (*mcp.ReadResourceResult, error) {
				id := req.Vars["id"]
				return &mcp.ReadResourceResult{Contents: []mcp.ResourceContents{&mcp.TextResourceContents{URI: req.URI,
					MIMEType: "application/json", Text: fmt.Sprintf(`{"id":%q,"templateTest":true,"data":"Data for ID: %s"}`, id, id)}}}, nil
			},
			server.WithVarCompletion("id", server.CompleteFromList("1", "2", "3", "123"))),
		server.AddPromptCompletion(s, "test_prompt_with_arguments", "arg1",
			server.CompleteFromList("paris", "park", "party", "pasta", "alpha", "beta")),
		server.AddPromptCompletion(s, "test_prompt_with_arguments", "arg2",
			server.CompleteFromList("world", "word", "work")),
	}
	for _, err := range steps {
		if err != nil {
			return err
		}
	}
	return nil
}
