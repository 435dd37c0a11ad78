package main

import (
	"bytes"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolwire/toolwire/internal/testenv"
	"github.com/toolwire/toolwire/jsonrpc"
	"github.com/toolwire/toolwire/reference"
	"github.com/toolwire/toolwire/server"
	"github.com/toolwire/toolwire/transport/streamable"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

// cliResult is one run of the real binary.
type cliResult struct {
	stdout, stderr string
	code           int
}

func runCLI(t *testing.T, args ...string) cliResult {
	t.Helper()
	return runCLIIn(t, "", nil, nil, args...)
}

// runCLIIn runs the binary in dir ("" the test's), with extra environment
// and stdin (nil: none).
func runCLIIn(t *testing.T, dir string, env []string, stdin io.Reader, args ...string) cliResult {
	t.Helper()
	cmd := exec.Command(testenv.Toolwire(t), args...)
	cmd.Dir, cmd.Stdin = dir, stdin
	if env != nil {
		cmd.Env = append(os.Environ(), env...)
	}
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	code := exitCode(t, cmd.Run()) // before the output is read: the run writes it
	return cliResult{out.String(), errb.String(), code}
}

// referenceURL serves the reference tools over Streamable HTTP in-process.
func referenceURL(t *testing.T) string {
	t.Helper()
	_, url := serveReference(t)
	return url
}

// serveReference serves the reference tools over Streamable HTTP
// in-process, returning the server and its endpoint URL.
func serveReference(t *testing.T) (*server.Server, string) {
	t.Helper()
	srv, err := reference.NewServer()
	if err != nil {
		t.Fatal(err)
	}
	h := streamable.NewHandler(srv)
	hs := httptest.NewServer(h)
	t.Cleanup(func() { hs.Close(); h.Close() })
	return srv, hs.URL + "/mcp"
}

// stdioTarget is the reference server as a child process, for after "--".
func stdioTarget(t *testing.T) []string {
	return []string{"--", testenv.Toolwire(t), "serve", "--stdio", "--log-level", "warn"}
}

func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name+".golden")
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if got != string(want) {
		t.Errorf("%s differs from %s:\n--- got\n%s\n--- want\n%s", name, path, got, want)
	}
}

