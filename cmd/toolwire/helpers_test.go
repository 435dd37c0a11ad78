package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/toolwire/toolwire/internal/testenv"
	"github.com/toolwire/toolwire/jsonrpc"
)

// fakeHTTP is a hand-written Streamable HTTP MCP server, for the answers a
// real server does not give: each JSON-RPC request POSTed is passed to
// handle; anything else POSTed (a notification, a response, garbage) is
// accepted with 202, and other HTTP methods are refused with 405. It
// returns the endpoint's URL.
func fakeHTTP(t *testing.T, handle func(w http.ResponseWriter, r *http.Request, req *jsonrpc.Request)) string {
	t.Helper()
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			w.WriteHeader(http.StatusMethodNotAllowed)
			return
		}
		body, _ := io.ReadAll(r.Body)
		msg, _, err := jsonrpc.Decode(body)
		req, ok := msg.(*jsonrpc.Request)
		if err != nil || !ok {
			w.WriteHeader(http.StatusAccepted)
			return
		}
		handle(w, r, req)
	}))
	t.Cleanup(hs.Close)
	return hs.URL + "/mcp"
}

// jsonReply answers with a JSON body (format and args) and status.
func jsonReply(w http.ResponseWriter, status int, format string, args ...any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	fmt.Fprintf(w, format, args...)
}

// replyResult answers the request id with the JSON-RPC result result (JSON
// text).
func replyResult(w http.ResponseWriter, id jsonrpc.ID, result string) {
	jsonReply(w, http.StatusOK, `{"jsonrpc":"2.0","id":%s,"result":%s}`, id, result)
}

// startProc starts cmd and, should the test end with it still running,
// kills and reaps it.
func startProc(t *testing.T, cmd *exec.Cmd) {
	t.Helper()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		}
	})
}

// stdioPipes returns the pipes to cmd's standard input and output, for a
// client that speaks to it over stdio once it is started.
func stdioPipes(t *testing.T, cmd *exec.Cmd) (io.WriteCloser, io.ReadCloser) {
	t.Helper()
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	return in, out
}

// exitCode is the exit status of a finished run (err from its Run or
// Wait); an error that is no exit status fails the test.
func exitCode(t *testing.T, err error) int {
	t.Helper()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode()
	}
	if err != nil {
		t.Fatal(err)
	}
	return 0
}

// runNodeJSON runs script with args under Node 22, with env added to the
// environment, for at most timeout, and decodes the one JSON document it
// prints on stdout into a T. A run that fails, or prints anything else,
// fails the test with what the script wrote on stderr.
func runNodeJSON[T any](t *testing.T, timeout time.Duration, env []string, script string, args ...string) T {
	t.Helper()
	node := testenv.Node22(t)
	ctx, cancel := context.WithTimeout(t.Context(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, append([]string{script}, args...)...)
	if env != nil {
		cmd.Env = append(os.Environ(), env...)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("node %s failed: %v\nstderr: %s", filepath.Base(script), err, stderr.String())
	}
	var run T
	if err := json.Unmarshal(out, &run); err != nil {
		t.Fatalf("node %s output: %v: %s", filepath.Base(script), err, out)
	}
	return run
}
