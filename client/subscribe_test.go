package client_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/toolwire/toolwire/client"
	"github.com/toolwire/toolwire/internal/testwait"
	"github.com/toolwire/toolwire/jsonrpc"
	"github.com/toolwire/toolwire/mcp"
	"github.com/toolwire/toolwire/server"
)

// TestListen opens a 2026-07-28 subscription on a toolwire server (which
// honours tool and prompt list changes only) over HTTP and in memory.
func TestListen(t *testing.T) {
	s := promptsServer(t, 1)
	clients := promptTransports(t, s)
	type sub struct {
		s   *client.Subscription
		got chan string
	}
	subs := map[string]sub{}
	for name, c := range clients {
		if c.Era() != mcp.EraModern {
			_, err := c.Listen(context.Background(), mcp.SubscriptionFilter{ToolsListChanged: true}, nil)
			if !errors.Is(err, client.ErrWrongEra) {
				t.Errorf("%s: Listen = %v, want ErrWrongEra", name, err)
			}
			continue
		}
		got := make(chan string, 8)
		sc, err := c.Listen(context.Background(), mcp.SubscriptionFilter{PromptsListChanged: true, ResourcesListChanged: true},
			func(method string, params json.RawMessage) { got <- method })
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if f := sc.Filter(); !f.PromptsListChanged || f.ResourcesListChanged || f.ToolsListChanged {
			t.Errorf("%s: acknowledged %+v", name, f)
		}
		if err := c.Subscribe(context.Background(), "file:///x"); !errors.Is(err, client.ErrWrongEra) {
			t.Errorf("%s: Subscribe = %v, want ErrWrongEra", name, err)
		}
		subs[name] = sub{sc, got}
	}
	if len(subs) != 2 {
		t.Fatalf("%d modern subscriptions", len(subs))
	}
	err := server.AddPrompt(s, &mcp.Prompt{Name: "late"}, func(context.Context, *server.PromptRequest, map[string]string) (*mcp.GetPromptResult, error) {
		return &mcp.GetPromptResult{}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for name, sb := range subs {
		if m := testwait.Recv(t, sb.got, name+": a list_changed on the subscription"); m != "notifications/prompts/list_changed" {
			t.Errorf("%s: got %s", name, m)
		}
		if err := sb.s.Close(); err != nil {
			t.Error(err)
		}
		select {
		case <-sb.s.Done():
		default:
			t.Errorf("%s: not done after Close", name)
		}
		if err := sb.s.Err(); err != nil {
			t.Errorf("%s: Err after Close = %v", name, err)
		}
		sb.s.Close() // twice is fine
	}
	// The client goes on after its subscriptions end.
	if _, err := clients["http-modern"].ListPrompts(context.Background()); err != nil {
		t.Fatal(err)
	}
}

// TestListenResourceUpdates: notifications on a listen stream, routed by
// their subscriptionId, reach the subscription's callback and
// WithResourceUpdatedHandler; closing the subscription closes the stream.
func TestListenResourceUpdates(t *testing.T) {
	closed := make(chan struct{})
	bodies := make(chan string, 1)
	f := modernFake(t, `[]`, nil)
	modern := f.handle
	f.handle = func(w http.ResponseWriter, r *http.Request, req *jsonrpc.Request) bool {
		if req.Method != "subscriptions/listen" {
			return modern(w, r, req)
		}
		bodies <- string(req.Params)
		meta := fmt.Sprintf(`"_meta":{"io.modelcontextprotocol/subscriptionId":%s}`, req.ID)
		writeSSE(w,
			sseData(`{"jsonrpc":"2.0","method":"notifications/subscriptions/acknowledged","params":{"notifications":{"resourceSubscriptions":["file:///a"]},`+meta+`}}`),
			sseData(`{"jsonrpc":"2.0","method":"notifications/resources/updated","params":{"uri":"file:///a",`+meta+`}}`),
		)
		<-r.Context().Done()
		close(closed)
		return true
	}
	var mu sync.Mutex
	var updated, onSub []string
	c := connect(t, f.transport(), client.WithResourceUpdatedHandler(func(uri string) {
		mu.Lock()
		updated = append(updated, uri)
		mu.Unlock()
	}))
	sc, err := c.Listen(context.Background(), mcp.SubscriptionFilter{ResourceSubscriptions: []string{"file:///a", "file:///b"}},
		func(method string, params json.RawMessage) {
			mu.Lock()
			onSub = append(onSub, method)
			mu.Unlock()
		})
	if err != nil {
		t.Fatal(err)
	}
	if listenBody := testwait.Recv(t, bodies, "the listen request"); !strings.Contains(listenBody, `"notifications":{"resourceSubscriptions":["file:///a","file:///b"]}`) {
		t.Errorf("listen params %s", listenBody)
	}
	if fmt.Sprint(sc.Filter().ResourceSubscriptions) != "[file:///a]" {
		t.Errorf("acknowledged %+v", sc.Filter())
	}
	testwait.WaitForNil(t, "the update to reach the handler and the subscription", func() error {
		mu.Lock()
		defer mu.Unlock()
		if u, o := fmt.Sprint(updated), fmt.Sprint(onSub); u != "[file:///a]" || o != "[notifications/resources/updated]" {
			return fmt.Errorf("updated %s, subscription saw %s", u, o)
		}
		return nil
	})
	sc.Close()
	testwait.Closed(t, closed, "the listen stream to close after Close")
}

// TestListenRefused: a server refusing subscriptions/listen fails Listen
// with its error.
func TestListenRefused(t *testing.T) {
	f := modernFake(t, `[]`, nil)
	modern := f.handle
	f.handle = func(w http.ResponseWriter, r *http.Request, req *jsonrpc.Request) bool {
		if req.Method != "subscriptions/listen" {
			return modern(w, r, req)
		}
		writeJSON(w, 400, fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"error":{"code":-32602,"message":"no"}}`, req.ID))
		return true
	}
	c := connect(t, f.transport())
	_, err := c.Listen(context.Background(), mcp.SubscriptionFilter{ToolsListChanged: true}, nil)
	var je *client.JSONRPCError
	if !errors.As(err, &je) || je.Code != -32602 {
		t.Errorf("refused: %v", err)
	}
}

// TestListenNeverAcknowledged: a server that never acknowledges
// subscriptions/listen fails Listen after WithTimeout, and the request ends
// on the server. The timeout is the subject: the server is in memory and
// the test in a synctest bubble, where the timeout fires at its time
// however busy the machine.
func TestListenNeverAcknowledged(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const timeout = 300 * time.Millisecond
		ended := make(chan struct{})
		s := standInServer(t, map[string]standIn{mcp.MethodSubscriptionListen: func(ctx context.Context, _ *server.Request, _ json.RawMessage) (any, error) {
			<-ctx.Done()
			close(ended)
			return nil, ctx.Err()
		}})
		c := connect(t, inProcess(t, s), client.WithEra(mcp.EraModern), client.WithTimeout(timeout))
		start := time.Now()
		_, err := c.Listen(context.Background(), mcp.SubscriptionFilter{PromptsListChanged: true}, nil)
		if client.CodeOf(err) != client.CodeTransport || !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("never acknowledged: %v", err)
		}
		if took := time.Since(start); took < timeout {
			t.Errorf("Listen gave up after %v, before WithTimeout (%v)", took, timeout)
		}
		testwait.Closed(t, ended, "the listen request to end on the server")
	})
}

// TestSubscribeLegacy: resources/subscribe and unsubscribe in a legacy
// session; the server's resources/updated reaches the handler.
func TestSubscribeLegacy(t *testing.T) {
	var mu sync.Mutex
	var calls []string
	record := func(method string) standIn {
		return func(ctx context.Context, r *server.Request, params json.RawMessage) (any, error) {
			var p mcp.SubscribeParams
			json.Unmarshal(params, &p)
			mu.Lock()
			calls = append(calls, method+" "+p.URI)
			mu.Unlock()
			if method == mcp.MethodSubscribe {
				if err := r.Notify(ctx, mcp.NotificationResourceUpdated, mcp.ResourceUpdatedParams{URI: p.URI}); err != nil {
					return nil, err
				}
			}
			return struct{}{}, nil
		}
	}
	s := standInServer(t, map[string]standIn{mcp.MethodSubscribe: record(mcp.MethodSubscribe), mcp.MethodUnsubscribe: record(mcp.MethodUnsubscribe)})
	updated := make(chan string, 4)
	for name, c := range promptTransports(t, s, client.WithResourceUpdatedHandler(func(uri string) { updated <- uri })) {
		mu.Lock()
		calls = nil
		mu.Unlock()
		ctx := context.Background()
		if c.Era() == mcp.EraModern {
			if err := c.Unsubscribe(ctx, "file:///a"); !errors.Is(err, client.ErrWrongEra) {
				t.Errorf("%s: Unsubscribe = %v", name, err)
			}
			continue
		}
		if err := c.Subscribe(ctx, "file:///a"); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if u := testwait.Recv(t, updated, name+": resources/updated"); u != "file:///a" {
			t.Errorf("%s: updated %s", name, u)
		}
		if err := c.Unsubscribe(ctx, "file:///a"); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		mu.Lock()
		if fmt.Sprint(calls) != "[resources/subscribe file:///a resources/unsubscribe file:///a]" {
			t.Errorf("%s: server saw %v", name, calls)
		}
		mu.Unlock()
	}
}
