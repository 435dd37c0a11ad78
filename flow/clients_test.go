package flow_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/toolwire/toolwire/client"
	"github.com/toolwire/toolwire/flow"
	"github.com/toolwire/toolwire/mcp"
	"github.com/toolwire/toolwire/server"
	"github.com/toolwire/toolwire/transport/stdio"
	"github.com/toolwire/toolwire/transport/streamable"
)

// TestMain makes the test binary an MCP stdio server when FLOW_TEST_STDIO
// is set: the manifests below start it as their stdio client.
func TestMain(m *testing.M) {
	if os.Getenv("FLOW_TEST_STDIO") == "1" {
		srv := server.New(mcp.Implementation{Name: "stdio-env", Version: "1"})
		_ = server.AddTool(srv, &mcp.Tool{Name: "where"}, func(ctx context.Context, req *server.CallRequest, in struct{}) (map[string]string, error) {
			wd, _ := os.Getwd()
			return map[string]string{"cwd": wd, "greeting": os.Getenv("FLOW_GREETING"), "home": os.Getenv("FLOW_INHERITED")}, nil
		})
		if err := stdio.ServeStdio(context.Background(), srv); err != nil {
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// TestStdioClient: a stdio client starts lazily with the manifest's env on
// top of this process's environment and its cwd relative to the manifest;
// a client no step uses is never started.
func TestStdioClient(t *testing.T) {
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "work"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("FLOW_INHERITED", "from-parent")
	marker := filepath.Join(dir, "UNUSED")
	src := `inputs:
  hello: {type: string, default: hi}
clients:
  me:
    command: "` + os.Args[0] + `"
    args: ["-test.run=^$"]
    env: {FLOW_TEST_STDIO: "1", FLOW_GREETING: "${{ inputs.hello }} there"}
    cwd: work
    era: legacy
    timeout: 60s # a hang bound for a race-built child on a busy machine
  unused:
    command: sh
    args: ["-c", "touch ` + marker + `"]
steps:
  - name: w
    call: {client: me, tool: where}
outputs:
  where: "${{ steps.w.result.structuredContent }}"
`
	path := filepath.Join(dir, "env.flow.yaml")
	writeFile(t, path, src)
	f, err := flow.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	res := run(t, t.Context(), f)
	mustPass(t, res)
	got := res.Outputs["where"].(map[string]any)
	wantDir, _ := filepath.EvalSymlinks(filepath.Join(dir, "work"))
	gotDir, _ := filepath.EvalSymlinks(got["cwd"].(string))
	if gotDir != wantDir || got["greeting"] != "hi there" || got["home"] != "from-parent" {
		t.Fatalf("server saw %v (want cwd %s)", got, wantDir)
	}
	if _, err := os.Stat(marker); !os.IsNotExist(err) {
		t.Fatal("a client no step uses was started")
	}
}

// TestHTTPClientAndErrors: an HTTP client gets its headers; a JSON-RPC
// error keeps {code, message, data}; an HTTP failure keeps {status, body}.
func TestHTTPClientAndErrors(t *testing.T) {
	ts := newTestServer(t)
	var sawAuth string
	h := streamable.NewHandler(ts.srv)
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/broken" {
			http.Error(w, "down for maintenance", http.StatusServiceUnavailable)
			return
		}
		if a := r.Header.Get("Authorization"); a != "" {
			sawAuth = a
		}
		h.ServeHTTP(w, r)
	}))
	defer hs.Close()
	src := `env: [TOKEN]
inputs:
  base: {type: string}
clients:
  web:
    url: "${{ inputs.base }}/mcp"
    headers: {Authorization: "Bearer ${{ env.TOKEN }}"}
  broken:
    url: "${{ inputs.base }}/broken"
steps:
  - try:
      - call: {client: web, tool: nosuchtool}
      - throw: {code: UNEXPECTED}
    catch:
      - codes: [ERR_MCP_JSON_RPC_ERROR]
        do:
          - name: rpc
            value: "${{ error.data }}"
  - call: {client: broken, tool: echo}
outputs:
  rpc: "${{ steps.rpc.result }}"
`
	f := parse(t, src)
	res := run(t, t.Context(), f, flow.WithInputs(map[string]string{"base": hs.URL}),
		flow.WithEnv(func(k string) (string, bool) { return "tok-" + k, true }))
	e := mustFail(t, res, "ERR_MCP_TRANSPORT")
	data, _ := e.Data.(map[string]any)
	if data["status"] != int64(503) || !strings.Contains(data["body"].(string), "down for maintenance") {
		t.Fatalf("transport data %v", e.Data)
	}
	if sawAuth != "Bearer tok-TOKEN" {
		t.Fatalf("Authorization %q", sawAuth)
	}
	if res.Outputs != nil {
		t.Fatalf("outputs of a failed flow: %v", res.Outputs)
	}
	if res.Steps[1].Name != "rpc" || res.Steps[1].Status != flow.StatusOK || res.Steps[2].Status != flow.StatusCaught {
		t.Fatalf("the JSON-RPC error was not caught: %+v", res.Steps)
	}
	// The JSON-RPC error's data, as a catch handler sees it.
	res2 := run(t, t.Context(), parse(t, `clients:
  web: {url: "`+hs.URL+`/mcp"}
steps:
  - try:
      - call: {tool: nosuchtool}
      - throw: {code: UNEXPECTED}
    catch:
      - do: [{name: rpc, value: "${{ error.data }}"}]
outputs:
  rpc: "${{ steps.rpc.result }}"
`))
	mustPass(t, res2)
	rpcData := res2.Outputs["rpc"].(map[string]any)
	if _, ok := rpcData["code"].(int64); !ok || rpcData["message"] == "" {
		t.Fatalf("JSON-RPC data %v", rpcData)
	}
	if _, ok := rpcData["data"]; !ok {
		t.Fatalf("JSON-RPC data has no data member: %v", rpcData)
	}
}

