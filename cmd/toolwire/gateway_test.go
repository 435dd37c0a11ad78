package main

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/toolwire/toolwire/internal/testenv"
	"github.com/toolwire/toolwire/internal/testhttp"
	"github.com/toolwire/toolwire/internal/testwait"
	"github.com/toolwire/toolwire/mcp"
)

// gatewayProc is a running `toolwire gateway`.
type gatewayProc struct {
	cmd   *exec.Cmd
	url   string // the MCP endpoint
	admin string // the admin base URL, "" when off
	log   *testenv.SyncBuffer
	done  chan struct{}
}

// startGateway runs `toolwire gateway` on free loopback ports with args and
// waits until it serves. t.Cleanup kills it by its PID.
func startGateway(t *testing.T, args ...string) *gatewayProc {
	t.Helper()
	cmd := exec.Command(testenv.Toolwire(t), append([]string{"gateway", "--listen", "127.0.0.1:0", "--admin-listen", "127.0.0.1:0"}, args...)...)
	cmd.Env = append(os.Environ(), "XDG_STATE_HOME="+t.TempDir())
	return waitGateway(t, cmd)
}

// waitGateway starts cmd, a `toolwire gateway`, and waits until it serves,
// reading its log from stderr. t.Cleanup kills it by its PID.
func waitGateway(t *testing.T, cmd *exec.Cmd) *gatewayProc {
	t.Helper()
	l := startLogged(t, cmd, regexp.MustCompile(`msg="gateway serving" url=(\S+)`))
	p := &gatewayProc{cmd: cmd, log: l.log, done: l.done}
	p.url = l.wait(t, "toolwire gateway serving")
	// The admin listener starts, and is logged, before the gateway serves.
	if m := regexp.MustCompile(`msg="admin endpoints" url=(\S+)`).FindStringSubmatch(p.log.String()); m != nil {
		p.admin = m[1]
	}
	return p
}

