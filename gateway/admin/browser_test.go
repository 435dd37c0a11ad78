package admin

import (
	"context"
	"errors"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/toolwire/toolwire/gateway"
	"github.com/toolwire/toolwire/gateway/audit"
	"github.com/toolwire/toolwire/gateway/audit/sqlite"
	"github.com/toolwire/toolwire/gateway/policy"
	"github.com/toolwire/toolwire/internal/testenv"
	"github.com/toolwire/toolwire/mcp"
	"github.com/toolwire/toolwire/server"
)

// upstreamServer is an in-process MCP server with the given tools, each
// answering with its own name.
func upstreamServer(t *testing.T, name string, tools ...string) *server.Server {
	t.Helper()
	s := server.New(mcp.Implementation{Name: name, Version: "1"})
	for _, tool := range tools {
		err := server.AddTool(s, &mcp.Tool{Name: tool, Description: tool + " of " + name},
			func(context.Context, *server.CallRequest, struct{}) (struct {
				Tool string `json:"tool"`
			}, error) {
				return struct {
					Tool string `json:"tool"`
				}{tool}, nil
			})
		if err != nil {
			t.Fatal(err)
		}
	}
	return s
}

// TestBrowser drives the page in headless Chromium as an administrator
// would: redirected to the login, logs in with the key, sees the upstreams,
// filters the audit log by one identity, and leaves a full-page screenshot
// (t.ArtifactDir(); also $TOOLWIRE_ARTIFACTS/admin-page.png when set).
func TestBrowser(t *testing.T) {
	chromium := testenv.Chromium(t)

	gw, err := gateway.New(gateway.Config{Upstreams: []gateway.Upstream{
		{Name: "files", Server: upstreamServer(t, "files", "read_file", "delete_file")},
		{Name: "search", Server: upstreamServer(t, "search", "query", "reindex")},
	}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		gw.Close(ctx)
	})
	pol, err := policy.New([]policy.Persona{
		{Name: "operators", Match: policy.Match{Identities: []string{"api_key:alice"}},
			Tools: policy.Rules{Allow: []string{"*"}, Deny: []string{"*__delete_*"}}},
		{Name: "readers", Match: policy.Match{Identities: []string{"api_key:bob"}},
			Tools: policy.Rules{Allow: []string{"files__read_*", "search__query"}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	store, err := sqlite.Open(filepath.Join(t.TempDir(), "audit.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	start := time.Now().Add(-time.Hour).UTC()
	for i, r := range []audit.Record{
		{Identity: "api_key:alice", Persona: "operators", Upstream: "files", Tool: "files__read_file", Outcome: audit.OutcomeOK},
		{Identity: "api_key:bob", Persona: "readers", Upstream: "search", Tool: "search__query", Outcome: audit.OutcomeOK},
		{Identity: "api_key:alice", Persona: "operators", Upstream: "files", Tool: "files__delete_file", Outcome: audit.OutcomeDenied,
			Error: `denied by persona "operators": tools.deny "*__delete_*"`},
		{Identity: "api_key:bob", Persona: "readers", Upstream: "search", Tool: "search__reindex", Outcome: audit.OutcomeDenied,
			Error: `denied: no tools rule of persona "readers" matches "search__reindex"`},
		{Identity: "api_key:alice", Persona: "operators", Upstream: "search", Tool: "search__reindex", Outcome: audit.OutcomeOK},
	} {
		r.Time, r.Method, r.Duration = start.Add(time.Duration(i)*time.Minute), "tools/call", time.Duration(i+1)*time.Millisecond
		if err := store.Append(context.Background(), &r); err != nil {
			t.Fatal(err)
		}
	}
	key, err := policy.NewKey()
	if err != nil {
		t.Fatal(err)
	}
	h, err := NewHandler(Config{KeyHash: policy.HashKey(key), Gateway: gw,
		Policy: func() *policy.Policy { return pol }, Audit: store})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)

	ctx := newBrowser(t, chromium)

	// Not logged in: the overview sends to the login form.
	if err := chromedp.Do(ctx, chromedp.Navigate(srv.URL+"/admin/"), chromedp.WaitVisible(chromedp.ID("key"))); err != nil {
		t.Fatalf("opening /admin/: %v", err)
	}
	if loc, err := chromedp.Run(ctx, chromedp.Location()); err != nil || !strings.HasSuffix(loc, "/admin/login") {
		t.Fatalf("location = %q (%v), want the login page", loc, err)
	}
	if err := chromedp.Do(ctx, chromedp.SendKeys(chromedp.ID("key"), key)); err != nil {
		t.Fatal(err)
	}
	if _, err := chromedp.RunResponse(ctx, chromedp.Click(chromedp.ID("login-submit"))); err != nil {
		t.Fatalf("submitting the login: %v", err)
	}
	if err := chromedp.Do(ctx, chromedp.WaitVisible(chromedp.ID("upstreams"))); err != nil {
		msg, _ := chromedp.Run(ctx, chromedp.Text(chromedp.CSS("main")))
		t.Fatalf("no upstreams table after login: %v\npage: %s", err, msg)
	}
	ups, err := chromedp.Run(ctx, chromedp.Text(chromedp.ID("upstreams")))
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"files", "search"} {
		if !strings.Contains(ups, name) {
			t.Errorf("upstreams table lacks %q:\n%s", name, ups)
		}
	}
	tools, err := chromedp.Run(ctx, chromedp.Text(chromedp.ID("tools")))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"operators", "readers", "files__delete_file", "*__delete_*", "search__query"} {
		if !strings.Contains(tools, want) {
			t.Errorf("tools table lacks %q:\n%s", want, tools)
		}
	}

	overview, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatalf("screenshot: %v", err)
	}
	saveScreenshot(t, "admin-overview.png", overview, false)

	// The audit log, filtered by bob.
	if _, err := chromedp.RunResponse(ctx, chromedp.Click(chromedp.CSS(`header a[href="/admin/audit"]`))); err != nil {
		t.Fatalf("opening the audit log: %v", err)
	}
	identities := func() []string {
		t.Helper()
		ids, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](
			`Array.from(document.querySelectorAll('#records td.identity'), td => td.textContent)`))
		if err != nil {
			t.Fatalf("reading the identity column: %v", err)
		}
		return ids
	}
	if ids := identities(); len(ids) != 5 {
		t.Fatalf("unfiltered audit log shows %d records (%v), want 5", len(ids), ids)
	}
	if err := chromedp.Do(ctx, chromedp.SendKeys(chromedp.ID("identity"), "api_key:bob")); err != nil {
		t.Fatal(err)
	}
	if _, err := chromedp.RunResponse(ctx, chromedp.Click(chromedp.ID("filter"))); err != nil {
		t.Fatalf("filtering: %v", err)
	}
	if err := chromedp.Do(ctx, chromedp.WaitVisible(chromedp.ID("records"))); err != nil {
		t.Fatal(err)
	}
	if loc, _ := chromedp.Run(ctx, chromedp.Location()); !strings.Contains(loc, "identity=api_key%3Abob") {
		t.Errorf("location after filtering = %q", loc)
	}
	ids := identities()
	if len(ids) != 2 || slices.IndexFunc(ids, func(s string) bool { return s != "api_key:bob" }) >= 0 {
		t.Errorf("filtered by api_key:bob, the page shows identities %v", ids)
	}

	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatalf("screenshot: %v", err)
	}
	saveScreenshot(t, "admin-page.png", png, true)
}

