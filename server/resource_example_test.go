package server_test

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/toolwire/toolwire/jsonrpc"
	"github.com/toolwire/toolwire/mcp"
	"github.com/toolwire/toolwire/server"
)

// exampleCall sends one request on a 2025-11-25 session and prints the
// result or error.
func exampleCall(ss *server.Session, method string, params any) {
	raw, _ := json.Marshal(params)
	r := ss.HandleRequest(context.Background(), &jsonrpc.Request{ID: jsonrpc.Int64ID(1), Method: method, Params: raw}, nil)
	if r.Error != nil {
		fmt.Println(r.Error.Code, r.Error.Message, string(r.Error.Data))
		return
	}
	fmt.Println(string(r.Result))
}

// exampleSession opens a 2025-11-25 session.
func exampleSession(s *server.Server) *server.Session {
	ss := s.NewSession(nil)
	raw := json.RawMessage(`{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"example","version":"1"}}`)
	ss.HandleRequest(context.Background(), &jsonrpc.Request{ID: jsonrpc.Int64ID(0), Method: "initialize", Params: raw}, nil)
	return ss
}

func ExampleAddResource() {
	s := server.New(mcp.Implementation{Name: "docs", Version: "1.0.0"})
	err := server.AddResource(s, &mcp.Resource{URI: "docs://readme", Name: "readme", MIMEType: "text/markdown"},
		func(ctx context.Context, req *server.ResourceRequest) (*mcp.ReadResourceResult, error) {
			// The content's URI is left empty: the server fills it in.
			return &mcp.ReadResourceResult{Contents: []mcp.ResourceContents{
				&mcp.TextResourceContents{MIMEType: "text/markdown", Text: "# Hello"}}}, nil
		})
	if err != nil {
		fmt.Println(err)
		return
	}
	ss := exampleSession(s)
	exampleCall(ss, "resources/list", map[string]any{})
	exampleCall(ss, "resources/read", map[string]any{"uri": "docs://readme"})
	exampleCall(ss, "resources/read", map[string]any{"uri": "docs://missing"})
	// Output:
	// {"resources":[{"uri":"docs://readme","name":"readme","mimeType":"text/markdown"}]}
	// {"contents":[{"uri":"docs://readme","mimeType":"text/markdown","text":"# Hello"}]}
	// -32002 Resource not found {"uri":"docs://missing"}
}

func ExampleAddResourceTemplate() {
	s := server.New(mcp.Implementation{Name: "users", Version: "1.0.0"})
	err := server.AddResourceTemplate(s, &mcp.ResourceTemplate{URITemplate: "users://{id}/profile{?fields}", Name: "profile"},
		func(ctx context.Context, req *server.ResourceRequest) (*mcp.ReadResourceResult, error) {
			if req.Vars["id"] == "0" {
				return nil, server.ErrResourceNotFound
			}
			text := fmt.Sprintf("user %s, fields %q", req.Vars["id"], req.Vars["fields"])
			return &mcp.ReadResourceResult{Contents: []mcp.ResourceContents{&mcp.TextResourceContents{Text: text}}}, nil
		},
		server.WithVarCompletion("fields", server.CompleteFromList("name", "email", "Nickname")))
	if err != nil {
		fmt.Println(err)
		return
	}
	ss := exampleSession(s)
	exampleCall(ss, "resources/read", map[string]any{"uri": "users://42/profile?fields=name%2Cemail"})
	exampleCall(ss, "resources/read", map[string]any{"uri": "users://0/profile"})
	exampleCall(ss, "completion/complete", map[string]any{"ref": map[string]any{"type": "ref/resource", "uri": "users://{id}/profile{?fields}"},
		"argument": map[string]any{"name": "fields", "value": "n"}})
	// Output:
	// {"contents":[{"uri":"users://42/profile?fields=name%2Cemail","text":"user 42, fields \"name,email\""}]}
	// -32002 Resource not found {"uri":"users://0/profile"}
	// {"completion":{"values":["name","Nickname"]}}
}