func TestCallGetSumOverHTTP(t *testing.T) {
	r := runCLI(t, "call", referenceURL(t), "get-sum", "a=7", "b=5")
	if r.code != 0 || r.stdout != "The sum of 7 and 5 is 12.\n" {
		t.Fatalf("exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
}

func TestCallGetSumOverStdio(t *testing.T) {
	r := runCLI(t, append([]string{"call", "get-sum", "a=7", "b=5"}, stdioTarget(t)...)...)
	if r.code != 0 || r.stdout != "The sum of 7 and 5 is 12.\n" {
		t.Fatalf("exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
	// The same with a JSON argument and the legacy era.
	r = runCLI(t, append([]string{"call", "--era", "legacy", "get-sum", `{"a": 7, "b": 5}`}, stdioTarget(t)...)...)
	if r.code != 0 || r.stdout != "The sum of 7 and 5 is 12.\n" {
		t.Fatalf("exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
}

// TestCallGolden pins the rendering of every content type, annotations,
// structured content and saved files.
func TestCallGolden(t *testing.T) {
	url := referenceURL(t)
	cases := []struct {
		name string
		args []string
	}{
		{"gallery", []string{"gallery"}},
		{"tiny-image", []string{"get-tiny-image"}},
		{"annotated", []string{"get-annotated-message", "messageType=success", "includeImage=true"}},
		{"resource-links", []string{"get-resource-links", "count=2"}},
		{"resource-text", []string{"get-resource-reference", "resourceType=text", "resourceId=3"}},
		{"resource-blob", []string{"get-resource-reference", "resourceType=blob", "resourceId=4"}},
		{"structured", []string{"get-structured-content", "location=Los Angeles"}},
		{"structured-json", []string{"--json", "get-structured-content", "location=Chicago"}},
	}
	version := binaryVersion(t)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			r := runCLI(t, append([]string{"call", "--save-dir", dir, url}, tc.args...)...)
			if r.code != 0 {
				t.Fatalf("exit %d, stderr %s", r.code, r.stderr)
			}
			// serverInfo carries the binary's version, which depends on
			// how it was built.
			out := strings.ReplaceAll(r.stdout, dir, "$DIR")
			out = strings.ReplaceAll(out, `"version": "`+version+`"`, `"version": "$VERSION"`)
			golden(t, "call-"+tc.name, out)
		})
	}
	// The saved files hold exactly the blocks' bytes.
	dir := t.TempDir()
	if r := runCLI(t, "call", "--save-dir", dir, url, "gallery"); r.code != 0 {
		t.Fatal(r.stderr)
	}
	for name, want := range map[string]string{"gallery-2.png": "PNGDATA", "gallery-3.wav": "WAVDATA"} {
		got, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil || string(got) != want {
			t.Errorf("%s = %q, %v", name, got, err)
		}
	}
	got, err := os.ReadFile(filepath.Join(dir, "gallery-2.png"))
	if err == nil && !bytes.Equal(got, []byte("PNGDATA")) {
		t.Errorf("image bytes %q", got)
	}
}

func TestCallWithoutSaveDirUsesTempDir(t *testing.T) {
	r := runCLI(t, "call", referenceURL(t), "get-tiny-image")
	if r.code != 0 {
		t.Fatal(r.stderr)
	}
	_, path, ok := strings.Cut(r.stdout, "saved to ")
	path, _, _ = strings.Cut(path, "\n")
	if !ok || !strings.HasPrefix(path, os.TempDir()) {
		t.Fatalf("stdout %q", r.stdout)
	}
	defer os.RemoveAll(filepath.Dir(path))
	data, err := os.ReadFile(path)
	if err != nil || !bytes.Equal(data, reference.TinyPNG()) {
		t.Fatalf("saved image: %v", err)
	}
}

// scripted is an HTTP MCP server that answers initialize and tools/list
// normally and tools/call as told.
func scripted(t *testing.T, call func(w http.ResponseWriter, r *http.Request, req *jsonrpc.Request)) string {
	t.Helper()
	session := 0
	return fakeHTTP(t, func(w http.ResponseWriter, r *http.Request, req *jsonrpc.Request) {
		switch req.Method {
		case "server/discover":
			jsonReply(w, 400, `{"jsonrpc":"2.0","id":%s,"error":{"code":-32000,"message":"not initialized"}}`, req.ID)
		case "initialize":
			session++
			w.Header().Set("Mcp-Session-Id", fmt.Sprint("s", session))
			replyResult(w, req.ID, `{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"scripted","version":"1"}}`)
		case "tools/list":
			replyResult(w, req.ID, `{"tools":[{"name":"work","inputSchema":{"type":"object","properties":{"n":{"type":"integer"}}}}]}`)
		default:
			call(w, r, req)
		}
	})
}

func TestCallExitStatuses(t *testing.T) {
	refused := func() string {
		hs := httptest.NewServer(http.NotFoundHandler())
		u := hs.URL
		hs.Close()
		return u + "/mcp"
	}()
	cases := []struct {
		name   string
		args   []string
		code   int
		stderr string
	}{
		{"transport", []string{"call", refused, "work"}, 3, "toolwire: ERR_MCP_TRANSPORT: "},
		{"protocol", []string{"call", scripted(t, func(w http.ResponseWriter, r *http.Request, req *jsonrpc.Request) {
			w.Header().Set("Content-Type", "text/event-stream")
			fmt.Fprint(w, "data: {not json\n\n")
		}), "work"}, 4, "toolwire: ERR_MCP_PROTOCOL: "},
		{"json-rpc", []string{"call", scripted(t, func(w http.ResponseWriter, r *http.Request, req *jsonrpc.Request) {
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"error":{"code":-32603,"message":"database on fire"}}`, req.ID)
		}), "work", "n=1"}, 5, "toolwire: ERR_MCP_JSON_RPC_ERROR: tools/call: JSON-RPC error -32603: database on fire"},
		{"tool", []string{"call", referenceURL(t), "safe_divide", "a=1", "b=0"}, 6, "cannot divide by zero; pass a non-zero b\ntoolwire: ERR_MCP_TOOL_ERROR: "},
		{"session", []string{"call", scripted(t, func(w http.ResponseWriter, r *http.Request, req *jsonrpc.Request) {
			w.WriteHeader(http.StatusNotFound)
		}), "work"}, 7, "toolwire: ERR_MCP_SESSION_INVALID: "},
		{"unknown tool: sent, the server's error with a hint", []string{"call", referenceURL(t), "get-sun", "a=1"}, 5,
			"JSON-RPC error -32602: unknown tool: \"get-sun\"\ntoolwire: \"get-sun\" is not among the tools the server lists to this caller; did you mean get-sum?"},
		{"usage: typed value", []string{"call", referenceURL(t), "get-sum", "a=seven", "b=5"}, 2, "a=seven: want a number"},
		{"usage: JSON typo", []string{"call", referenceURL(t), "get-sum", `{"a": 7, "b": 5,}`}, 2, "invalid JSON at line 1, column 17"},
		{"usage: no target", []string{"call", "get-sum"}, 2, "no server given"},
		{"usage: closed schema", []string{"call", referenceURL(t), "echo", "message=hi", "volume=11"}, 2, `the tool has no parameter "volume" (parameters: message)`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := runCLI(t, tc.args...)
			if r.code != tc.code || !strings.Contains(r.stderr, tc.stderr) {
				t.Fatalf("exit %d (want %d), stderr:\n%s\nwant it to contain %q", r.code, tc.code, r.stderr, tc.stderr)
			}
			if tc.code != 0 && r.stdout != "" {
				t.Errorf("stdout %q on failure", r.stdout)
			}
		})
	}
}

func TestCallStdioChildFails(t *testing.T) {
	r := runCLI(t, "call", "work", "--", "sh", "-c", "echo 'cannot start: no config' >&2; exit 4")
	if r.code != 3 || !strings.Contains(r.stderr, "ERR_MCP_TRANSPORT") || !strings.Contains(r.stderr, "cannot start: no config") {
		t.Fatalf("exit %d, stderr %s", r.code, r.stderr)
	}
}

func TestToolsTableAndJSON(t *testing.T) {
	url := referenceURL(t)
	r := runCLI(t, "tools", url)
	if r.code != 0 {
		t.Fatal(r.stderr)
	}
	golden(t, "tools", r.stdout)
	r = runCLI(t, append([]string{"tools", "--json"}, stdioTarget(t)...)...)
	if r.code != 0 || !strings.HasPrefix(r.stdout, "[\n  {\n    \"name\": \"echo\"") || !strings.Contains(r.stdout, `"outputSchema"`) {
		t.Fatalf("exit %d, stdout %.200s", r.code, r.stdout)
	}
}

// The progress bar is drawn only when stderr is a terminal; `script` (from
// util-linux) provides one.
func TestCallProgressBarOnlyOnTerminal(t *testing.T) {
	url := referenceURL(t)
	r := runCLI(t, "call", url, "trigger-long-running-operation", "duration=0.2", "steps=4")
	if r.code != 0 || strings.Contains(r.stderr, "%") || !strings.HasPrefix(r.stdout, "Long running operation completed.") {
		t.Fatalf("without a terminal: exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
	script, err := exec.LookPath("script")
	if err != nil {
		t.Skip("script(1) is not installed; cannot give the CLI a terminal")
	}
	cmdline := fmt.Sprintf("%s call %s trigger-long-running-operation duration=0.2 steps=4", testenv.Toolwire(t), url)
	out, err := exec.Command(script, "-qec", cmdline, "/dev/null").CombinedOutput()
	if err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	for _, want := range []string{"[#######.......................]  25%", "[##############################] 100%", "Long running operation completed."} {
		if !strings.Contains(string(out), want) {
			t.Errorf("terminal output %q lacks %q", out, want)
		}
	}
}
