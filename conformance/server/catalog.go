package main

import (
	"context"

	"github.com/toolwire/toolwire/jsonrpc"
	"github.com/toolwire/toolwire/mcp"
	"github.com/toolwire/toolwire/server"
)

// The suite's caching scenario lists prompts, resources and resource
// templates, and server-stateless checks that a server answering prompts/list
// declares prompts. This fixture hosts none yet, so it adds those methods to
// the server's method table with AddMethod, as any library user can: empty
// lists, and "not found" for reads and gets. The engine declares the prompts
// and resources capabilities from these entries and stamps 2026-07-28
// results (resultType, serverInfo, ttlMs and cacheScope on the lists).

type cursorParams struct {
	Cursor string `json:"cursor,omitempty"`
}

type emptyResources struct {
	Resources []struct{} `json:"resources"`
}

type emptyTemplates struct {
	ResourceTemplates []struct{} `json:"resourceTemplates"`
}

type readParams struct {
	URI string `json:"uri"`
}

// codeResourceNotFound is 2025-11-25's resource-not-found code; 2026-07-28
// answers -32602 instead.
const codeResourceNotFound = -32002

func registerCatalog(s *server.Server) error {
	steps := []error{
		server.AddMethod(s, server.MethodSpec{Name: "resources/list", Capability: "resources", Cacheable: true},
			func(context.Context, *server.Request, *cursorParams) (*emptyResources, error) {
				return &emptyResources{Resources: []struct{}{}}, nil
			}),
		server.AddMethod(s, server.MethodSpec{Name: "resources/templates/list", Capability: "resources", Cacheable: true},
			func(context.Context, *server.Request, *cursorParams) (*emptyTemplates, error) {
				return &emptyTemplates{ResourceTemplates: []struct{}{}}, nil
			}),
		server.AddMethod(s, server.MethodSpec{Name: "resources/read", Capability: "resources", NameParam: "uri"},
			func(_ context.Context, r *server.Request, p *readParams) (*mcp.EmptyResult, error) {
				code := int64(codeResourceNotFound)
				if r.Peer.Era == mcp.EraModern {
					code = jsonrpc.CodeInvalidParams
				}
				return nil, jsonrpc.NewError(code, "Resource not found: %s", p.URI).WithData(map[string]string{"uri": p.URI})
			}),
	}
	for _, err := range steps {
		if err != nil {
			return err
		}
	}
	return nil
}
