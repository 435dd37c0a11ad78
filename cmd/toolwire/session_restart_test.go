package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/toolwire/toolwire/internal/testenv"
	"github.com/toolwire/toolwire/internal/testhttp"
	"github.com/toolwire/toolwire/internal/testwait"
	"github.com/toolwire/toolwire/transport/streamable"
)

// Without Redis, 2025-era sessions are kept in the data directory: a
// client holding one goes on with it after `toolwire serve --data-dir`
// or a gateway with a data_dir is stopped (SIGTERM) and started again on
// the same port and directory.

// restartTarget is one kind of endpoint started on addr with its state in
// dir, and the name its echo tool has there.
type restartTarget struct {
	name  string
	echo  string
	start func(t *testing.T, addr, dir string) (url string, stop func())
}

// terminate sends SIGTERM to cmd and waits for it to exit and for its log
// (done) to be read.
func terminate(t *testing.T, cmd *exec.Cmd, done <-chan struct{}) {
	t.Helper()
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	testwait.Returns(t, "toolwire to exit on SIGTERM", func() { _ = cmd.Wait() })
	testwait.Closed(t, done, "toolwire's log to end")
}

func restartTargets() []restartTarget {
	return []restartTarget{
		{"serve", "echo", func(t *testing.T, addr, dir string) (string, func()) {
			p := startServe(t, nil, "--addr", addr, "--data-dir", dir)
			return p.url, func() { terminate(t, p.cmd, p.done) }
		}},
		{"gateway", "ref__echo", func(t *testing.T, addr, dir string) (string, func()) {
			cfg := writeConfig(t, dir, fmt.Sprintf("data_dir: %q\nupstreams:\n  ref:\n    command: [%q, serve, --stdio, --data-dir, \"\"]\n",
				filepath.Join(dir, "data"), testenv.Toolwire(t)))
			g := startGateway(t, "--config", cfg, "--listen", addr, "--admin-listen", "off")
			return g.url, func() { terminate(t, g.cmd, g.done) }
		}},
	}
}

// tsRestart is what testdata/ts-restart-client.mjs prints, before and
// after the restart.
type tsRestart struct {
	Phase     string `json:"phase"`
	SessionID string `json:"sessionId"`
	GetOpen   bool   `json:"getOpen"`
	Call      tsCall `json:"call"`
	// After the restart.
	ProtocolVersion string   `json:"protocolVersion"`
	Calls           []tsCall `json:"calls"`
	Inits           int      `json:"inits"`
	GetsAfter       []int    `json:"getsAfter"`
	Errors          []string `json:"errors"`
}

type tsCall struct {
	Text    string `json:"text"`
	IsError bool   `json:"isError"`
	Thrown  string `json:"thrown"`
}

