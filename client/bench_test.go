package client_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/toolwire/toolwire/client"
	"github.com/toolwire/toolwire/mcp"
)

// The benchmarks here are the client workload of bench/ (C1) in small: a
// tools/call of "echo" over Streamable HTTP against a bare net/http server
// that answers like the benchmark's floor. The server runs in a child
// process (this test binary started with TW_BENCH_FLOOR set), so allocs/op
// counts the caller's allocations alone, net/http's client side included:
//
//	go test -run '^$' -bench CallTool -benchmem ./client/
//
// BenchmarkCallToolHTTP/bare is a caller written with net/http and
// encoding/json only, the figure the client is held to. cpu-µs/op is the
// user and system CPU time of this process per call.

// floorVersion is the session revision the floor answers initialize with.
const floorVersion = "2025-11-25"

// floorRequest is what the floor reads of a request.
type floorRequest struct {
	ID     json.RawMessage `json:"id,omitempty"`
	Method string          `json:"method"`
	Params struct {
		Name      string          `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
		Meta      *struct {
			ProtocolVersion string `json:"io.modelcontextprotocol/protocolVersion"`
		} `json:"_meta"`
	} `json:"params"`
}

// serveBenchFloor answers initialize (no session id), notifications (202),
// tools/list and tools/call "echo" in either era, on a loopback port it
// prints on stdout, until stdin closes.
func serveBenchFloor() {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Printf("http://%s/mcp\n", ln.Addr())
	go func() { _, _ = io.Copy(io.Discard, os.Stdin); os.Exit(0) }()
	serverMeta := map[string]any{"io.modelcontextprotocol/serverInfo": map[string]string{"name": "floor", "version": "1"}}
	_ = http.Serve(ln, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			w.WriteHeader(http.StatusMethodNotAllowed)
			return
		}
		body, _ := io.ReadAll(r.Body)
		var req floorRequest
		if json.Unmarshal(body, &req) != nil || len(req.ID) == 0 {
			w.WriteHeader(http.StatusAccepted)
			return
		}
		modern := req.Params.Meta != nil && req.Params.Meta.ProtocolVersion != ""
		var result any
		switch req.Method {
		case "initialize":
			result = map[string]any{"protocolVersion": floorVersion, "capabilities": map[string]any{"tools": map[string]any{}},
				"serverInfo": map[string]string{"name": "floor", "version": "1"}}
		case "server/discover":
			result = map[string]any{"resultType": "complete", "supportedVersions": []string{"2026-07-28"},
				"capabilities": map[string]any{"tools": map[string]any{}}, "_meta": serverMeta}
		case "tools/list":
			tools := json.RawMessage(`[{"name":"echo","description":"Echoes the message back as one text block","inputSchema":{"type":"object","properties":{"message":{"type":"string","description":"the text to send back"}},"required":["message"],"additionalProperties":false}}]`)
			if modern {
				result = map[string]any{"tools": tools, "resultType": "complete", "_meta": serverMeta}
			} else {
				result = map[string]any{"tools": tools}
			}
		case "tools/call":
			var in struct {
				Message string `json:"message"`
			}
			_ = json.Unmarshal(req.Params.Arguments, &in)
			res := map[string]any{"content": []map[string]string{{"type": "text", "text": in.Message}}}
			if modern {
				res["resultType"], res["_meta"] = "complete", serverMeta
			}
			result = res
		default:
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"error":{"code":-32601,"message":"method not found"}}`, req.ID)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"jsonrpc": "2.0", "id": req.ID, "result": result})
	}))
}

// benchFloor starts the floor in a child process and returns its URL.
func benchFloor(b *testing.B) string {
	b.Helper()
	exe, err := os.Executable()
	if err != nil {
		b.Fatal(err)
	}
	cmd := exec.Command(exe)
	cmd.Env = append(os.Environ(), "TW_BENCH_FLOOR=1")
	stdin, err := cmd.StdinPipe()
	if err != nil {
		b.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { stdin.Close(); _ = cmd.Wait() })
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		b.Fatalf("the floor printed no URL: %v", err)
	}
	return line[:len(line)-1]
}