// TestGatewayEmbeddedDefault: with no config the gateway serves the
// reference tools in process and `toolwire serve --stdio` as a child, both
// namespaced, in both eras; /readyz reports both ready; SIGINT ends it and
// its child.
func TestGatewayEmbeddedDefault(t *testing.T) {
	g := startGateway(t)
	for _, era := range []mcp.Era{mcp.EraLegacy, mcp.EraModern} {
		names := toolNames(t, g.url, era)
		for _, want := range []string{"reference__echo", "serve__echo", "reference__get-sum", "serve__get-structured-content"} {
			if !slices.Contains(names, want) {
				t.Fatalf("%v: %s missing from %v", era, want, names)
			}
		}
		if slices.Contains(names, "echo") {
			t.Fatalf("%v: an unprefixed name is served: %v", era, names)
		}
		c := connectServe(t, g.url, era)
		ctx, cancel := context.WithTimeout(t.Context(), durableDeadline)
		res, err := c.CallTool(ctx, "serve__get-sum", map[string]any{"a": 2, "b": 40})
		cancel()
		c.Close()
		if err != nil || len(res.Content) == 0 || !strings.Contains(string(testwait.MustJSON(t, res.Content)), "42") {
			t.Fatalf("%v: serve__get-sum: %v %s", era, err, testwait.MustJSON(t, res))
		}
	}
	// The CLI sees the same list.
	r := runCLI(t, "tools", g.url)
	if r.code != 0 || !strings.Contains(r.stdout, "reference__echo") || !strings.Contains(r.stdout, "serve__echo") {
		t.Fatalf("toolwire tools: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}

	resp, err := http.Get(g.admin + "/readyz")
	if err != nil {
		t.Fatal(err)
	}
	var ready struct {
		Ready     bool `json:"ready"`
		Upstreams []struct {
			Name, State string
		} `json:"upstreams"`
	}
	err = json.NewDecoder(resp.Body).Decode(&ready)
	resp.Body.Close()
	if err != nil || resp.StatusCode != http.StatusOK || !ready.Ready || len(ready.Upstreams) != 2 ||
		ready.Upstreams[0].Name != "reference" || ready.Upstreams[1].State != "ready" {
		t.Fatalf("/readyz: %d %+v %v", resp.StatusCode, ready, err)
	}

	// /metrics counts the two calls above (one per era).
	status, metrics := testhttp.Get(t, g.admin+"/metrics")
	const want = `toolwire_gateway_calls_total{method="tools/call",outcome="ok",tool="serve__get-sum",upstream="serve"} 2`
	if status != http.StatusOK || !slices.Contains(strings.Split(metrics, "\n"), want) {
		t.Fatalf("/metrics: %d, want the line %s in\n%s", status, want, metrics)
	}

	if err := g.cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	if err := g.cmd.Wait(); err != nil {
		t.Fatalf("gateway exit after SIGINT: %v\n%s", err, g.log.String())
	}
	<-g.done
}

// writeConfig writes a gateway config in a temporary directory, whole:
// written aside and renamed into place, as configuration tools do, so that
// a gateway watching the file never reads it half-written, however long
// the writer is held up between truncating and writing on a busy machine
// (TestGatewayReloadNeverAppliesAHalfWrittenFile writes by halves on
// purpose).
func writeConfig(t *testing.T, dir, text string) string {
	t.Helper()
	p := filepath.Join(dir, "gateway.yaml")
	tmp := p + ".new"
	if err := os.WriteFile(tmp, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, p); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestGatewayCheck: --check prints the merged table after renaming and
// hiding, fails on a config error with its line and column, on a name
// collision naming both sources, and on an upstream that cannot be reached.
func TestGatewayCheck(t *testing.T) {
	bin := testenv.Toolwire(t)
	dir := t.TempDir()
	cfg := writeConfig(t, dir, stdioUpstreams(bin, "one")+`
naming:
  separator: "."
  rename: {one.echo: say}
  hide: [one.get-env]
`)
	r := runCLI(t, "gateway", "--check", "--config", cfg)
	if r.code != 0 {
		t.Fatalf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	if !regexp.MustCompile(`(?m)^say\s+one\s+echo$`).MatchString(r.stdout) ||
		!regexp.MustCompile(`(?m)^one\.get-sum\s+one\s+get-sum$`).MatchString(r.stdout) ||
		strings.Contains(r.stdout, "get-env") || !regexp.MustCompile(`(?m)^one\s+ready\s+stdio\s+\d+`).MatchString(r.stdout) {
		t.Fatalf("table:\n%s", r.stdout)
	}

	bad := writeConfig(t, t.TempDir(), "upstreams:\n  one:\n    comand: [x]\n")
	r = runCLI(t, "gateway", "--check", "--config", bad)
	if r.code == 0 || !strings.Contains(r.stderr, `gateway.yaml:3:5: unknown key "comand"`) {
		t.Fatalf("unknown key: exit %d\n%s", r.code, r.stderr)
	}

	collide := writeConfig(t, t.TempDir(), stdioUpstreams(bin, "one", "two")+`
naming:
  rename: {one__echo: two__get-sum}
`)
	r = runCLI(t, "gateway", "--check", "--config", collide)
	if r.code == 0 || !strings.Contains(r.stderr, "two__get-sum") || !strings.Contains(r.stderr, "one") || !strings.Contains(r.stderr, "two") {
		t.Fatalf("collision: exit %d\n%s", r.code, r.stderr)
	}

	down := writeConfig(t, t.TempDir(), `
upstreams:
  gone:
    url: http://`+testenv.FreeAddr(t)+`/mcp
`)
	r = runCLI(t, "gateway", "--check", "--start-timeout", "5s", "--config", down)
	if r.code == 0 || !strings.Contains(r.stderr, "upstream gone is") || !regexp.MustCompile(`(?m)^gone\s+(down|starting)`).MatchString(r.stdout) {
		t.Fatalf("unreachable upstream: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
}

// TestGatewayReloadOnHUP: SIGHUP adds an upstream and removes another from
// the file; an invalid file is logged and the running config stays.
func TestGatewayReloadOnHUP(t *testing.T) {
	bin := testenv.Toolwire(t)
	dir := t.TempDir()
	cfg := writeConfig(t, dir, stdioUpstreams(bin, "one"))
	g := startGateway(t, "--config", cfg, "--watch-interval", "0") // SIGHUP alone
	if names := toolNames(t, g.url, mcp.EraModern); !slices.Contains(names, "one__echo") {
		t.Fatalf("before reload: %v", names)
	}
	c := connectServe(t, g.url, mcp.EraLegacy)
	defer c.Close()

	writeConfig(t, dir, stdioUpstreams(bin, "two"))
	if err := g.cmd.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	waitFor(t, func() bool {
		names := toolNames(t, g.url, mcp.EraModern)
		return slices.Contains(names, "two__echo") && !slices.Contains(names, "one__echo")
	}, g)
	// The legacy session opened before the reload still works.
	ctx, cancel := context.WithTimeout(t.Context(), durableDeadline)
	defer cancel()
	if _, err := c.CallTool(ctx, "two__echo", map[string]any{"message": "after"}); err != nil {
		t.Fatalf("call on the session opened before the reload: %v", err)
	}

	writeConfig(t, dir, "upstreams:\n  Bad Name:\n    url: http://x/mcp\n")
	if err := g.cmd.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	waitFor(t, func() bool { return strings.Contains(g.log.String(), "reload refused") }, g)
	if names := toolNames(t, g.url, mcp.EraModern); !slices.Contains(names, "two__echo") {
		t.Fatalf("after an invalid reload: %v", names)
	}
}

// TestGatewayReloadOnFileChange: a change to the config file reloads it
// without a signal; an invalid change is refused once and the running
// config stays. Every step waits for the gateway's log of the reload
// applied or refused, never for time.
func TestGatewayReloadOnFileChange(t *testing.T) {
	bin := testenv.Toolwire(t)
	dir := t.TempDir()
	cfg := writeConfig(t, dir, stdioUpstreams(bin, "one"))
	g := startGateway(t, "--config", cfg, "--watch-interval", "100ms", "--log-level", "debug")
	count := func(s string) int { return strings.Count(g.log.String(), s) }
	writeConfig(t, dir, stdioUpstreams(bin, "one", "two"))
	waitFor(t, func() bool { return count(`msg="gateway: config reloaded"`) > 0 }, g)
	if !strings.Contains(g.log.String(), `cause="file changed" upstreams=2 upstreams_added=two`) {
		t.Fatalf("the reload does not say it was the file's change adding two:\n%s", g.log.String())
	}
	waitFor(t, func() bool { return slices.Contains(toolNames(t, g.url, mcp.EraModern), "two__echo") }, g)

	writeConfig(t, dir, "upstreams:\n  Bad Name:\n    url: http://x/mcp\n")
	waitFor(t, func() bool { return count("reload refused") > 0 }, g)
	if n := count(`msg="gateway: config reloaded"`); n != 1 {
		t.Fatalf("%d reloads applied; the invalid file (or a part of it) was applied:\n%s", n, g.log.String())
	}
	if names := toolNames(t, g.url, mcp.EraModern); !slices.Contains(names, "two__echo") || !slices.Contains(names, "one__echo") {
		t.Fatalf("after an invalid change: %v", names)
	}
	// The invalid file is not retried until it changes again: the watcher
	// reads it unchanged three times more, and refuses nothing more.
	mark := len(g.log.String())
	waitFor(t, func() bool { return strings.Count(g.log.String()[mark:], `msg="gateway: config file unchanged"`) >= 3 }, g)
	if n := count("reload refused"); n != 1 {
		t.Fatalf("an unchanged invalid file was reloaded %d times:\n%s", n, g.log.String())
	}
}

// waitFor waits as testwait.WaitFor does, failing with the gateway's log.
func waitFor(t *testing.T, cond func() bool, g *gatewayProc) {
	t.Helper()
	if d, ok := testwait.Until(cond); !ok {
		t.Fatalf("condition not reached after %v:\n%s", d, g.log.String())
	}
}

// TestGatewayOTC: otc_listen serves the merged, namespaced tools over Open
// Tool Calling 1.0 too.
func TestGatewayOTC(t *testing.T) {
	bin := testenv.Toolwire(t)
	otcAddr := testenv.FreeAddr(t)
	cfg := writeConfig(t, t.TempDir(), "otc_listen: "+otcAddr+"\n"+stdioUpstreams(bin, "one"))
	startGateway(t, "--config", cfg)
	ctx, cancel := context.WithTimeout(t.Context(), durableDeadline)
	defer cancel()
	oc, tools := otcTools(t, ctx, otcAddr, "")
	res, err := oc.Call(ctx, tools[otcName(t, tools, "one__get_sum")], map[string]any{"a": 1, "b": 2})
	if err != nil || !res.Success || !strings.Contains(string(res.Value), "The sum of 1 and 2 is 3.") {
		t.Fatalf("OTC call: %v %+v %s", err, res, res.Value)
	}
}

// TestGatewayTasksSurviveRestart: a task call through the gateway is a task
// of the gateway's, kept in data_dir: after the gateway restarts on the
// same directory, the finished task and its result are still there.
func TestGatewayTasksSurviveRestart(t *testing.T) {
	bin := testenv.Toolwire(t)
	dir := t.TempDir()
	cfg := writeConfig(t, dir, "data_dir: state\n"+stdioUpstreams(bin, "one"))
	g := startGateway(t, "--config", cfg)
	c := connectServe(t, g.url, mcp.EraLegacy)
	ctx, cancel := context.WithTimeout(t.Context(), durableDeadline)
	defer cancel()
	st, err := c.CallToolTask(ctx, "one__get-sum", map[string]any{"a": 20, "b": 22})
	if err != nil || st.Task == nil {
		t.Fatalf("CallToolTask: %+v, %v\n%s", st, err, g.log.String())
	}
	res, err := st.Wait(ctx)
	if err != nil || len(res.Content) == 0 {
		t.Fatalf("the task's result: %+v, %v", res, err)
	}
	want := string(testwait.MustJSON(t, res.Content))
	c.Close()
	if err := g.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	<-g.done
	_ = g.cmd.Wait()
	if _, err := os.Stat(filepath.Join(dir, "state", "tasks.db")); err != nil {
		t.Fatalf("no task database in data_dir: %v", err)
	}

	g = startGateway(t, "--config", cfg)
	c = connectServe(t, g.url, mcp.EraLegacy)
	got, err := c.GetTask(ctx, st.Task.TaskID)
	if err != nil || got.Status != mcp.TaskCompleted {
		t.Fatalf("tasks/get after the restart: %+v, %v", got, err)
	}
	res, err = c.WaitTask(ctx, st.Task.TaskID)
	if err != nil || string(testwait.MustJSON(t, res.Content)) != want {
		t.Fatalf("tasks/result after the restart: %+v, %v; want %s", res, err, want)
	}
}
