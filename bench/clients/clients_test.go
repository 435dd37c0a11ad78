package clients_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/toolwire/toolwire/bench/clients"
	"github.com/toolwire/toolwire/bench/clients/bare"
	"github.com/toolwire/toolwire/bench/clients/gosdk"
	"github.com/toolwire/toolwire/bench/clients/mcpgo"
	"github.com/toolwire/toolwire/bench/clients/toolwire"
	"github.com/toolwire/toolwire/bench/impls/floor"
	"github.com/toolwire/toolwire/bench/internal/load"
)

var connects = map[string]clients.Connect{
	clients.Bare:     bare.Connect,
	clients.Toolwire: toolwire.Connect,
	clients.GoSDK:    gosdk.Connect,
	clients.MCPGo:    mcpgo.Connect,
}

// server is the floor, with its tools/call replies replaced by mode's:
// "" the floor's own, "sse" the right result as an SSE stream after a
// notification, "wrong" another text, "isError" the right text flagged as an
// error, "two" two text blocks. Every tools/call must carry the
// MCP-Protocol-Version header, as 2025-11-25 requires after initialize.
func server(t *testing.T, mode string) string {
	t.Helper()
	fl, err := floor.Handler()
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		if bytes.Contains(body, []byte(`"tools/call"`)) && r.Header.Get("Mcp-Protocol-Version") != clients.LegacyVersion {
			t.Errorf("tools/call with MCP-Protocol-Version %q, want %s", r.Header.Get("Mcp-Protocol-Version"), clients.LegacyVersion)
		}
		if mode == "" || r.Method != http.MethodPost || !bytes.Contains(body, []byte(`"tools/call"`)) {
			fl.ServeHTTP(w, r)
			return
		}
		var req struct {
			ID     json.RawMessage `json:"id"`
			Params struct {
				Arguments clients.EchoArgs `json:"arguments"`
			} `json:"params"`
		}
		if err := json.Unmarshal(body, &req); err != nil {
			t.Errorf("bad tools/call: %v", err)
		}
		msg := strconv.Quote(req.Params.Arguments.Message)
		result := `{"content":[{"type":"text","text":` + msg + `}]}`
		switch mode {
		case "wrong":
			result = `{"content":[{"type":"text","text":"not the message"}]}`
		case "isError":
			result = `{"isError":true,"content":[{"type":"text","text":` + msg + `}]}`
		case "two":
			result = `{"content":[{"type":"text","text":` + msg + `},{"type":"text","text":` + msg + `}]}`
		}
		reply := `{"jsonrpc":"2.0","id":` + string(req.ID) + `,"result":` + result + `}`
		if mode == "sse" {
			w.Header().Set("Content-Type", "text/event-stream")
			fmt.Fprintf(w, "event: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{\"level\":\"info\",\"data\":\"x\"}}\n\nevent: message\ndata: %s\n\n", reply)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, reply)
	}))
	t.Cleanup(srv.Close)
	return srv.URL + "/mcp"
}

func connect(t *testing.T, name, url string) clients.Caller {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	hc := load.NewHTTPClient(8)
	t.Cleanup(hc.CloseIdleConnections)
	c, err := connects[name](ctx, url, hc)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// TestEcho: every client calls the floor's echo, alone and concurrently, and
// reads a reply sent as SSE.
func TestEcho(t *testing.T) {
	for _, name := range clients.All {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			c := connect(t, name, server(t, ""))
			if err := c.Echo(ctx, `hi "there"`); err != nil {
				t.Fatal(err)
			}
			var wg sync.WaitGroup
			errs := make(chan error, 8*10)
			for k := range 8 {
				wg.Go(func() {
					for i := range 10 {
						errs <- c.Echo(ctx, fmt.Sprintf("c%d-%d", k, i))
					}
				})
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				if err != nil {
					t.Fatal("concurrent:", err)
				}
			}
			if err := connect(t, name, server(t, "sse")).Echo(ctx, "over SSE"); err != nil {
				t.Fatal("SSE reply:", err)
			}
		})
	}
}

// TestWrongReplies: no client passes a reply that is not the echoed text as
// one text block.
func TestWrongReplies(t *testing.T) {
	for _, name := range clients.All {
		for _, mode := range []string{"wrong", "isError", "two"} {
			t.Run(name+"/"+mode, func(t *testing.T) {
				c := connect(t, name, server(t, mode))
				if err := c.Echo(context.Background(), "hello"); err == nil {
					t.Fatal("a wrong reply passed")
				}
			})
		}
	}
}

func TestCheckEcho(t *testing.T) {
	for _, tc := range []struct {
		isError bool
		blocks  int
		text    string
		isText  bool
		ok      bool
	}{
		{false, 1, "m", true, true},
		{true, 1, "m", true, false},
		{false, 0, "", false, false},
		{false, 2, "m", true, false},
		{false, 1, "m", false, false},
		{false, 1, "n", true, false},
	} {
		if err := clients.CheckEcho("m", tc.isError, tc.blocks, tc.text, tc.isText); (err == nil) != tc.ok {
			t.Errorf("%+v: err = %v", tc, err)
		}
	}
}
