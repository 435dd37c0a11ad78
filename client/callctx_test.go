package client_test

import (
	"context"
	"fmt"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/toolwire/toolwire/client"
	"github.com/toolwire/toolwire/mcp"
	"github.com/toolwire/toolwire/server"
	"github.com/toolwire/toolwire/transport/streamable"
)

type callKey struct{}

// TestServerRequestSeesCallContext: an elicitation that comes with a call
// (on its reply stream in a 2025-era session, as an input request in
// 2026-07-28) reaches the handler with that call's context values, so two
// calls in flight at once each get their own answer.
func TestServerRequestSeesCallContext(t *testing.T) {
	s := server.New(mcp.Implementation{Name: "asker", Version: "1"})
	release := make(chan struct{})
	var arrived sync.WaitGroup
	err := server.AddTool(s, &mcp.Tool{Name: "who"}, func(ctx context.Context, req *server.CallRequest, _ struct{}) (string, error) {
		if req.Peer.Era == mcp.EraLegacy {
			// Both calls are in flight before either asks.
			arrived.Done()
			<-release
		}
		res, err := req.Elicit(ctx, &mcp.ElicitParams{Message: "who?",
			RequestedSchema: []byte(`{"type":"object","properties":{"name":{"type":"string"}}}`)})
		if err != nil {
			return "", err
		}
		return fmt.Sprint(res.Content["name"]), nil
	})
	if err != nil {
		t.Fatal(err)
	}
	h := streamable.NewHandler(s)
	hs := httptest.NewServer(h)
	t.Cleanup(func() { hs.Close(); h.Close() })

	elicit := func(ctx context.Context, p *mcp.ElicitParams) (*mcp.ElicitResult, error) {
		name, _ := ctx.Value(callKey{}).(string)
		return &mcp.ElicitResult{Action: mcp.ActionAccept, Content: map[string]any{"name": name}}, nil
	}
	for _, era := range []mcp.Era{mcp.EraLegacy, mcp.EraModern} {
		t.Run(era.String(), func(t *testing.T) {
			c := connect(t, &client.HTTP{URL: hs.URL + "/mcp"}, client.WithEra(era), client.WithElicitationHandler(elicit))
			names := []string{"first", "second"}
			if era == mcp.EraLegacy {
				arrived.Add(len(names))
				go func() { arrived.Wait(); close(release) }()
			}
			got := make([]string, len(names))
			errs := make([]error, len(names))
			var wg sync.WaitGroup
			for i, name := range names {
				wg.Add(1)
				go func() {
					defer wg.Done()
					ctx := context.WithValue(t.Context(), callKey{}, name)
					res, err := c.CallTool(ctx, "who", nil)
					if err != nil {
						errs[i] = err
						return
					}
					got[i] = textOf(res)
				}()
			}
			wg.Wait()
			for i, name := range names {
				if errs[i] != nil {
					t.Fatalf("call %s: %v", name, errs[i])
				}
				if got[i] != name {
					t.Errorf("call %s was answered for %q", name, got[i])
				}
			}
		})
	}
}
