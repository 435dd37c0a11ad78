package flow_test

import (
	"bufio"
	"context"
	"fmt"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/toolwire/toolwire/client"
	"github.com/toolwire/toolwire/flow"
	"github.com/toolwire/toolwire/internal/testenv"
)

// benchCalls is how many sequential tool calls one benchmark iteration
// makes, directly and through the runner.
const benchCalls = 1000

// BenchmarkFlowCalls compares benchCalls sequential tools/call through the
// runner (a for_each with an argument template and a result) with the same
// calls made directly with the client, against one in-process server. The
// ratio metric is runner time / direct time.
func BenchmarkFlowCalls(b *testing.B) {
	ts := newTestServer(b)
	c := ts.connect(b)
	ctx := context.Background()
	items := benchItems()
	f := parse(b, header+`inputs:
  items: {type: array, default: [`+strings.Join(items, ",")+`]}
`+echoSteps("text"))
	fl := f.Flows[0]
	compareRunner(b, func() { callEcho(b, c, "text", items) },
		func() (*flow.Result, error) { return fl.Run(ctx, flow.WithClient("srv", c)) })
}

// BenchmarkFlowCallsServe is the runner's overhead against a real `toolwire
// serve` over Streamable HTTP (loopback): benchCalls sequential calls of
// its echo tool made directly with the client library (connect, calls,
// close), against a flow whose own client does the same (a for_each of
// one call step with an argument template). The ratio metric is runner
// time / direct time:
// go test -run '^$' -bench FlowCallsServe -benchtime 5x ./flow/
func BenchmarkFlowCallsServe(b *testing.B) {
	url := serveHTTP(b)
	ctx := context.Background()
	items := benchItems()
	f := parse(b, `inputs:
  url: {type: string}
  items: {type: array, default: [`+strings.Join(items, ",")+`]}
clients:
  ref:
    url: "${{ inputs.url }}"
`+echoSteps("message"))
	fl := f.Flows[0]
	compareRunner(b, func() {
		c, err := client.Connect(ctx, &client.HTTP{URL: url})
		if err != nil {
			b.Fatal(err)
		}
		callEcho(b, c, "message", items)
		c.Close()
	}, func() (*flow.Result, error) { return fl.Run(ctx, flow.WithInputs(map[string]string{"url": url})) })
}

// serveHTTP starts `toolwire serve` on a loopback port for the benchmark
// and returns its MCP URL; the process is stopped by PID at cleanup.
func serveHTTP(b *testing.B) string {
	b.Helper()
	cmd := exec.Command(testenv.Toolwire(b), "serve", "--addr", "127.0.0.1:0", "--data-dir", b.TempDir(), "--log-level", "info")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	urls := make(chan string, 1)
	go func() {
		re := regexp.MustCompile(`url=(\S+)`)
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			if m := re.FindStringSubmatch(sc.Text()); m != nil {
				select {
				case urls <- m[1]:
				default:
				}
			}
		}
	}()
	select {
	case u := <-urls:
		return u
	case <-time.After(30 * time.Second):
		b.Fatal("toolwire serve did not report its URL")
		return ""
	}
}

// benchItems are the for_each items: "0" to benchCalls-1.
func benchItems() []string {
	items := make([]string, benchCalls)
	for i := range items {
		items[i] = fmt.Sprint(i)
	}
	return items
}

// echoSteps is a benchmark flow's steps: a for_each over inputs.items
// calling the echo tool once an item with "n=<item>" as its argument named
// key, the calls callEcho makes directly.
func echoSteps(key string) string {
	return `steps:
  - for_each: "${{ inputs.items }}"
    do:
      - name: call
        call: {tool: echo, arguments: {` + key + `: "n=${{ item }}"}}
`
}

// callEcho calls the echo tool once an item, in turn, with "n=<item>" as
// its argument named key: the direct calls a benchmark's flow makes too.
func callEcho(b *testing.B, c *client.Client, key string, items []string) {
	for _, item := range items {
		if _, err := c.CallTool(context.Background(), "echo", map[string]any{key: "n=" + item}); err != nil {
			b.Fatal(err)
		}
	}
}

// compareRunner times, in each round of b.Loop, direct (the calls made
// with the client library) and then run (the flow making them, which must
// pass), and reports the runner's time over the direct calls' and both per
// call.
func compareRunner(b *testing.B, direct func(), run func() (*flow.Result, error)) {
	var d, r time.Duration
	b.ResetTimer()
	for b.Loop() {
		start := time.Now()
		direct()
		d += time.Since(start)
		start = time.Now()
		res, err := run()
		if err != nil {
			b.Fatal(err)
		}
		if res.Err != nil {
			b.Fatal(res.Err)
		}
		r += time.Since(start)
	}
	reportRatio(b, d, r)
}

// reportRatio reports the runner's time over the direct calls' and both
// per call.
func reportRatio(b *testing.B, direct, runner time.Duration) {
	b.ReportMetric(float64(runner)/float64(direct), "runner/direct")
	b.ReportMetric(float64(direct.Nanoseconds())/float64(b.N*benchCalls), "direct-ns/call")
	b.ReportMetric(float64(runner.Nanoseconds())/float64(b.N*benchCalls), "runner-ns/call")
}
