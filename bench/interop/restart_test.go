package interop

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolwire/toolwire/bench/internal/procs"
	"github.com/toolwire/toolwire/internal/testwait"
)

// The official Go SDK's client holding a 2025-11-25 session across a
// restart of `toolwire serve --data-dir` and of a gateway with a data_dir:
// its calls before and after succeed on the same session id, with no
// second initialize.

// buildToolwire builds ./cmd/toolwire of the work tree for one test.
func buildToolwire(t *testing.T) string {
	t.Helper()
	bin, err := procs.Build(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return bin
}

// freeAddr returns a loopback address nothing listens on now, for a
// process to listen on, stop and listen on again.
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

// proc is a running toolwire process.
type proc struct {
	cmd  *exec.Cmd
	log  *bytes.Buffer
	mu   *sync.Mutex
	done chan struct{}
}

func (p *proc) logText() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.log.String()
}

// startToolwire runs toolwire with args and waits until its log says it
// serves (ready matches a line). The test's end kills it if still running.
func startToolwire(t *testing.T, bin string, ready *regexp.Regexp, args ...string) *proc {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), "XDG_STATE_HOME="+t.TempDir())
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &proc{cmd: cmd, log: &bytes.Buffer{}, mu: &sync.Mutex{}, done: make(chan struct{})}
	served := make(chan struct{})
	go func() {
		defer close(p.done)
		sc := bufio.NewScanner(stderr)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		seen := false
		for sc.Scan() {
			p.mu.Lock()
			p.log.WriteString(sc.Text() + "\n")
			p.mu.Unlock()
			if !seen && ready.MatchString(sc.Text()) {
				seen = true
				close(served)
			}
		}
		_, _ = io.Copy(io.Discard, stderr)
		_ = cmd.Wait()
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-p.done
	})
	select {
	case <-served:
	case <-p.done:
		t.Fatalf("%v exited before serving:\n%s", args, p.logText())
	case <-time.After(testwait.Limit):
		t.Fatalf("%v did not serve:\n%s", args, p.logText())
	}
	return p
}

// stop sends SIGTERM and waits for the process to exit.
func (p *proc) stop(t *testing.T) {
	t.Helper()
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	testwait.Closed(t, p.done, "toolwire to exit on SIGTERM")
}

// wire records what a client sends: the JSON-RPC method of every POST,
// and the status of every GET.
type wire struct {
	mu    sync.Mutex
	posts []string
	gets  []int
	base  http.RoundTripper
}

var methodRE = regexp.MustCompile(`"method"\s*:\s*"([^"]+)"`)

func (w *wire) RoundTrip(r *http.Request) (*http.Response, error) {
	method := r.Method
	if r.Body != nil && r.Method == http.MethodPost {
		b, err := io.ReadAll(r.Body)
		if err != nil {
			return nil, err
		}
		r.Body = io.NopCloser(bytes.NewReader(b))
		if m := methodRE.FindSubmatch(b); m != nil {
			method = string(m[1])
		}
	}
	resp, err := w.base.RoundTrip(r)
	w.mu.Lock()
	defer w.mu.Unlock()
	switch {
	case r.Method == http.MethodGet && err == nil:
		w.gets = append(w.gets, resp.StatusCode)
	case r.Method == http.MethodPost:
		w.posts = append(w.posts, method)
	}
	return resp, err
}

// count is how many POSTs carried method, and the GETs answered so far.
func (w *wire) count(method string) (posts int, gets []int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, m := range w.posts {
		if m == method {
			posts++
		}
	}
	return posts, append([]int(nil), w.gets...)
}

// restartable is how to start one kind of toolwire endpoint (the binary
// bin) on addr with its state in dir, and the name of its echo tool.
type restartable struct {
	name  string
	start func(t *testing.T, bin, addr, dir string) *proc
	echo  string
}

var serveReady = regexp.MustCompile(`msg="serving reference tools over Streamable HTTP"`)

var restartables = []restartable{
	{"serve", func(t *testing.T, bin, addr, dir string) *proc {
		return startToolwire(t, bin, serveReady, "serve", "--addr", addr, "--data-dir", dir)
	}, "echo"},
	{"gateway", func(t *testing.T, bin, addr, dir string) *proc {
		cfg := filepath.Join(dir, "gateway.yaml")
		text := fmt.Sprintf("listen: %q\ndata_dir: %q\nupstreams:\n  ref:\n    command: [%q, serve, --stdio, --data-dir, \"\"]\n",
			addr, filepath.Join(dir, "data"), bin)
		if err := os.WriteFile(cfg, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		return startToolwire(t, bin, regexp.MustCompile(`msg="gateway serving"`), "gateway", "--config", cfg, "--admin-listen", "off")
	}, "ref__echo"},
}

// TestGoSDKSessionSurvivesRestart: the go-sdk client keeps one 2025-11-25
// session through a restart of `toolwire serve --data-dir` and of a
// gateway with a data_dir (SIGTERM, then the same command on the same
// port and directory): calls before and after succeed on the same session
// id, its standalone GET stream is served again after the restart, and it
// never initializes a second time.
func TestGoSDKSessionSurvivesRestart(t *testing.T) {
	bin := buildToolwire(t)
	for _, r := range restartables {
		t.Run(r.name, func(t *testing.T) {
			addr, dir := freeAddr(t), t.TempDir()
			p := r.start(t, bin, addr, dir)
			w := &wire{base: http.DefaultTransport}
			ctx := t.Context()
			c := mcp.NewClient(&mcp.Implementation{Name: "restart-go-sdk", Version: "1.0.0"}, nil)
			cs, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: "http://" + addr + "/mcp", HTTPClient: &http.Client{Transport: w}},
				&mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
			if err != nil {
				t.Fatal(err)
			}
			defer cs.Close()
			sid := cs.ID()
			echo := func(msg string) {
				t.Helper()
				res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: r.echo, Arguments: map[string]any{"message": msg}})
				if err != nil {
					t.Fatalf("call %q: %v", msg, err)
				}
				if len(res.Content) != 1 || res.IsError {
					t.Fatalf("call %q: %+v", msg, res)
				}
				if tc, ok := res.Content[0].(*mcp.TextContent); !ok || tc.Text != "Echo: "+msg {
					t.Fatalf("call %q: %+v", msg, res.Content[0])
				}
			}
			echo("before")
			testwait.WaitFor(t, "the client's standalone GET stream", func() bool {
				_, gets := w.count("")
				return len(gets) > 0
			})
			_, before := w.count("")
			p.stop(t)
			p = r.start(t, bin, addr, dir)
			// The client reconnects its GET stream by itself once the
			// process is back; the session must be served on it too.
			testwait.WaitFor(t, "the client's GET stream after the restart", func() bool {
				_, gets := w.count("")
				return len(gets) > len(before)
			})
			for i := range 3 {
				echo(fmt.Sprintf("after %d", i))
			}
			if cs.ID() != sid {
				t.Errorf("session id %q after the restart, %q before", cs.ID(), sid)
			}
			inits, gets := w.count("initialize")
			if inits != 1 {
				t.Errorf("%d initialize requests, want 1", inits)
			}
			for _, status := range gets[len(before):] {
				if status != http.StatusOK {
					t.Errorf("GET after the restart: %d, want 200 (statuses %v)", status, gets)
				}
			}
			if t.Failed() {
				t.Logf("log after the restart:\n%s", p.logText())
			}
		})
	}
}
