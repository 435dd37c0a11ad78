package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"time"

	"github.com/toolwire/toolwire/bench/internal/load"
	"github.com/toolwire/toolwire/bench/internal/procs"
	"github.com/toolwire/toolwire/bench/internal/srvmain"
)

// proc is one server process serving Streamable HTTP.
type proc struct {
	impl   string
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	url    string // the MCP endpoint
	base   string // scheme://host
	stderr *procs.LogBuffer
	done   chan error
	hcs    []*http.Client
}

// client returns a new keep-alive client for up to conns connections, closed
// by closeClients.
func (p *proc) client(conns int) *http.Client {
	c := load.NewHTTPClient(conns)
	p.hcs = append(p.hcs, c)
	return c
}

func (p *proc) closeClients() {
	for _, c := range p.hcs {
		c.CloseIdleConnections()
	}
	p.hcs = nil
}

// startHTTP starts a server binary and waits for its LISTEN line.
func startHTTP(impl, bin string, args ...string) (*proc, error) {
	cmd := exec.Command(bin, args...)
	p := &proc{impl: impl, cmd: cmd, stderr: &procs.LogBuffer{}, done: make(chan error, 1)}
	cmd.Stderr = p.stderr
	var out io.ReadCloser
	var err error
	if p.stdin, out, err = load.StartPiped(cmd); err != nil {
		return nil, err
	}
	go func() { p.done <- cmd.Wait() }()
	line := make(chan string, 1)
	go func() {
		r := bufio.NewReader(out)
		l, _ := r.ReadString('\n')
		line <- l
		_, _ = io.Copy(io.Discard, r)
	}()
	select {
	case l := <-line:
		u, ok := strings.CutPrefix(strings.TrimSpace(l), "LISTEN ")
		if !ok {
			p.kill()
			return nil, fmt.Errorf("%s: no LISTEN line (got %q); stderr: %s", impl, l, p.stderr)
		}
		p.url = u
		p.base = strings.TrimSuffix(u, srvmain.MCPPath)
		return p, nil
	case <-time.After(30 * time.Second):
		p.kill()
		return nil, fmt.Errorf("%s: not listening after 30s; stderr: %s", impl, p.stderr)
	}
}

// stop closes the server's stdin (it shuts down and writes its profiles)
// and waits for it, killing it if it takes too long.
func (p *proc) stop() error {
	p.stdin.Close()
	select {
	case err := <-p.done:
		if err != nil {
			return fmt.Errorf("%s exited: %v; stderr: %s", p.impl, err, p.stderr)
		}
		return nil
	case <-time.After(15 * time.Second):
		p.kill()
		return fmt.Errorf("%s did not exit within 15s", p.impl)
	}
}

func (p *proc) kill() {
	_ = p.cmd.Process.Kill()
}

// stats reads the server's /debug/stats over c.
func (p *proc) stats(ctx context.Context, c *http.Client) (srvmain.Stats, error) {
	var st srvmain.Stats
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, p.base+srvmain.StatsPath, nil)
	if err != nil {
		return st, err
	}
	resp, err := c.Do(req)
	if err != nil {
		return st, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		return st, fmt.Errorf("stats: HTTP %d", resp.StatusCode)
	}
	err = json.NewDecoder(resp.Body).Decode(&st)
	return st, err
}

// stdioCmd is the command serving over stdio.
func stdioCmd(bin string, args ...string) *exec.Cmd {
	cmd := exec.Command(bin, append([]string{"-stdio"}, args...)...)
	if *verbose {
		cmd.Stderr = os.Stderr
	}
	return cmd
}
