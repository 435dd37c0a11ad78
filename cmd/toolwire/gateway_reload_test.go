package main

import (
	"context"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/toolwire/toolwire/gateway/config"
	"github.com/toolwire/toolwire/gateway/policy"
	"github.com/toolwire/toolwire/internal/testenv"
	"github.com/toolwire/toolwire/internal/testmcp"
	"github.com/toolwire/toolwire/mcp"
)

// writeSlowly replaces the file at path with text the way a slow editor
// or a copy over the network does: truncated first, then chunk bytes at
// a time with a pause after each.
func writeSlowly(t *testing.T, path, text string, chunk int, pause time.Duration) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_TRUNC, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for i := 0; i < len(text); i += chunk {
		if _, err := f.WriteString(text[i:min(i+chunk, len(text))]); err != nil {
			t.Fatal(err)
		}
		time.Sleep(pause) // the writer's pace, not a wait for the gateway
	}
}

// TestGatewayReloadNeverAppliesAHalfWrittenFile: the config file is
// rewritten slowly, a few bytes at a time, from A to B while a caller
// without credentials calls and lists in a loop. Many prefixes of B are
// valid configs that allow what neither A nor B does (cut before the
// personas, no personas: everything; cut before the deny list: get-env).
// No call and no listing is ever allowed that neither A nor B allows, and
// B alone is applied, once.
func TestGatewayReloadNeverAppliesAHalfWrittenFile(t *testing.T) {
	bin := testenv.Toolwire(t)
	dir := t.TempDir()
	ups := stdioUpstreams(bin, "one")
	a := ups + "personas:\n  guest:\n    anonymous: true\n    tools:\n      allow: [one__echo]\n"
	b := ups + "personas:\n  guest:\n    anonymous: true\n    tools:\n      allow: [\"one__*\"]\n" +
		"      deny: [one__get-env, one__print-env, one__long-running-operation, one__sample-llm, one__get-tiny-image]\n"
	policies := []*policy.Policy{}
	for _, text := range []string{a, b} {
		f, err := config.Parse([]byte(text), "x.yaml")
		if err != nil || f.Gateway.Policy == nil {
			t.Fatalf("%v\n%s", err, text)
		}
		policies = append(policies, f.Gateway.Policy)
	}
	allowedByAOrB := func(name string) bool {
		return policies[0].Decide(policy.Anonymous(), policy.Tools, name).Allowed || policies[1].Decide(policy.Anonymous(), policy.Tools, name).Allowed
	}
	if allowedByAOrB("one__get-env") || !allowedByAOrB("one__echo") ||
		policies[0].Decide(policy.Anonymous(), policy.Tools, "one__get-sum").Allowed || !allowedByAOrB("one__get-sum") {
		t.Fatal("A and B are not the configs this test is about")
	}

	cfg := writeConfig(t, dir, a)
	// Polled often, so that the watcher sees many prefixes; the settle
	// delay is long next to the writer's pauses, so a busy machine does
	// not make the writer look finished.
	g := startGateway(t, "--config", cfg, "--watch-interval", "20ms", "--reload-settle", "1500ms")
	c := connectAs(t, g.url, "", mcp.EraModern)

	calls := []struct {
		name string
		args map[string]any
	}{{"one__get-env", map[string]any{}}, {"one__echo", map[string]any{"message": "m"}}, {"one__get-sum", map[string]any{"a": 1, "b": 2}}}
	var mu sync.Mutex
	var violations []string
	rounds, sumAllowed := 0, false
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			select {
			case <-stop:
				return
			default:
			}
			ctx, cancel := context.WithTimeout(t.Context(), durableDeadline)
			tools, err := c.ListTools(ctx)
			var bad []string
			if err == nil {
				for _, tl := range tools {
					if !allowedByAOrB(tl.Name) {
						bad = append(bad, "listed "+tl.Name)
					}
				}
			}
			gotSum := false
			for _, call := range calls {
				res, err := c.CallTool(ctx, call.name, call.args)
				if err == nil && !res.IsError {
					if !allowedByAOrB(call.name) {
						bad = append(bad, "called "+call.name+": "+testmcp.Text(res))
					}
					gotSum = gotSum || call.name == "one__get-sum"
				}
			}
			cancel()
			mu.Lock()
			violations = append(violations, bad...)
			rounds++
			sumAllowed = sumAllowed || gotSum
			mu.Unlock()
		}
	}()
	state := func() (int, bool) {
		mu.Lock()
		defer mu.Unlock()
		return rounds, sumAllowed
	}
	waitFor(t, func() bool { n, _ := state(); return n >= 2 }, g)
	before, _ := state()
	writeSlowly(t, cfg, b, 7, 10*time.Millisecond)
	during, _ := state()
	waitFor(t, func() bool { return strings.Contains(g.log.String(), `msg="gateway: config reloaded"`) }, g)
	// B is in force once a call only B allows goes through.
	waitFor(t, func() bool { _, ok := state(); return ok }, g)
	close(stop)
	<-done

	mu.Lock()
	defer mu.Unlock()
	if len(violations) > 0 {
		t.Errorf("allowed by neither A nor B: %q\n%s", violations, g.log.String())
	}
	if during-before < 1 {
		t.Errorf("the caller did not call while the file was being written (%d rounds)", during-before)
	}
	if n := strings.Count(g.log.String(), `msg="gateway: config reloaded"`); n != 1 ||
		!strings.Contains(g.log.String(), `cause="file changed" upstreams=1 personas_changed=guest`) {
		t.Errorf("%d reloads applied, want B's alone:\n%s", n, g.log.String())
	}
}

// TestGatewayReloadRefusesAnEmptyFile: an empty file (or one of comments
// only) is never applied, by the watcher or on SIGHUP: the upstreams stay
// and /readyz stays ready with them. --check refuses it too.
func TestGatewayReloadRefusesAnEmptyFile(t *testing.T) {
	bin := testenv.Toolwire(t)
	dir := t.TempDir()
	full := stdioUpstreams(bin, "one")
	cfg := writeConfig(t, dir, full)
	g := startGateway(t, "--config", cfg, "--watch-interval", "50ms")
	refused := func() int { return strings.Count(g.log.String(), "the file is empty") }

	writeConfig(t, dir, "")
	waitFor(t, func() bool { return refused() == 1 }, g)
	writeConfig(t, dir, "# only a comment\n\n")
	waitFor(t, func() bool { return refused() == 2 }, g)
	if err := g.cmd.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	waitFor(t, func() bool { return refused() == 3 }, g)
	if strings.Contains(g.log.String(), `msg="gateway: config reloaded"`) {
		t.Fatalf("an empty file was applied:\n%s", g.log.String())
	}
	if names := toolNames(t, g.url, mcp.EraModern); !slices.Contains(names, "one__echo") {
		t.Fatalf("the upstream is gone: %v", names)
	}
	resp, err := http.Get(g.admin + "/readyz")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("/readyz: %d", resp.StatusCode)
	}

	for _, text := range []string{"", " \n\t\n", "# nothing\n"} {
		empty := writeConfig(t, t.TempDir(), text)
		out, stderr, code := runToolwire(t, "gateway", "--check", "--config", empty)
		if code == 0 || !strings.Contains(stderr, "the file is empty") {
			t.Errorf("--check of %q: exit %d\n%s%s", text, code, out, stderr)
		}
	}
}
