package stdio_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"github.com/toolwire/toolwire/internal/testenv"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/toolwire/toolwire/internal/testtools"
	"github.com/toolwire/toolwire/internal/testwait"
	"github.com/toolwire/toolwire/mcp"
	"github.com/toolwire/toolwire/server"
	"github.com/toolwire/toolwire/transport"
	"github.com/toolwire/toolwire/transport/stdio"
)

func echoServer(t *testing.T) *server.Server {
	t.Helper()
	s := server.New(mcp.Implementation{Name: "s", Version: "1"})
	testtools.AddEcho(t, s, "")
	return s
}

// runLines serves the given input to completion and returns every line written.
func runLines(t *testing.T, s *server.Server, input string, opts ...transport.ServeOption) []string {
	t.Helper()
	var out strings.Builder
	done := make(chan error, 1)
	go func() { done <- stdio.Serve(context.Background(), s, strings.NewReader(input), &out, opts...) }()
	if err := testwait.Recv(t, done, "Serve to return at EOF"); err != nil {
		t.Fatalf("Serve returned %v; EOF must be a clean exit", err)
	}
	var lines []string
	sc := bufio.NewScanner(strings.NewReader(out.String()))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		lines = append(lines, sc.Text())
	}
	return lines
}

const initLine = `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`

func itoa(i int) string { b, _ := json.Marshal(i); return string(b) }

func TestBadLinesGetErrorsAndServingGoesOn(t *testing.T) {
	big := `{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"echo","arguments":{"message":"` + strings.Repeat("x", 300) + `"}}}`
	input := strings.Join([]string{
		initLine,
		`this is not json`,
		"",
		big,
		`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"message":"still here"}}}`,
	}, "\n") + "\n"
	lines := runLines(t, echoServer(t), input, transport.WithLimits(transport.Limits{MaxMessageBytes: 200}))
	if len(lines) != 4 {
		t.Fatalf("want 4 replies (init, -32700, too large, echo), got %d:\n%s", len(lines), strings.Join(lines, "\n"))
	}
	var parseErr, tooLarge bool
	for _, l := range lines {
		if strings.Contains(l, `"code":-32700`) {
			parseErr = true
		}
		if strings.Contains(l, `"code":-32600`) && strings.Contains(l, "200 bytes") {
			tooLarge = true
		}
	}
	if !parseErr || !tooLarge {
		t.Errorf("parse error reply %v, size limit reply %v:\n%s", parseErr, tooLarge, strings.Join(lines, "\n"))
	}
	if !strings.Contains(lines[len(lines)-1], `"still here"`) && !strings.Contains(strings.Join(lines, "\n"), `"text":"still here"`) {
		t.Errorf("request after the bad lines not answered:\n%s", strings.Join(lines, "\n"))
	}
}

func TestLastLineWithoutNewlineAndCRLF(t *testing.T) {
	input := initLine + "\r\n" + `{"jsonrpc":"2.0","id":5,"method":"ping"}`
	lines := runLines(t, echoServer(t), input)
	if len(lines) != 2 || !strings.Contains(lines[1], `"id":5`) {
		t.Errorf("got %q", lines)
	}
}

func TestQueueBoundRefusesExcess(t *testing.T) {
	s := server.New(mcp.Implementation{Name: "s", Version: "1"})
	release := make(chan struct{})
	_ = server.AddTool(s, &mcp.Tool{Name: "wait"}, func(ctx context.Context, req *server.CallRequest, in struct{}) (string, error) {
		<-release
		return "ok", nil
	})
	pr, pw := io.Pipe()
	var out testenv.SyncBuffer
	done := make(chan error, 1)
	go func() {
		done <- stdio.Serve(context.Background(), s, pr, &out,
			transport.WithLimits(transport.Limits{MaxConcurrency: 1, MaxQueued: 1}))
	}()
	write := func(s string) {
		if _, err := pw.Write([]byte(s + "\n")); err != nil {
			t.Fatal(err)
		}
	}
	write(initLine)
	for i := 1; i <= 3; i++ {
		write(`{"jsonrpc":"2.0","id":` + itoa(i) + `,"method":"tools/call","params":{"name":"wait"}}`)
	}
	// The third request exceeds one running plus one queued.
	testwait.WaitFor(t, "the busy reply", func() bool { return strings.Contains(out.String(), "server busy") })
	close(release)
	pw.Close()
	if err := testwait.Recv(t, done, "Serve to return at EOF"); err != nil {
		t.Fatal(err)
	}
	got := out.String()
	if strings.Count(got, `"text":"ok"`) != 2 || !strings.Contains(got, `"id":3,"error"`) {
		t.Errorf("want two results and a refusal of id 3:\n%s", got)
	}
}

func TestDrainCancelsStragglersAtEOF(t *testing.T) {
	s := server.New(mcp.Implementation{Name: "s", Version: "1"})
	cancelled := make(chan struct{})
	_ = server.AddTool(s, &mcp.Tool{Name: "forever"}, func(ctx context.Context, req *server.CallRequest, in struct{}) (string, error) {
		<-ctx.Done()
		close(cancelled)
		return "", ctx.Err()
	})
	input := initLine + "\n" + `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"forever"}}` + "\n"
	runLines(t, s, input, transport.WithLimits(transport.Limits{DrainTimeout: 20 * time.Millisecond}))
	testwait.Closed(t, cancelled, "the straggling request's context to be cancelled")
}

func TestWriteFailureEndsServe(t *testing.T) {
	input := initLine + "\n"
	err := stdio.Serve(context.Background(), echoServer(t), strings.NewReader(input), failWriter{})
	if err == nil || !strings.Contains(err.Error(), "write failed") {
		t.Errorf("got %v", err)
	}
}

type failWriter struct{}

func (failWriter) Write([]byte) (int, error) { return 0, errors.New("stdout closed") }

// Two requests that can only finish together prove that a request outliving
// the inline budget passes reading on, so the second is read and run
// concurrently.
func TestSlowRequestsRunConcurrently(t *testing.T) {
	s := server.New(mcp.Implementation{Name: "s", Version: "1"})
	var arrived sync.WaitGroup
	arrived.Add(2)
	_ = server.AddTool(s, &mcp.Tool{Name: "meet"}, func(ctx context.Context, req *server.CallRequest, in struct{}) (string, error) {
		arrived.Done()
		arrived.Wait()
		return "met", nil
	})
	input := initLine + "\n" +
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"meet"}}` + "\n" +
		`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"meet"}}` + "\n"
	lines := runLines(t, s, input, transport.WithLimits(transport.Limits{InlineTimeout: time.Millisecond}))
	if got := strings.Count(strings.Join(lines, "\n"), `"text":"met"`); got != 2 {
		t.Errorf("want both calls answered, got %d:\n%s", got, strings.Join(lines, "\n"))
	}
}