// TestTypeScriptSDKSessionSurvivesRestart: the official TypeScript SDK
// client (the pinned npm package, on Node 22) holds one 2025-11-25 session
// through a restart of `toolwire serve --data-dir` and of a gateway with a
// data_dir: its calls before and after succeed on the same session id with
// no second initialize, and a GET stream it reconnects is served (200).
func TestTypeScriptSDKSessionSurvivesRestart(t *testing.T) {
	node := testenv.Node22(t)
	// The script imports the SDK by name: it runs from a directory whose
	// node_modules is the pinned one.
	dir := t.TempDir()
	if err := os.Symlink(testenv.NodeModules(t), filepath.Join(dir, "node_modules")); err != nil {
		t.Fatal(err)
	}
	src, err := os.ReadFile(filepath.Join("testdata", "ts-restart-client.mjs"))
	if err != nil {
		t.Fatal(err)
	}
	script := filepath.Join(dir, "ts-restart-client.mjs")
	if err := os.WriteFile(script, src, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, target := range restartTargets() {
		t.Run(target.name, func(t *testing.T) {
			addr, data := testenv.FreeAddr(t), t.TempDir()
			url, stop := target.start(t, addr, data)
			cmd := exec.Command(node, script, url, target.echo)
			stdin, stdout := stdioPipes(t, cmd)
			var stderr testenv.SyncBuffer
			cmd.Stderr = &stderr
			startProc(t, cmd)
			lines := make(chan string, 2)
			go func() {
				sc := bufio.NewScanner(stdout)
				sc.Buffer(make([]byte, 64<<10), 1<<20)
				for sc.Scan() {
					lines <- sc.Text()
				}
				close(lines)
			}()
			next := func(phase string) tsRestart {
				t.Helper()
				line, ok := testwaitLine(t, lines, "the TypeScript client's "+phase+" report")
				if !ok {
					t.Fatalf("the TypeScript client ended before its %s report:\n%s", phase, stderr.String())
				}
				var r tsRestart
				if err := json.Unmarshal([]byte(line), &r); err != nil || r.Phase != phase {
					t.Fatalf("the TypeScript client's %s report: %v: %s\n%s", phase, err, line, stderr.String())
				}
				return r
			}
			before := next("before")
			if before.SessionID == "" || before.Call.Text != "Echo: before" || !before.GetOpen {
				t.Fatalf("before the restart: %+v", before)
			}

			stop()
			url2, stop := target.start(t, addr, data)
			defer stop()
			if url2 != url {
				t.Fatalf("restarted on %s, not %s", url2, url)
			}
			if _, err := io.WriteString(stdin, "restarted\n"); err != nil {
				t.Fatal(err)
			}
			after := next("after")
			if after.SessionID != before.SessionID || after.ProtocolVersion != "2025-11-25" {
				t.Errorf("after the restart: session %q (%s), before %q", after.SessionID, after.ProtocolVersion, before.SessionID)
			}
			if after.Inits != 1 {
				t.Errorf("%d initialize requests, want 1", after.Inits)
			}
			for i, c := range after.Calls {
				if want := fmt.Sprintf("Echo: after %d", i); c.Text != want || c.IsError || c.Thrown != "" {
					t.Errorf("call %d after the restart: %+v, want %q", i, c, want)
				}
			}
			for _, status := range after.GetsAfter {
				if status != http.StatusOK {
					t.Errorf("a GET after the restart got %d (all: %v)", status, after.GetsAfter)
				}
			}
			t.Logf("GET statuses after the restart %v; client errors %q", after.GetsAfter, after.Errors)
			if err := testwaitExit(t, cmd); err != nil {
				t.Errorf("the TypeScript client: %v\n%s", err, stderr.String())
			}
		})
	}
}

// testwaitLine receives a line, failing the test after testwait's limit.
func testwaitLine(t *testing.T, lines <-chan string, what string) (string, bool) {
	t.Helper()
	var line string
	var ok bool
	testwait.Returns(t, what, func() { line, ok = <-lines })
	return line, ok
}

// testwaitExit waits for cmd to exit, failing the test after testwait's
// limit.
func testwaitExit(t *testing.T, cmd *exec.Cmd) error {
	t.Helper()
	var err error
	testwait.Returns(t, "the TypeScript client to exit", func() { err = cmd.Wait() })
	return err
}

// TestServeSessionSurvivesRestart: over raw HTTP, a session opened on
// `toolwire serve --data-dir` is served on its id after SIGTERM and a
// start on the same port and directory (a call, and its GET stream resumed
// from the event id it had), with no second initialize; deleted, it stays
// gone through the next restart. With --data-dir "" sessions stay in
// memory and the old id gets 404, as before.
func TestServeSessionSurvivesRestart(t *testing.T) {
	target := restartTargets()[0]
	addr, data := testenv.FreeAddr(t), t.TempDir()
	url, stop := target.start(t, addr, data)
	sid := restartOpen(t, url)
	if status, body, _ := rawPost(t, url, sid, echoCallBody("before")); status != http.StatusOK || !strings.Contains(body, "Echo: before") {
		t.Fatalf("a call before the restart: %d %s", status, body)
	}
	getID := testhttp.FirstEventID(t, nil, url, sid)
	stop()

	url, stop = target.start(t, addr, data)
	if status, body, _ := rawPost(t, url, sid, echoCallBody("after")); status != http.StatusOK || !strings.Contains(body, "Echo: after") {
		t.Fatalf("a call on the old session after the restart: %d %s", status, body)
	}
	resp := testhttp.OpenMCPGet(t, nil, url, sid, getID)
	if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		t.Errorf("the GET stream resumed from its event id of before the restart: %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	resp.Body.Close()
	r, _ := http.NewRequest(http.MethodDelete, url, nil)
	r.Header.Set(streamable.HeaderSessionID, sid)
	r.Header.Set(streamable.HeaderProtocolVersion, "2025-11-25")
	if resp, err := http.DefaultClient.Do(r); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("DELETE: %v %v", resp, err)
	} else {
		resp.Body.Close()
	}
	stop()

	url, stop = target.start(t, addr, data)
	if status, body, _ := rawPost(t, url, sid, echoCallBody("deleted")); status != http.StatusNotFound {
		t.Errorf("a deleted session after a restart: %d %s, want 404", status, body)
	}
	stop()

	t.Run("NoDataDir", func(t *testing.T) {
		p := startServe(t, nil, "--addr", addr, "--data-dir", "")
		sid := restartOpen(t, p.url)
		terminate(t, p.cmd, p.done)
		p = startServe(t, nil, "--addr", addr, "--data-dir", "")
		defer terminate(t, p.cmd, p.done)
		if status, body, _ := rawPost(t, p.url, sid, echoCallBody("memory")); status != http.StatusNotFound {
			t.Errorf("a session kept in memory, after a restart: %d %s, want 404", status, body)
		}
	})
}

func echoCallBody(msg string) string {
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"message":%q}}}`, msg)
}

// restartOpen opens a 2025-11-25 session: initialize, then
// notifications/initialized.
func restartOpen(t *testing.T, url string) string {
	t.Helper()
	r, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`))
	r.Header.Set("Content-Type", "application/json")
	r.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := http.DefaultClient.Do(r)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	sid := resp.Header.Get(streamable.HeaderSessionID)
	if resp.StatusCode != http.StatusOK || sid == "" {
		t.Fatalf("initialize: %d, session %q", resp.StatusCode, sid)
	}
	if status, body, _ := rawPost(t, url, sid, `{"jsonrpc":"2.0","method":"notifications/initialized"}`); status != http.StatusAccepted {
		t.Fatalf("notifications/initialized: %d %s", status, body)
	}
	return sid
}