// newBrowser starts headless Chromium for the test, in its own user data
// directory, and makes sure at cleanup that the browser process is gone.
func newBrowser(t *testing.T, chromium string) context.Context {
	t.Helper()
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(chromium),
		chromedp.NoSandbox, // the tests run as root, where the sandbox cannot start
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1280, 900),
		chromedp.Flag("disable-gpu", true),
	)
	allocCtx, allocCancel := chromedp.NewExecAllocator(context.Background(), opts...)
	// The whole browser session is bounded: the timeout goes under the
	// chromedp context, since the context of the first action owns the
	// browser and must not end before the test does.
	boundCtx, boundCancel := context.WithTimeout(allocCtx, 3*time.Minute)
	ctx, cancel := chromedp.NewContext(boundCtx)
	if err := chromedp.Do(ctx); err != nil { // starts the browser
		cancel()
		boundCancel()
		allocCancel()
		t.Fatalf("starting Chromium (%s): %v", chromium, err)
	}
	var pid int
	if p := chromedp.FromContext(ctx).Browser.Process(); p != nil {
		pid = p.Pid
	}
	t.Cleanup(func() {
		closeCtx, closeCancel := context.WithTimeout(ctx, 10*time.Second)
		defer closeCancel()
		if err := chromedp.Cancel(closeCtx); err != nil && !errors.Is(err, context.Canceled) {
			t.Logf("closing Chromium: %v", err)
		}
		cancel()
		boundCancel()
		allocCancel() // kills the process if it did not close, and waits for it
		if pid == 0 {
			return
		}
		deadline := time.Now().Add(10 * time.Second)
		for syscall.Kill(pid, 0) == nil {
			if time.Now().After(deadline) {
				syscall.Kill(pid, syscall.SIGKILL)
				t.Errorf("Chromium (pid %d) still runs after the test; killed", pid)
				return
			}
			time.Sleep(50 * time.Millisecond)
		}
	})
	return ctx
}

// saveScreenshot writes png as name to the test's artifact directory (kept
// by `go test -artifacts -outputdir DIR`) and, when share is set and so is
// TOOLWIRE_ARTIFACTS, copies it to $TOOLWIRE_ARTIFACTS/name.
func saveScreenshot(t *testing.T, name string, png []byte, share bool) {
	t.Helper()
	p := filepath.Join(t.ArtifactDir(), name)
	if err := os.WriteFile(p, png, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot: %s", p)
	if dir := os.Getenv("TOOLWIRE_ARTIFACTS"); share && dir != "" {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, png, 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("screenshot: %s", p)
	}
}
