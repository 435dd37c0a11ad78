package reference

import (
	"context"
	"fmt"
	"strconv"

	"github.com/toolwire/toolwire/mcp"
	"github.com/toolwire/toolwire/server"
)

// MaxResourceID is the largest id the demo resource templates serve
// (demo://resource/{id}, demo://text/{id}, demo://blob/{id}); ids run from 1.
const MaxResourceID = 100

// readmeText is the body of demo://readme.
const readmeText = `# toolwire reference server

This server hosts the reference "everything" surface: tools covering every
content type, resources (static and templated), prompts with completions,
simulated logging and resource updates.

- demo://resource/{id}: odd ids are text/plain, even ids binary
- demo://text/{id} and demo://blob/{id}: the resources get-resource-reference embeds
- demo://gzip/{name}: files gzip-file-as-resource compressed
`

// resourceID parses a template's {id}: a positive integer up to
// MaxResourceID, written canonically; anything else is not found.
func resourceID(s string) (int, error) {
	id, err := strconv.Atoi(s)
	if err != nil || id < 1 || id > MaxResourceID || strconv.Itoa(id) != s {
		return 0, server.ErrResourceNotFound
	}
	return id, nil
}

// demoResource is the body of demo://resource/{id}: text/plain for an odd
// id, application/octet-stream for an even one, as get-resource-links
// advertises.
func demoResource(id int) mcp.ResourceContents {
	uri := fmt.Sprintf("demo://resource/%d", id)
	if id%2 == 0 {
		return &mcp.BlobResourceContents{URI: uri, MIMEType: "application/octet-stream",
			Blob: []byte(fmt.Sprintf("Resource %d: this is a binary resource", id))}
	}
	return &mcp.TextResourceContents{URI: uri, MIMEType: "text/plain", Text: fmt.Sprintf("Resource %d: this is a plaintext resource", id)}
}

// completeID suggests the ids 1..MaxResourceID that start with what was
// typed.
var completeID = func() server.CompleteFunc {
	ids := make([]string, MaxResourceID)
	for i := range ids {
		ids[i] = strconv.Itoa(i + 1)
	}
	return server.CompleteFromList(ids...)
}()

func read(rc mcp.ResourceContents) *mcp.ReadResourceResult {
	return &mcp.ReadResourceResult{Contents: []mcp.ResourceContents{rc}}
}

// addResources adds the static resources and the templates.
func (c *config) addResources(s *server.Server) error {
	if err := server.AddResource(s, &mcp.Resource{URI: "demo://readme", Name: "readme", Title: "Reference server README",
		Description: "What this server hosts", MIMEType: "text/markdown"},
		func(context.Context, *server.ResourceRequest) (*mcp.ReadResourceResult, error) {
			return read(&mcp.TextResourceContents{URI: "demo://readme", MIMEType: "text/markdown", Text: readmeText}), nil
		}); err != nil {
		return err
	}
	if err := server.AddResource(s, &mcp.Resource{URI: "demo://logo.png", Name: "logo.png", Title: "Logo",
		Description: "A 2x2 PNG image", MIMEType: "image/png"},
		func(context.Context, *server.ResourceRequest) (*mcp.ReadResourceResult, error) {
			return read(&mcp.BlobResourceContents{URI: "demo://logo.png", MIMEType: "image/png", Blob: tinyPNG()}), nil
		}); err != nil {
		return err
	}
	templates := []struct {
		def  mcp.ResourceTemplate
		read func(id int) mcp.ResourceContents
	}{
		{mcp.ResourceTemplate{URITemplate: "demo://resource/{id}", Name: "demo-resource", Title: "Demo resource",
			Description: fmt.Sprintf("Resource {id} (1-%d): odd ids are text/plain, even ids application/octet-stream; get-resource-links links to these", MaxResourceID)},
			demoResource},
		{mcp.ResourceTemplate{URITemplate: "demo://text/{id}", Name: "demo-text", Title: "Demo text resource",
			Description: fmt.Sprintf("Plaintext resource {id} (1-%d), as get-resource-reference embeds it", MaxResourceID), MIMEType: "text/plain"},
			func(id int) mcp.ResourceContents { return demoContents("text", id) }},
		{mcp.ResourceTemplate{URITemplate: "demo://blob/{id}", Name: "demo-blob", Title: "Demo binary resource",
			Description: fmt.Sprintf("Binary resource {id} (1-%d), as get-resource-reference embeds it", MaxResourceID), MIMEType: "application/octet-stream"},
			func(id int) mcp.ResourceContents { return demoContents("blob", id) }},
	}
	for _, t := range templates {
		body := t.read
		err := server.AddResourceTemplate(s, &t.def, func(_ context.Context, req *server.ResourceRequest) (*mcp.ReadResourceResult, error) {
			id, err := resourceID(req.Vars["id"])
			if err != nil {
				return nil, err
			}
			return read(body(id)), nil
		}, server.WithVarCompletion("id", completeID))
		if err != nil {
			return err
		}
	}
	return nil
}
