package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/toolwire/toolwire/internal/testenv"
	"github.com/toolwire/toolwire/mcp"
)

// startTracedGateway runs the embedded default `toolwire gateway` with env
// added to an environment without any OTEL_* variable, and returns it with
// its stdout (where the console exporter writes).
func startTracedGateway(t *testing.T, env ...string) (*gatewayProc, *testenv.SyncBuffer) {
	t.Helper()
	cmd := exec.Command(testenv.Toolwire(t), "gateway", "--listen", "127.0.0.1:0", "--admin-listen", "off")
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "OTEL_") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, "XDG_STATE_HOME="+t.TempDir())
	cmd.Env = append(cmd.Env, env...)
	stdout := &testenv.SyncBuffer{}
	cmd.Stdout = stdout
	return waitGateway(t, cmd), stdout
}

// callSum calls serve__get-sum (the stdio upstream) through the gateway.
func callSum(t *testing.T, g *gatewayProc) {
	t.Helper()
	c := connectServe(t, g.url, mcp.EraModern)
	ctx, cancel := context.WithTimeout(t.Context(), durableDeadline)
	defer cancel()
	if _, err := c.CallTool(ctx, "serve__get-sum", map[string]any{"a": 1, "b": 2}); err != nil {
		t.Fatal(err)
	}
	c.Close()
}

// stopGateway ends it with SIGINT, as an operator would, and waits.
func stopGateway(t *testing.T, g *gatewayProc) {
	t.Helper()
	if err := g.cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	if err := g.cmd.Wait(); err != nil {
		t.Fatalf("gateway exit after SIGINT: %v\n%s", err, g.log.String())
	}
	<-g.done
}

// consoleSpan is what the test reads of a span the console exporter wrote.
type consoleSpan struct {
	Name        string
	SpanKind    int
	SpanContext struct{ TraceID, SpanID string }
	Parent      struct{ TraceID, SpanID string }
	Attributes  []struct {
		Key   string
		Value struct{ Value any }
	}
}

// TestGatewayTraceConsole: OTEL_TRACES_EXPORTER=console writes the spans
// of a call to stdout, flushed on exit: the gateway's SERVER span and its
// child CLIENT span to the stdio upstream, in one trace.
func TestGatewayTraceConsole(t *testing.T) {
	g, stdout := startTracedGateway(t, "OTEL_TRACES_EXPORTER=console")
	callSum(t, g)
	stopGateway(t, g)
	if !strings.Contains(g.log.String(), `msg="OpenTelemetry traces on" exporter=console`) {
		t.Errorf("no log line saying traces are on:\n%s", g.log.String())
	}
	var server, client *consoleSpan
	dec := json.NewDecoder(strings.NewReader(stdout.String()))
	for {
		var s consoleSpan
		if err := dec.Decode(&s); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatalf("stdout is not a stream of spans: %v\n%s", err, stdout.String())
		}
		switch {
		case s.Name == "tools/call serve__get-sum" && s.SpanKind == 2: // server
			server = &s
		case s.Name == "tools/call get-sum" && s.SpanKind == 3: // client
			client = &s
		}
	}
	if server == nil || client == nil {
		t.Fatalf("want a server span %q and a client span %q in:\n%s", "tools/call serve__get-sum", "tools/call get-sum", stdout.String())
	}
	if client.Parent.SpanID != server.SpanContext.SpanID || client.SpanContext.TraceID != server.SpanContext.TraceID {
		t.Errorf("client span %+v is not the child of server span %+v", client.SpanContext, server.SpanContext)
	}
	attrs := map[string]any{}
	for _, a := range client.Attributes {
		attrs[a.Key] = a.Value.Value
	}
	if attrs["mcp.method.name"] != "tools/call" || attrs["gen_ai.tool.name"] != "get-sum" || attrs["network.transport"] != "pipe" || attrs["toolwire.gateway.upstream"] != "serve" {
		t.Errorf("client span attributes %v", attrs)
	}
}

// TestGatewayTraceOTLP: an OTLP endpoint in the environment sends the
// spans there (OTLP over HTTP with JSON bodies), while serving.
func TestGatewayTraceOTLP(t *testing.T) {
	var mu sync.Mutex
	var bodies [][]byte
	collector := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if r.Method == http.MethodPost && r.URL.Path == "/v1/traces" && r.Header.Get("Content-Type") == "application/json" {
			if !json.Valid(body) {
				t.Errorf("collector received a body that is not JSON: %q", body)
			}
			mu.Lock()
			bodies = append(bodies, body)
			mu.Unlock()
		}
		w.Header().Set("Content-Type", "application/json")
	}))
	defer collector.Close()
	g, _ := startTracedGateway(t, "OTEL_EXPORTER_OTLP_ENDPOINT="+collector.URL, "OTEL_BSP_SCHEDULE_DELAY=50")
	callSum(t, g)
	// The spans arrive while the gateway serves (batches every 50 ms);
	// JSON keeps these strings as they are.
	waitFor(t, func() bool {
		mu.Lock()
		defer mu.Unlock()
		all := bytes.Join(bodies, nil)
		return bytes.Contains(all, []byte("tools/call serve__get-sum")) && bytes.Contains(all, []byte("tools/call get-sum")) &&
			bytes.Contains(all, []byte("toolwire-gateway"))
	}, g)
	stopGateway(t, g)
}

// TestGatewayTraceOff: with no OTEL_* variable there is no exporter (no
// log line, nothing on stdout), and OTEL_SDK_DISABLED=true wins over an
// exporter named.
func TestGatewayTraceOff(t *testing.T) {
	for _, env := range [][]string{nil, {"OTEL_SDK_DISABLED=true", "OTEL_TRACES_EXPORTER=console"}} {
		g, stdout := startTracedGateway(t, env...)
		callSum(t, g)
		stopGateway(t, g)
		if strings.Contains(g.log.String(), "OpenTelemetry") || stdout.String() != "" {
			t.Errorf("env %v: traces on:\n%s\nstdout:\n%s", env, g.log.String(), stdout.String())
		}
	}
}
