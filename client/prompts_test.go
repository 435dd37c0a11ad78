package client_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/toolwire/toolwire/client"
	"github.com/toolwire/toolwire/jsonrpc"
	"github.com/toolwire/toolwire/mcp"
	"github.com/toolwire/toolwire/server"
	"github.com/toolwire/toolwire/transport/memory"
	"github.com/toolwire/toolwire/transport/streamable"
)

// promptsServer is a toolwire server with n prompts ("p00", "p01", ...),
// each with a required argument "topic", listed two to a page.
func promptsServer(t *testing.T, n int) *server.Server {
	t.Helper()
	s := server.New(mcp.Implementation{Name: "prompts", Version: "1"}, server.WithLimits(server.Limits{PageSize: 2}))
	for i := range n {
		p := &mcp.Prompt{Name: fmt.Sprintf("p%02d", i), Description: "a prompt",
			Arguments: []mcp.PromptArgument{{Name: "topic", Required: true}, {Name: "tone"}}}
		err := server.AddPrompt(s, p, func(_ context.Context, req *server.PromptRequest, args map[string]string) (*mcp.GetPromptResult, error) {
			return &mcp.GetPromptResult{Description: req.Name, Messages: []mcp.PromptMessage{
				{Role: mcp.RoleUser, Content: &mcp.TextContent{Text: "Tell me about " + args["topic"] + " " + args["tone"]}},
				{Role: mcp.RoleAssistant, Content: &mcp.EmbeddedResource{Resource: &mcp.TextResourceContents{URI: "note:1", Text: "n"}}},
				{Role: mcp.RoleUser, Content: &mcp.ImageContent{Data: []byte{1, 2, 3}, MIMEType: "image/png"}},
			}}, nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	return s
}

// promptTransports connects to s over HTTP in both eras and in memory.
func promptTransports(t *testing.T, s *server.Server, opts ...client.Option) map[string]*client.Client {
	t.Helper()
	return eraTransports(t, s, []mcp.Era{mcp.EraLegacy, mcp.EraModern}, opts...)
}

// legacyTransports connects to s over HTTP and in memory in the legacy
// era only, for what 2026-07-28 has no counterpart of (a 2025-11-25 task,
// tasks/list).
func legacyTransports(t *testing.T, s *server.Server, opts ...client.Option) map[string]*client.Client {
	t.Helper()
	return eraTransports(t, s, []mcp.Era{mcp.EraLegacy}, opts...)
}

// eraTransports connects to s over HTTP and in memory in each of eras;
// the clients are named "http-legacy", "memory-modern" and so on.
func eraTransports(t *testing.T, s *server.Server, eras []mcp.Era, opts ...client.Option) map[string]*client.Client {
	t.Helper()
	h := streamable.NewHandler(s)
	hs := httptest.NewServer(h)
	t.Cleanup(func() { hs.Close(); h.Close() })
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	with := func(o ...client.Option) []client.Option { return append(append([]client.Option{}, opts...), o...) }
	clients := map[string]*client.Client{}
	for _, era := range eras {
		name := map[mcp.Era]string{mcp.EraLegacy: "legacy", mcp.EraModern: "modern"}[era]
		clients["http-"+name] = connect(t, &client.HTTP{URL: hs.URL + "/mcp"}, with(client.WithEra(era))...)
		clients["memory-"+name] = connect(t, &client.Conn{Conn: memory.Serve(ctx, s)}, with(client.WithEra(era))...)
	}
	return clients
}

func TestListPromptsAllPages(t *testing.T) {
	s := promptsServer(t, 5)
	for name, c := range promptTransports(t, s) {
		ctx := context.Background()
		prompts, err := c.ListPrompts(ctx)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		var names []string
		for _, p := range prompts {
			names = append(names, p.Name)
		}
		if fmt.Sprint(names) != "[p00 p01 p02 p03 p04]" || len(prompts[0].Arguments) != 2 || !prompts[0].Arguments[0].Required {
			t.Errorf("%s: listed %v %+v", name, names, prompts[0])
		}
		pages := 0
		for page, err := range c.PromptPages(ctx) {
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			pages++
			if modern := strings.HasSuffix(name, "modern"); modern != (page.TTLMs != nil) {
				t.Errorf("%s: ttlMs %v", name, page.TTLMs)
			}
			if pages == 1 {
				break // stopping early is allowed
			}
		}
		if pages != 1 {
			t.Errorf("%s: %d pages after break", name, pages)
		}
	}
}

func TestListPromptsHonoursMaxPages(t *testing.T) {
	s := promptsServer(t, 5) // three pages
	for name, c := range promptTransports(t, s, client.WithLimits(client.Limits{MaxPages: 2})) {
		_, err := c.ListPrompts(context.Background())
		var pe *client.ProtocolError
		if !errors.As(err, &pe) || !strings.Contains(err.Error(), "more than 2 pages") {
			t.Errorf("%s: %v", name, err)
		}
	}
}

func TestGetPromptBothEras(t *testing.T) {
	s := promptsServer(t, 1)
	for name, c := range promptTransports(t, s) {
		ctx := context.Background()
		res, err := c.GetPrompt(ctx, "p00", map[string]string{"topic": "Go", "tone": "calmly"})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if res.Description != "p00" || len(res.Messages) != 3 {
			t.Fatalf("%s: %+v", name, res)
		}
		if tc, ok := res.Messages[0].Content.(*mcp.TextContent); !ok || tc.Text != "Tell me about Go calmly" {
			t.Errorf("%s: first message %+v", name, res.Messages[0])
		}
		if er, ok := res.Messages[1].Content.(*mcp.EmbeddedResource); !ok || res.Messages[1].Role != mcp.RoleAssistant || er.Resource.ResourceURI() != "note:1" {
			t.Errorf("%s: second message %+v", name, res.Messages[1])
		}
		if img, ok := res.Messages[2].Content.(*mcp.ImageContent); !ok || string(img.Data) != "\x01\x02\x03" {
			t.Errorf("%s: third message %+v", name, res.Messages[2])
		}
		var je *client.JSONRPCError
		_, err = c.GetPrompt(ctx, "p00", nil)
		if !errors.As(err, &je) || je.Code != jsonrpc.CodeInvalidParams || !strings.Contains(je.Message, `"topic"`) {
			t.Errorf("%s: missing argument: %v", name, err)
		}
		_, err = c.GetPrompt(ctx, "nope", nil)
		if !errors.As(err, &je) || je.Code != jsonrpc.CodeInvalidParams || !strings.Contains(je.Message, `"nope"`) {
			t.Errorf("%s: unknown prompt: %v", name, err)
		}
	}
}

// A prompt name that is unsafe in a header still reaches the server over
// 2026-07-28 HTTP (Mcp-Name carries it base64-encoded, and the server
// checks it against the body).
func TestGetPromptUnsafeName(t *testing.T) {
	s := server.New(mcp.Implementation{Name: "prompts", Version: "1"})
	name := "résumé\nreview"
	if err := server.AddPrompt(s, &mcp.Prompt{Name: name}, func(_ context.Context, req *server.PromptRequest, _ map[string]string) (*mcp.GetPromptResult, error) {
		if h := req.Header(); h != nil && req.Peer.Era == mcp.EraModern && h.Get("Mcp-Name") == "" {
			return nil, errors.New("no Mcp-Name")
		}
		return &mcp.GetPromptResult{Messages: []mcp.PromptMessage{{Role: mcp.RoleUser, Content: &mcp.TextContent{Text: req.Name}}}}, nil
	}); err != nil {
		t.Fatal(err)
	}
	for cname, c := range promptTransports(t, s) {
		res, err := c.GetPrompt(context.Background(), name, nil)
		if err != nil {
			t.Fatalf("%s: %v", cname, err)
		}
		if res.Messages[0].Content.(*mcp.TextContent).Text != name {
			t.Errorf("%s: %+v", cname, res)
		}
	}
}

func TestGetPromptRefusesBadResult(t *testing.T) {
	f := newFake(t)
	f.handle = func(w http.ResponseWriter, r *http.Request, req *jsonrpc.Request) bool {
		switch req.Method {
		case "server/discover":
			writeResult(w, req.ID, `{"resultType":"complete","supportedVersions":["2026-07-28"],"capabilities":{"prompts":{}},"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"f","version":"1"}}}`)
		case "prompts/get":
			writeResult(w, req.ID, `{"resultType":"complete","messages":[{"role":"user","content":{"type":"text","text":"ok"}},{"role":"system","content":{"type":"text","text":"x"}}]}`)
		case "prompts/list":
			writeResult(w, req.ID, `{"resultType":"complete","prompts":[{"name":"a"},{"title":"no name"}],"ttlMs":0,"cacheScope":"public"}`)
		default:
			return false
		}
		return true
	}
	c := connect(t, f.transport(), client.WithEra(mcp.EraModern))
	_, err := c.GetPrompt(context.Background(), "a", nil)
	var pe *client.ProtocolError
	if !errors.As(err, &pe) || pe.Path != "messages[1]" {
		t.Errorf("bad role: %v", err)
	}
	_, err = c.ListPrompts(context.Background())
	if !errors.As(err, &pe) || pe.Path != "/prompts/1" {
		t.Errorf("nameless prompt: %v", err)
	}
}