// benchHTTPClient is the keep-alive client every caller is handed, as in
// the benchmark's client workload.
func benchHTTPClient() *http.Client {
	return &http.Client{Timeout: time.Minute, Transport: &http.Transport{
		MaxIdleConns: 8, MaxIdleConnsPerHost: 8, IdleConnTimeout: time.Minute, DisableCompression: true,
	}}
}

// reportCPU starts counting this process's CPU time; the function it
// returns reports it per operation.
func reportCPU(b *testing.B) func() {
	cpu := func() time.Duration {
		var ru syscall.Rusage
		_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
		return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	}
	start := cpu()
	return func() {
		b.ReportMetric(float64((cpu()-start).Microseconds())/float64(b.N), "cpu-µs/op")
	}
}

type echoArgs struct {
	Message string `json:"message"`
}

// checkEcho checks an echo result as the workload does.
func checkEcho(b *testing.B, res *mcp.CallToolResult, want string) {
	if res.IsError || len(res.Content) != 1 {
		b.Fatalf("echo result %+v", res)
	}
	if tc, ok := res.Content[0].(*mcp.TextContent); !ok || tc.Text != want {
		b.Fatalf("echo returned %+v, want %q", res.Content[0], want)
	}
}

func BenchmarkCallToolHTTP(b *testing.B) {
	url := benchFloor(b)
	msgs := make([]string, 1024)
	for i := range msgs {
		msgs[i] = "cost-" + strconv.Itoa(i)
	}
	for _, era := range []mcp.Era{mcp.EraLegacy, mcp.EraModern} {
		b.Run(era.String(), func(b *testing.B) {
			ctx := context.Background()
			hc := benchHTTPClient()
			defer hc.CloseIdleConnections()
			c, err := client.Connect(ctx, &client.HTTP{URL: url, Client: hc}, client.WithEra(era))
			if err != nil {
				b.Fatal(err)
			}
			defer c.Close()
			if _, err := c.CallTool(ctx, "echo", echoArgs{"warm"}); err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			defer reportCPU(b)()
			i := 0
			for b.Loop() {
				m := msgs[i%len(msgs)]
				i++
				res, err := c.CallTool(ctx, "echo", echoArgs{m})
				if err != nil {
					b.Fatal(err)
				}
				checkEcho(b, res, m)
			}
		})
	}
	b.Run("bare", func(b *testing.B) {
		ctx := context.Background()
		hc := benchHTTPClient()
		defer hc.CloseIdleConnections()
		post := func(body []byte) (*http.Response, error) {
			req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
			if err != nil {
				return nil, err
			}
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
			req.Header.Set("Mcp-Protocol-Version", floorVersion)
			return hc.Do(req)
		}
		type request struct {
			JSONRPC string `json:"jsonrpc"`
			ID      int64  `json:"id"`
			Method  string `json:"method"`
			Params  any    `json:"params"`
		}
		type callParams struct {
			Name      string   `json:"name"`
			Arguments echoArgs `json:"arguments"`
		}
		var res struct {
			ID     *int64 `json:"id"`
			Result struct {
				Content []struct {
					Type string `json:"type"`
					Text string `json:"text"`
				} `json:"content"`
				IsError bool `json:"isError"`
			} `json:"result"`
		}
		b.ReportAllocs()
		defer reportCPU(b)()
		var id int64
		for b.Loop() {
			id++
			m := msgs[id%int64(len(msgs))]
			body, err := json.Marshal(request{"2.0", id, "tools/call", callParams{"echo", echoArgs{m}}})
			if err != nil {
				b.Fatal(err)
			}
			resp, err := post(body)
			if err != nil {
				b.Fatal(err)
			}
			data, err := io.ReadAll(resp.Body)
			resp.Body.Close()
			if err != nil {
				b.Fatal(err)
			}
			res.Result.Content = nil
			if err := json.Unmarshal(data, &res); err != nil || res.ID == nil || *res.ID != id {
				b.Fatalf("reply %s: %v", data, err)
			}
			if len(res.Result.Content) != 1 || res.Result.Content[0].Text != m {
				b.Fatalf("reply %s", data)
			}
		}
	})
}
