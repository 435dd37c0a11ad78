package docs

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/toolwire/toolwire/internal/testenv"
	"github.com/toolwire/toolwire/internal/testwait"
)

// step is one command of a quick-start block and the lines its output must
// contain (the `# ...` lines right below it in the README).
type step struct {
	cmd    string
	expect []string
}

var trailingComment = regexp.MustCompile(`\s+#\s.*$`)

// steps reads a quick-start block: a line is a command; a `# text` line
// right below a command (no blank line between) is text its output must
// contain; other `#` lines are comments.
func steps(text string) []step {
	var out []step
	prevCmd := false
	for _, l := range strings.Split(text, "\n") {
		l = strings.TrimSpace(l)
		switch {
		case l == "":
			prevCmd = false
		case strings.HasPrefix(l, "#"):
			if prevCmd {
				s := &out[len(out)-1]
				s.expect = append(s.expect, strings.TrimSpace(strings.TrimPrefix(l, "#")))
			}
		default:
			out = append(out, step{cmd: trailingComment.ReplaceAllString(l, "")})
			prevCmd = true
		}
	}
	return out
}

// missing skips the test, or fails it in CI, for a tool it needs.
func missing(t *testing.T, what string) {
	t.Helper()
	if os.Getenv("CI") != "" {
		t.Fatalf("%s is missing", what)
	}
	t.Skipf("%s is missing", what)
}

// TestQuickStart follows the README's quick start from a fresh clone:
// the blocks marked <!-- quickstart:run --> command by command, checking
// each exit status and the output lines written under it, and the block
// marked <!-- quickstart:setup --> for the gateway it starts. The gateway
// listens on free ports instead of 8090 and 8091 (the commands after it are
// rewritten to match), keeps its state in a temporary directory, and runs
// as ./bin/toolwire gateway, which the README says is the same as its go
// run form; ./scripts/test is the command running this test, so it is not
// run again. The clone is of this repository's HEAD (the committed
// README), and it is built with -trimpath so that the build cache is
// shared with every other clone.
func TestQuickStart(t *testing.T) {
	if testing.Short() {
		t.Skip("builds toolwire in a fresh clone")
	}
	root := testenv.Root(t)
	if _, err := os.Stat(filepath.Join(root, ".git")); err != nil {
		missing(t, "the repository's .git (the test clones it)")
	}
	for _, tool := range []string{"git", "go", "curl", "bash"} {
		if _, err := exec.LookPath(tool); err != nil {
			missing(t, tool)
		}
	}
	work := t.TempDir()
	state := filepath.Join(work, "state")
	env := append(os.Environ(),
		"XDG_STATE_HOME="+state,
		"GOFLAGS="+strings.TrimSpace(os.Getenv("GOFLAGS")+" -trimpath"),
		"NO_COLOR=1")
	checkout := filepath.Join(work, "toolwire")

	run := func(s step, timeout time.Duration) string {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), timeout)
		defer cancel()
		cmd := exec.CommandContext(ctx, "bash", "-c", s.cmd)
		cmd.Dir = checkout
		cmd.Env = env
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("README quick start: `%s`: %v\n%s", s.cmd, err, out)
		}
		for _, e := range s.expect {
			if !strings.Contains(string(out), e) {
				t.Fatalf("README quick start: `%s`: the output has no %q:\n%s", s.cmd, e, out)
			}
		}
		t.Logf("$ %s\n%s", s.cmd, firstLines(string(out), 4))
		return string(out)
	}

	// The clone's README is the one a new user reads.
	clone := exec.Command("git", "clone", "--quiet", root, checkout)
	if out, err := clone.CombinedOutput(); err != nil {
		t.Fatalf("git clone: %v\n%s", err, out)
	}
	readme, err := os.ReadFile(filepath.Join(checkout, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	var blocks []Block
	for _, b := range Blocks(string(readme)) {
		if b.Marker != "" {
			blocks = append(blocks, b)
		}
	}
	if len(blocks) != 3 || blocks[0].Marker != "run" || blocks[1].Marker != "setup" || blocks[2].Marker != "run" {
		t.Fatalf("the README's quick start is three marked blocks (install: run, set-up: setup, walk: run); found %v", blocks)
	}

	mcpAddr, adminAddr := testenv.FreeAddr(t), testenv.FreeAddr(t)
	rewrite := strings.NewReplacer("127.0.0.1:8090", mcpAddr, "127.0.0.1:8091", adminAddr)
	for i, b := range blocks {
		ss := steps(b.Text)
		if len(ss) == 0 {
			t.Fatalf("README.md:%d: a quick-start block with no command", b.Line)
		}
		switch b.Marker {
		case "setup":
			if len(ss) != 2 || ss[0].cmd != "go run ./cmd/toolwire gateway" || ss[1].cmd != "./scripts/test" {
				t.Fatalf("README.md:%d: the set-up commands are `go run ./cmd/toolwire gateway` and `./scripts/test`; found %v", b.Line, ss)
			}
			startGateway(t, checkout, env, mcpAddr, adminAddr)
		case "run":
			for j, s := range ss {
				if i == 0 && j == 0 {
					if s.cmd != "git clone https://github.com/toolwire/toolwire && cd toolwire" {
						t.Fatalf("README.md:%d: the quick start begins with the clone; found `%s`", b.Line, s.cmd)
					}
					continue // done above, from this repository
				}
				s.cmd = rewrite.Replace(s.cmd)
				timeout := time.Minute
				if strings.HasPrefix(s.cmd, "go build") {
					timeout = 15 * time.Minute // the first build on empty caches
				}
				run(s, timeout)
			}
		default:
			t.Fatalf("README.md:%d: unknown quick-start marker %q", b.Line, b.Marker)
		}
	}
}

// startGateway starts ./bin/toolwire gateway (the embedded default) in
// checkout on the given addresses, waits until /readyz answers 200, and
// stops it by its PID when the test ends.
func startGateway(t *testing.T, checkout string, env []string, mcpAddr, adminAddr string) {
	t.Helper()
	var logs testenv.SyncBuffer
	cmd := exec.Command("./bin/toolwire", "gateway", "--listen", mcpAddr, "--admin-listen", adminAddr)
	cmd.Dir = checkout
	cmd.Env = env
	cmd.Stdout, cmd.Stderr = &logs, &logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	t.Cleanup(func() {
		_ = syscall.Kill(cmd.Process.Pid, syscall.SIGTERM)
		testwait.Recv(t, done, "the gateway to exit on SIGTERM")
		if t.Failed() {
			t.Logf("gateway log:\n%s", logs.String())
		}
	})
	testwait.WaitForNil(t, "the gateway's /readyz to answer 200", func() error {
		select {
		case err := <-done:
			done <- err
			return fmt.Errorf("the gateway exited: %v\n%s", err, logs.String())
		default:
		}
		resp, err := http.Get("http://" + adminAddr + "/readyz")
		if err != nil {
			return err
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("/readyz: %s", resp.Status)
		}
		return nil
	})
	t.Logf("gateway ready on %s (admin %s)", mcpAddr, adminAddr)
}

func firstLines(s string, n int) string {
	lines := strings.SplitN(s, "\n", n+1)
	if len(lines) > n {
		lines = append(lines[:n], "...")
	}
	return strings.Join(lines, "\n")
}