// TestCheckConnect: with WithConnect, calls naming a tool the server lacks
// or with literal arguments its inputSchema refuses are diagnostics;
// arguments with expressions are skipped.
func TestCheckConnect(t *testing.T) {
	ts := newTestServer(t)
	f := parse(t, header+`inputs:
  n: {type: integer, default: 1}
steps:
  - call: {tool: echo, arguments: {text: fine}}
  - call: {tool: nope}
  - call: {tool: add, arguments: {a: one, b: 2}}
  - call: {tool: add, arguments: {a: "${{ inputs.n }}", b: 2}}
  - call: {tool: "${{ 'dyn' }}"}
`)
	got := checkConnected(t, ts, f, 2)
	containsAll(t, got, `test.flow.yaml:7:18: steps[1]: client srv has no tool "nope"`, "test.flow.yaml:8:34: steps[2]: arguments do not match add's inputSchema")
	// A client that cannot start is a diagnostic at the client.
	bad := parse(t, "clients:\n  x: {command: /nonexistent/server}\nsteps:\n  - call: {tool: echo}\n")
	if err := flow.Check(t.Context(), bad, flow.WithConnect(true)); err == nil || !strings.Contains(err.Error(), "test.flow.yaml:2:3: client x") {
		t.Fatalf("unstartable client: %v", err)
	}
}

// TestClientOptions: WithClientOptions reaches every client the flow
// connects: a 1ns request timeout makes the connection fail.
func TestClientOptions(t *testing.T) {
	ts := newTestServer(t)
	hs := httptest.NewServer(streamable.NewHandler(ts.srv))
	defer hs.Close()
	f := parse(t, "clients:\n  web: {url: \""+hs.URL+"/mcp\"}\nsteps:\n  - call: {tool: echo, arguments: {text: x}}\n")
	mustPass(t, run(t, t.Context(), f))
	mustFail(t, run(t, t.Context(), f, flow.WithClientOptions(client.WithTimeout(time.Nanosecond))), "ERR_MCP_TRANSPORT")
}
