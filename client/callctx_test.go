package client_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/toolwire/toolwire/client"
	"github.com/toolwire/toolwire/internal/testmcp"
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
	url := testmcp.ServeHTTP(t, s)

	elicit := func(ctx context.Context, p *mcp.ElicitParams) (*mcp.ElicitResult, error) {
		name, _ := ctx.Value(callKey{}).(string)
		return &mcp.ElicitResult{Action: mcp.ActionAccept, Content: map[string]any{"name": name}}, nil
	}
	for _, era := range []mcp.Era{mcp.EraLegacy, mcp.EraModern} {
		t.Run(era.String(), func(t *testing.T) {
			c := connect(t, &client.HTTP{URL: url}, client.WithEra(era), client.WithElicitationHandler(elicit))
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

// TestCallLogGetsOwnMessages: over HTTP, WithCallLog gets the log messages
// sent with its own call, not those of another call in flight; the
// client's log handler gets them all.
func TestCallLogGetsOwnMessages(t *testing.T) {
	s := server.New(mcp.Implementation{Name: "talker", Version: "1"})
	var arrived sync.WaitGroup
	arrived.Add(2)
	err := server.AddTool(s, &mcp.Tool{Name: "say"}, func(ctx context.Context, req *server.CallRequest, in struct {
		Word string `json:"word"`
	}) (string, error) {
		arrived.Done()
		arrived.Wait() // both calls in flight
		for range 3 {
			if err := req.Log(ctx, mcp.LevelInfo, "talker", in.Word); err != nil {
				return "", err
			}
		}
		return in.Word, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	url := testmcp.ServeHTTP(t, s)
	for _, era := range []mcp.Era{mcp.EraLegacy, mcp.EraModern} {
		t.Run(era.String(), func(t *testing.T) {
			if era == mcp.EraModern {
				arrived.Add(2)
			}
			var mu sync.Mutex
			all := 0
			c := connect(t, &client.HTTP{URL: url}, client.WithEra(era),
				client.WithLogHandler(func(client.LogMessage) { mu.Lock(); all++; mu.Unlock() }))
			if err := c.SetLogLevel(t.Context(), mcp.LevelDebug); err != nil {
				t.Fatal(err)
			}
			words := []string{"ping", "pong"}
			got := make([][]string, len(words))
			var wg sync.WaitGroup
			for i, w := range words {
				wg.Add(1)
				go func() {
					defer wg.Done()
					_, err := c.CallTool(t.Context(), "say", map[string]any{"word": w}, client.WithCallLog(func(m client.LogMessage) {
						got[i] = append(got[i], string(m.Data))
					}))
					if err != nil {
						t.Error(err)
					}
				}()
			}
			wg.Wait()
			for i, w := range words {
				want := `"` + w + `"`
				if len(got[i]) != 3 || got[i][0] != want || got[i][1] != want || got[i][2] != want {
					t.Errorf("call %s got %q", w, got[i])
				}
			}
			mu.Lock()
			defer mu.Unlock()
			if all != 6 {
				t.Errorf("the log handler got %d messages, want 6", all)
			}
		})
	}
}

// TestContextWithHeader: headers put on a call's context reach that call's
// POSTs (and no other call's), and cannot override the MCP headers the client sets.
func TestContextWithHeader(t *testing.T) {
	s := server.New(mcp.Implementation{Name: "h", Version: "1"})
	if err := server.AddTool(s, &mcp.Tool{Name: "noop"}, func(context.Context, *server.CallRequest, struct{}) (string, error) { return "ok", nil }); err != nil {
		t.Fatal(err)
	}
	h := streamable.NewHandler(s)
	var mu sync.Mutex
	seen := map[string][]string{} // traceparent -> MCP-Protocol-Version seen with it
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			mu.Lock()
			tp := r.Header.Get("Traceparent")
			seen[tp] = append(seen[tp], r.Header.Get("Mcp-Protocol-Version"))
			mu.Unlock()
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(func() { hs.Close(); h.Close() })
	c := connect(t, &client.HTTP{URL: hs.URL + "/mcp"}, client.WithEra(mcp.EraModern))
	const tp = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
	ctx := client.ContextWithHeader(t.Context(), http.Header{"Traceparent": {tp}, "Mcp-Protocol-Version": {"1999-01-01"}})
	if _, err := c.CallTool(ctx, "noop", nil); err != nil {
		t.Fatal(err)
	}
	if _, err := c.CallTool(t.Context(), "noop", nil); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	// The call may list the tools first, under the same context.
	got := seen[tp]
	if len(got) == 0 {
		t.Error("no POST carried the traceparent")
	}
	for _, v := range got {
		if v != "2026-07-28" {
			t.Errorf("a POST with the traceparent had protocol version %q, not the client's own", v)
		}
	}
	if len(seen[""]) == 0 {
		t.Errorf("the call without the header carried it too: %v", seen)
	}
}
