package client_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/toolwire/toolwire/client"
	"github.com/toolwire/toolwire/internal/testenv"
	"github.com/toolwire/toolwire/internal/testmcp"
	"github.com/toolwire/toolwire/internal/testwait"
	"github.com/toolwire/toolwire/jsonrpc"
	"github.com/toolwire/toolwire/mcp"
	"github.com/toolwire/toolwire/reference"
)

// TestMain lets the test binary act as a scripted stdio server (see
// fakeStdioServer) when started with TW_FAKE_STDIO set, or as a real
// toolwire server that asks the client back (TW_FAKE_STDIO=toolwire-roots),
// or as the benchmarks' HTTP floor server (TW_BENCH_FLOOR set).
func TestMain(m *testing.M) {
	if os.Getenv("TW_BENCH_FLOOR") != "" {
		serveBenchFloor() // see bench_test.go
		os.Exit(0)
	}
	if mode := os.Getenv("TW_FAKE_STDIO"); mode == "toolwire-roots" {
		serveServerRequestsStdio()
		os.Exit(0)
	} else if mode != "" {
		fakeStdioServer(mode)
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// fakeStdioServer speaks just enough legacy MCP on stdin/stdout to be
// initialized, then misbehaves as mode says:
//   - "die": exits with status 3 when a tools/call arrives;
//   - "cancel": never answers tools/call, and prints each received
//     notifications/cancelled to stderr as "CANCELLED <id>";
//   - "garbage": answers tools/call with a line that is not JSON;
//   - "stubborn": ignores SIGTERM and stays up after stdin closes;
//   - "huge": answers tools/call with a 64 KiB line, then a normal answer
//     to the next call.
func fakeStdioServer(mode string) {
	if mode == "stubborn" {
		signal.Ignore(syscall.SIGTERM)
		fmt.Fprintf(os.Stderr, "PID %d\n", os.Getpid())
		defer func() { select {} }() // outlive stdin
	}
	calls := 0
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 1<<20), 1<<20)
	out := bufio.NewWriter(os.Stdout)
	send := func(s string) { out.WriteString(s + "\n"); out.Flush() }
	fmt.Fprintln(os.Stderr, "fake server starting in mode", mode)
	for in.Scan() {
		msg, _, derr := jsonrpc.Decode(in.Bytes())
		if derr != nil {
			continue
		}
		switch m := msg.(type) {
		case *jsonrpc.Request:
			switch m.Method {
			case "initialize":
				send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"fake","version":"1"}}}`, m.ID))
			case "tools/list":
				send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":{"tools":[{"name":"work","inputSchema":{"type":"object"}}]}}`, m.ID))
			case "tools/call":
				switch mode {
				case "die":
					fmt.Fprintln(os.Stderr, "fake server: crashing on purpose")
					os.Exit(3)
				case "garbage":
					send(`{"jsonrpc":"2.0","id":` + m.ID.String() + `,"result":{"content":[{"type":"text"`)
				case "huge":
					calls++
					text := "small"
					if calls == 1 {
						text = strings.Repeat("x", 64<<10)
					}
					send(`{"jsonrpc":"2.0","id":` + m.ID.String() + `,"result":{"content":[{"type":"text","text":"` + text + `"}]}}`)
				case "stubborn":
					send(`{"jsonrpc":"2.0","id":` + m.ID.String() + `,"result":{"content":[{"type":"text","text":"worked"}]}}`)
				}
			default:
				send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"error":{"code":-32601,"message":"no %s here"}}`, m.ID, m.Method))
			}
		case *jsonrpc.Notification:
			if m.Method == "notifications/cancelled" {
				var p struct {
					RequestID json.RawMessage `json:"requestId"`
				}
				_ = json.Unmarshal(m.Params, &p)
				fmt.Fprintf(os.Stderr, "CANCELLED %s\n", p.RequestID)
			}
		}
	}
}

func fakeCommand(t *testing.T, mode string) *client.Command {
	t.Helper()
	return selfCommand(t, "TW_FAKE_STDIO", mode)
}

// selfCommand runs this test binary again as a stdio server, with the
// environment variable env set to mode (which server, and how it behaves,
// is up to the init or TestMain that reads it).
func selfCommand(t *testing.T, env, mode string) *client.Command {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return &client.Command{Path: exe, Env: append(os.Environ(), env+"="+mode), GracePeriod: 500 * time.Millisecond}
}

func toolwireServe(t *testing.T) *client.Command {
	t.Helper()
	return &client.Command{Path: testenv.Toolwire(t), Args: []string{"serve", "--stdio", "--log-level", "warn"}}
}

// connect connects a client over tr, failing the test if that fails, and
// closes it when the test ends (testmcp.Connect).
var connect = testmcp.Connect

func TestStdioToolwireServe(t *testing.T) {
	for _, era := range []mcp.Era{mcp.EraAuto, mcp.EraModern, mcp.EraLegacy} {
		t.Run(era.String(), func(t *testing.T) {
			c := connect(t, toolwireServe(t), client.WithEra(era))
			wantEra := mcp.EraModern
			if era == mcp.EraLegacy {
				wantEra = mcp.EraLegacy
			}
			if c.Era() != wantEra {
				t.Fatalf("era = %v, want %v", c.Era(), wantEra)
			}
			if c.ServerInfo().Name != reference.Info().Name {
				t.Errorf("server info = %+v", c.ServerInfo())
			}
			ctx := context.Background()
			tools, err := c.ListTools(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if len(tools) < 10 {
				t.Fatalf("got %d tools", len(tools))
			}
			res, err := c.CallTool(ctx, "get-sum", map[string]any{"a": 7, "b": 5})
			if err != nil {
				t.Fatal(err)
			}
			if got := res.Content[0].(*mcp.TextContent).Text; got != "The sum of 7 and 5 is 12." {
				t.Errorf("get-sum = %q", got)
			}
			w, err := client.CallToolAs[reference.CityWeather](ctx, c, "get-structured-content", map[string]string{"location": "Chicago"})
			if err != nil {
				t.Fatal(err)
			}
			if w.Conditions != "Light rain / drizzle" || w.Temperature != 36 {
				t.Errorf("weather = %+v", w)
			}
			_, err = c.CallTool(ctx, "safe_divide", map[string]any{"a": 1, "b": 0})
			var te *client.ToolError
			if !errors.As(err, &te) || client.CodeOf(err) != client.CodeToolError {
				t.Fatalf("safe_divide by zero: %v", err)
			}
			if !strings.Contains(te.Error(), "divide by zero") {
				t.Errorf("tool error = %v", te)
			}
			_, err = c.CallTool(ctx, "no-such-tool", nil)
			var je *client.JSONRPCError
			if !errors.As(err, &je) || je.Code != jsonrpc.CodeInvalidParams {
				t.Fatalf("unknown tool: %v", err)
			}
		})
	}
}

func TestStdioProgress(t *testing.T) {
	c := connect(t, toolwireServe(t))
	var mu sync.Mutex
	var got []client.Progress
	res, err := c.CallTool(context.Background(), "trigger-long-running-operation", map[string]any{"duration": 0.2, "steps": 4},
		client.WithProgress(func(p client.Progress) { mu.Lock(); got = append(got, p); mu.Unlock() }))
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Content) != 1 {
		t.Fatalf("content = %v", res.Content)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(got) != 4 {
		t.Fatalf("got %d progress reports: %+v", len(got), got)
	}
	for i, p := range got {
		if p.Progress != float64(i+1) || p.Total != 4 {
			t.Errorf("report %d = %+v", i, p)
		}
	}
}

func TestStdioChildDiesMidCall(t *testing.T) {
	c := connect(t, fakeCommand(t, "die"), client.WithEra(mcp.EraLegacy))
	ctx := testwait.Context(t)
	_, err := c.CallTool(ctx, "work", nil, client.WithOutputValidation(false))
	if client.CodeOf(err) != client.CodeTransport {
		t.Fatalf("err = %v (code %q), want a transport error", err, client.CodeOf(err))
	}
	if ctx.Err() != nil {
		t.Fatal("the call waited for its deadline instead of failing when the child died")
	}
	for _, want := range []string{"exit status 3", "crashing on purpose"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not mention %q", err, want)
		}
	}
	// Later calls fail at once, too.
	if _, err := c.CallTool(ctx, "work", nil); client.CodeOf(err) != client.CodeTransport {
		t.Errorf("second call: %v", err)
	}
}

func TestStdioMalformedReply(t *testing.T) {
	c := connect(t, fakeCommand(t, "garbage"), client.WithEra(mcp.EraLegacy), client.WithTimeout(testwait.Limit))
	_, err := c.CallTool(context.Background(), "work", nil, client.WithOutputValidation(false))
	if client.CodeOf(err) != client.CodeProtocol {
		t.Fatalf("err = %v, want a protocol error", err)
	}
}

func newTextLogger(w io.Writer) *slog.Logger { return slog.New(slog.NewTextHandler(w, nil)) }

func TestStdioCloseEscalatesToKill(t *testing.T) {
	var logs testenv.SyncBuffer
	c, err := client.Connect(context.Background(), fakeCommand(t, "stubborn"), client.WithEra(mcp.EraLegacy), client.WithLogger(newTextLogger(&logs)))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.CallTool(context.Background(), "work", nil, client.WithOutputValidation(false)); err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(logs.String(), "PID ")
	if !ok {
		t.Fatalf("no PID in the child's stderr: %s", logs.String())
	}
	pid, err := strconv.Atoi(strings.TrimRightFunc(strings.Fields(rest)[0], func(r rune) bool { return r < '0' || r > '9' }))
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	// Close returns only once the child is reaped: it no longer exists.
	if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
		t.Fatalf("child %d still there after Close (kill -0: %v)", pid, err)
	}
	if _, err := c.CallTool(context.Background(), "work", nil); client.CodeOf(err) != client.CodeTransport {
		t.Errorf("call after Close: %v", err)
	}
}

func TestStdioMaxMessageSize(t *testing.T) {
	c := connect(t, fakeCommand(t, "huge"), client.WithEra(mcp.EraLegacy), client.WithLimits(client.Limits{MaxMessageBytes: 4096}))
	_, err := c.CallTool(context.Background(), "work", nil, client.WithOutputValidation(false))
	if client.CodeOf(err) != client.CodeTransport || !strings.Contains(err.Error(), "4096-byte limit") {
		t.Fatalf("err = %v", err)
	}
	// The oversized line was skipped; the connection still works.
	res, err := c.CallTool(context.Background(), "work", nil, client.WithOutputValidation(false))
	if err != nil || res.Content[0].(*mcp.TextContent).Text != "small" {
		t.Fatalf("next call: %v %+v", err, res)
	}
}
