package reference

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/base64"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/toolwire/toolwire/client"
	"github.com/toolwire/toolwire/internal/testmcp"
	"github.com/toolwire/toolwire/internal/testwait"
	"github.com/toolwire/toolwire/mcp"
	"github.com/toolwire/toolwire/server"
)

// testServer serves the reference server over Streamable HTTP in-process;
// the config is returned for looking at the running simulations.
func testServer(t *testing.T, opts ...Option) (*server.Server, *config, string) {
	t.Helper()
	c := newConfig(append([]Option{WithLimits(Limits{TickInterval: 20 * time.Millisecond})}, opts...))
	s := server.New(Info())
	if err := c.register(s); err != nil {
		t.Fatal(err)
	}
	// No simulation may outlive its server's sessions and toggles: the
	// wait runs after the server has closed (cleanups run last first).
	t.Cleanup(c.toggles.wg.Wait)
	return s, c, testmcp.ServeHTTP(t, s)
}

func connect(t *testing.T, url string, era mcp.Era, opts ...client.Option) *client.Client {
	t.Helper()
	return testmcp.Connect(t, &client.HTTP{URL: url}, append([]client.Option{client.WithEra(era)}, opts...)...)
}

func text(t *testing.T, res *mcp.CallToolResult) string {
	t.Helper()
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text + "\n")
		}
	}
	return b.String()
}

func call(t *testing.T, c *client.Client, name string, args any) *mcp.CallToolResult {
	t.Helper()
	res, err := c.CallTool(t.Context(), name, args)
	var te *client.ToolError
	if errors.As(err, &te) && te.Result != nil {
		return te.Result
	}
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return res
}

func TestToolList(t *testing.T) {
	s := server.New(Info())
	if err := Register(s); err != nil {
		t.Fatal(err)
	}
	have := map[string]bool{}
	for _, tool := range s.Tools() {
		have[tool.Name] = true
	}
	for _, name := range []string{"echo", "get-sum", "get-env", "get-structured-content", "get-tiny-image", "get-annotated-message",
		"get-resource-links", "get-resource-reference", "gzip-file-as-resource", "toggle-simulated-logging", "toggle-subscriber-updates",
		"trigger-long-running-operation", "simulate-research-query"} {
		if !have[name] {
			t.Errorf("tool %s missing", name)
		}
	}
}

func TestGetEnvHidesSecrets(t *testing.T) {
	t.Setenv("TOOLWIRE_TEST_API_TOKEN", "s3cret-token-value")
	t.Setenv("TOOLWIRE_TEST_PLAIN", "plain-value-4711")
	t.Setenv("OTHER_UNLISTED_VAR", "unlisted-value-0815")
	for _, tc := range []struct {
		name  string
		opts  []Option
		shown bool
	}{{"default", nil, false}, {"allowed", []Option{WithEnvAllow("TOOLWIRE_TEST_*")}, true}} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, url := testServer(t, tc.opts...)
			c := connect(t, url, mcp.EraAuto)
			out := text(t, call(t, c, "get-env", nil))
			if strings.Contains(out, "s3cret-token-value") || strings.Contains(out, "unlisted-value-0815") {
				t.Fatalf("get-env leaked a value:\n%s", out)
			}
			if got := strings.Contains(out, "plain-value-4711"); got != tc.shown {
				t.Errorf("allowed plain variable shown = %v, want %v:\n%s", got, tc.shown, out)
			}
			if tc.shown && !strings.Contains(out, `"TOOLWIRE_TEST_API_TOKEN": "[redacted]"`) {
				t.Errorf("allowed secret-looking variable not redacted:\n%s", out)
			}
			if !tc.shown && strings.Contains(out, "TOOLWIRE_TEST_") {
				t.Errorf("unallowed names listed:\n%s", out)
			}
		})
	}
}

func gunzip(t *testing.T, b []byte) []byte {
	t.Helper()
	zr, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	out, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestGzipDataURIRoundTrip(t *testing.T) {
	_, _, url := testServer(t)
	c := connect(t, url, mcp.EraAuto)
	input := []byte("hello, gzip\n" + strings.Repeat("toolwire ", 100))
	for _, data := range []string{
		"data:text/plain;base64," + base64.StdEncoding.EncodeToString(input),
		"data:," + strings.ReplaceAll(strings.ReplaceAll(string(input), " ", "%20"), "\n", "%0A"),
	} {
		res := call(t, c, "gzip-file-as-resource", map[string]any{"name": "hello.txt.gz", "data": data})
		if res.IsError {
			t.Fatalf("tool error: %s", text(t, res))
		}
		link, ok := res.Content[0].(*mcp.ResourceLink)
		if !ok || link.URI != "demo://gzip/hello.txt.gz" || link.MIMEType != "application/gzip" {
			t.Fatalf("result %+v, want a resource link to demo://gzip/hello.txt.gz", res.Content[0])
		}
		rr, err := c.ReadResource(t.Context(), link.URI)
		if err != nil {
			t.Fatal(err)
		}
		blob, ok := rr.Contents[0].(*mcp.BlobResourceContents)
		if !ok || blob.MIMEType != "application/gzip" {
			t.Fatalf("read %+v, want an application/gzip blob", rr.Contents[0])
		}
		if got := gunzip(t, blob.Blob); !bytes.Equal(got, input) {
			t.Errorf("gunzipped %q, want %q", got, input)
		}
	}
	res := call(t, c, "gzip-file-as-resource", map[string]any{"data": "data:,abc", "outputType": "resource"})
	er, ok := res.Content[0].(*mcp.EmbeddedResource)
	if !ok {
		t.Fatalf("outputType resource gave %+v", res.Content[0])
	}
	blob := er.Resource.(*mcp.BlobResourceContents)
	if blob.URI != "demo://gzip/README.md.gz" || string(gunzip(t, blob.Blob)) != "abc" {
		t.Errorf("embedded %s = %q", blob.URI, gunzip(t, blob.Blob))
	}
}

func TestGzipRefusals(t *testing.T) {
	root := t.TempDir()
	outside := t.TempDir()
	if err := os.WriteFile(filepath.Join(root, "in.txt"), []byte("inside the root"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(outside, "secret.txt"), []byte("outside the root"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "big.bin"), bytes.Repeat([]byte("x"), 2048), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(outside, "secret.txt"), filepath.Join(root, "escape.txt")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(root, "outdir")); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(root, "sub"), 0o700); err != nil {
		t.Fatal(err)
	}
	_, _, url := testServer(t, WithFileRoot(root), WithLimits(Limits{MaxGzipBytes: 1024}))
	c := connect(t, url, mcp.EraAuto)
	for _, tc := range []struct{ data, want string }{
		{"http://127.0.0.1:1/README.md", "never fetches http"},
		{"https://example.com/x", "never fetches https"},
		{"ftp://127.0.0.1/x", "never fetches ftp"},
		{"file://" + filepath.Join(outside, "secret.txt"), "outside"},
		{"../" + filepath.Base(outside) + "/secret.txt", "outside"},
		{"escape.txt", "outside"},
		{"outdir/secret.txt", "outside"},
		{"file://" + filepath.Join(root, "escape.txt"), "outside"},
		{"/etc/passwd", "absolute"},
		{"big.bin", "larger than the 1024"},
		{"data:;base64," + base64.StdEncoding.EncodeToString(bytes.Repeat([]byte("y"), 2000)), "larger than"},
		{"nope.txt", "no such file"},
		{"sub", "not a regular file"},
		{"data:," + strings.Repeat("z", 4000), "larger than"},
	} {
		res := call(t, c, "gzip-file-as-resource", map[string]any{"data": tc.data})
		out := text(t, res)
		if !res.IsError || !strings.Contains(out, tc.want) {
			t.Errorf("data %q: isError=%v %q, want a tool error containing %q", tc.data, res.IsError, out, tc.want)
		}
		if strings.Contains(out, "outside the root\n") {
			t.Errorf("data %q leaked the outside file", tc.data)
		}
	}
	for _, data := range []string{"in.txt", "file://" + filepath.Join(root, "in.txt")} {
		res := call(t, c, "gzip-file-as-resource", map[string]any{"data": data, "outputType": "resource"})
		if res.IsError {
			t.Fatalf("%s: %s", data, text(t, res))
		}
		if got := gunzip(t, res.Content[0].(*mcp.EmbeddedResource).Resource.(*mcp.BlobResourceContents).Blob); string(got) != "inside the root" {
			t.Errorf("%s: %q", data, got)
		}
	}
	// Without a file root, files are refused too.
	_, _, url2 := testServer(t)
	c2 := connect(t, url2, mcp.EraAuto)
	if res := call(t, c2, "gzip-file-as-resource", map[string]any{"data": "in.txt"}); !res.IsError || !strings.Contains(text(t, res), "no file root") {
		t.Errorf("file without root: %s", text(t, res))
	}
}

func TestGzipStoreBounded(t *testing.T) {
	s, _, url := testServer(t, WithLimits(Limits{MaxGzipResources: 2}))
	c := connect(t, url, mcp.EraAuto)
	for _, n := range []string{"a.gz", "b.gz", "c.gz", "b.gz"} {
		if res := call(t, c, "gzip-file-as-resource", map[string]any{"name": n, "data": "data:," + n}); res.IsError {
			t.Fatal(text(t, res))
		}
	}
	var gz []string
	for _, r := range s.Resources() {
		if strings.HasPrefix(r.URI, "demo://gzip/") {
			gz = append(gz, r.URI)
		}
	}
	if strings.Join(gz, " ") != "demo://gzip/b.gz demo://gzip/c.gz" {
		t.Errorf("gzip resources %v, want b.gz and c.gz", gz)
	}
	if _, err := c.ReadResource(t.Context(), "demo://gzip/a.gz"); err == nil {
		t.Error("evicted a.gz is still readable")
	}
	for _, bad := range []string{"a/b.gz", strings.Repeat("n", 300)} {
		if res := call(t, c, "gzip-file-as-resource", map[string]any{"name": bad, "data": "data:,x"}); !res.IsError {
			t.Errorf("name %q accepted", bad)
		}
	}
}

func TestResourceLinksReadable(t *testing.T) {
	_, _, url := testServer(t)
	for _, era := range []mcp.Era{mcp.EraLegacy, mcp.EraModern} {
		c := connect(t, url, era)
		res := call(t, c, "get-resource-links", map[string]any{"count": 10})
		n := 0
		for _, b := range res.Content {
			link, ok := b.(*mcp.ResourceLink)
			if !ok {
				continue
			}
			n++
			rr, err := c.ReadResource(t.Context(), link.URI)
			if err != nil {
				t.Fatalf("%v: read %s: %v", era, link.URI, err)
			}
			var mime string
			switch rc := rr.Contents[0].(type) {
			case *mcp.TextResourceContents:
				mime = rc.MIMEType
			case *mcp.BlobResourceContents:
				mime = rc.MIMEType
			}
			if mime != link.MIMEType {
				t.Errorf("%s: read mimeType %q, link says %q", link.URI, mime, link.MIMEType)
			}
		}
		if n != 10 {
			t.Errorf("%d links, want 10", n)
		}
	}
}

func TestResourcesAndTemplates(t *testing.T) {
	_, _, url := testServer(t)
	c := connect(t, url, mcp.EraAuto)
	ctx := t.Context()
	list, err := c.ListResources(ctx)
	if err != nil || len(list) < 2 {
		t.Fatalf("resources %v %v", list, err)
	}
	tmpls, err := c.ListResourceTemplates(ctx)
	if err != nil || len(tmpls) != 3 {
		t.Fatalf("templates %v %v", tmpls, err)
	}
	for uri, want := range map[string]string{
		"demo://readme":     "text/markdown",
		"demo://logo.png":   "image/png",
		"demo://resource/7": "text/plain",
		"demo://resource/8": "application/octet-stream",
		"demo://text/3":     "text/plain",
		"demo://blob/3":     "application/octet-stream",
		"demo://text/100":   "text/plain",
	} {
		rr, err := c.ReadResource(ctx, uri)
		if err != nil {
			t.Errorf("%s: %v", uri, err)
			continue
		}
		switch rc := rr.Contents[0].(type) {
		case *mcp.TextResourceContents:
			if rc.MIMEType != want || rc.Text == "" {
				t.Errorf("%s: %+v", uri, rc)
			}
		case *mcp.BlobResourceContents:
			if rc.MIMEType != want || len(rc.Blob) == 0 {
				t.Errorf("%s: %+v", uri, rc)
			}
		}
	}
	// get-resource-reference embeds what resources/read returns.
	res := call(t, c, "get-resource-reference", map[string]any{"resourceType": "blob", "resourceId": 5})
	emb := res.Content[1].(*mcp.EmbeddedResource).Resource.(*mcp.BlobResourceContents)
	rr, err := c.ReadResource(ctx, emb.URI)
	if err != nil || !bytes.Equal(rr.Contents[0].(*mcp.BlobResourceContents).Blob, emb.Blob) {
		t.Errorf("read %s: %v", emb.URI, err)
	}
	for _, uri := range []string{"demo://resource/0", "demo://resource/101", "demo://resource/-1", "demo://text/01", "demo://blob/abc", "demo://nothing"} {
		if _, err := c.ReadResource(ctx, uri); err == nil {
			t.Errorf("%s: read succeeded, want not found", uri)
		}
	}
	comp, err := c.Complete(ctx, mcp.CompletionReference{Type: mcp.RefResource, URI: "demo://resource/{id}"},
		mcp.CompletionArgument{Name: "id", Value: "9"}, nil)
	if err != nil || strings.Join(comp.Values, ",") != "9,90,91,92,93,94,95,96,97,98,99" {
		t.Errorf("complete id 9: %+v %v", comp, err)
	}
}

func TestPromptsAndCompletions(t *testing.T) {
	_, _, url := testServer(t)
	c := connect(t, url, mcp.EraAuto)
	ctx := t.Context()
	complete := func(prompt, arg, value string, resolved map[string]string) string {
		t.Helper()
		comp, err := c.Complete(ctx, mcp.CompletionReference{Type: mcp.RefPrompt, Name: prompt}, mcp.CompletionArgument{Name: arg, Value: value}, resolved)
		if err != nil {
			t.Fatalf("complete %s.%s: %v", prompt, arg, err)
		}
		return strings.Join(comp.Values, ",")
	}
	for _, tc := range []struct {
		prompt, arg, value string
		resolved           map[string]string
		want               string
	}{
		{"completable-prompt", "department", "S", nil, "Sales,Support"},
		{"completable-prompt", "name", "", map[string]string{"department": "Engineering"}, "Alice,Bob,Charlie"},
		{"completable-prompt", "name", "E", map[string]string{"department": "Sales"}, "Eve"},
		{"completable-prompt", "name", "A", nil, ""},
		{"args-prompt", "city", "Bo", nil, "Boston"},
		{"resource-prompt", "resourceType", "b", nil, "blob"},
		{"resource-prompt", "resourceType", "", nil, "text,blob"},
	} {
		if got := complete(tc.prompt, tc.arg, tc.value, tc.resolved); got != tc.want {
			t.Errorf("complete %s.%s %q %v = %q, want %q", tc.prompt, tc.arg, tc.value, tc.resolved, got, tc.want)
		}
	}
	prompts, err := c.ListPrompts(ctx)
	if err != nil || len(prompts) != 4 {
		t.Fatalf("prompts %d %v", len(prompts), err)
	}
	for _, tc := range []struct {
		name string
		args map[string]string
		want string
	}{
		{"simple-prompt", nil, "simple prompt without arguments"},
		{"args-prompt", map[string]string{"city": "Paris", "state": "IDF"}, "What's the weather in Paris, IDF?"},
		{"resource-prompt", map[string]string{"resourceType": "text", "resourceId": "4"}, "text resource 4"},
		{"completable-prompt", map[string]string{"department": "Sales", "name": "Eve"}, "Please promote Eve to the head of the Sales team."},
	} {
		res, err := c.GetPrompt(ctx, tc.name, tc.args)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if got := res.Messages[0].Content.(*mcp.TextContent).Text; !strings.Contains(got, tc.want) {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
	res, err := c.GetPrompt(ctx, "resource-prompt", map[string]string{"resourceType": "blob", "resourceId": "2"})
	if err != nil {
		t.Fatal(err)
	}
	emb := res.Messages[1].Content.(*mcp.EmbeddedResource).Resource.(*mcp.BlobResourceContents)
	rr, err := c.ReadResource(ctx, emb.URI)
	if err != nil || !bytes.Equal(rr.Contents[0].(*mcp.BlobResourceContents).Blob, emb.Blob) {
		t.Errorf("prompt's %s is not what resources/read returns: %v", emb.URI, err)
	}
	if _, err := c.GetPrompt(ctx, "resource-prompt", map[string]string{"resourceType": "text", "resourceId": "1000"}); err == nil {
		t.Error("resource-prompt accepted id 1000")
	}
}

func TestToggleSimulatedLogging(t *testing.T) {
	_, cfg, url := testServer(t)
	var mu sync.Mutex
	var got []mcp.LoggingLevel
	logs := func() []mcp.LoggingLevel {
		mu.Lock()
		defer mu.Unlock()
		return append([]mcp.LoggingLevel(nil), got...)
	}
	c := connect(t, url, mcp.EraLegacy, client.WithLogHandler(func(m client.LogMessage) {
		if m.Logger == "simulated" {
			mu.Lock()
			got = append(got, m.Level)
			mu.Unlock()
		}
	}))
	if err := c.SetLogLevel(t.Context(), mcp.LevelWarning); err != nil {
		t.Fatal(err)
	}
	if res := call(t, c, "toggle-simulated-logging", nil); res.IsError || !strings.Contains(text(t, res), "Started") {
		t.Fatalf("start: %s", text(t, res))
	}
	testwait.WaitFor(t, "3 simulated log messages", func() bool { return len(logs()) >= 3 })
	for _, l := range logs() {
		if !l.AtLeast(mcp.LevelWarning) {
			t.Errorf("message at %s reached a session at warning", l)
		}
	}
	if res := call(t, c, "toggle-simulated-logging", nil); !strings.Contains(text(t, res), "Stopped") {
		t.Fatalf("stop: %s", text(t, res))
	}
	if n, _ := cfg.toggles.running(); n != 0 {
		t.Fatalf("%d simulations running after the toggle went off", n)
	}
	// Toggled off, the simulating goroutine may still be sending its last
	// message: once it has ended nothing more is sent. One that went on
	// would fail the test here.
	testwait.Returns(t, "the simulation to stop sending", cfg.toggles.wg.Wait)
	// Started again, it ends with its session.
	call(t, c, "toggle-simulated-logging", nil)
	if n, _ := cfg.toggles.running(); n != 1 {
		t.Fatalf("%d simulations running, want 1", n)
	}
	c.Close()
	testwait.WaitFor(t, "the simulation to end with its session", func() bool { n, _ := cfg.toggles.running(); return n == 0 })

	// 2026-07-28 has no session to log to.
	m := connect(t, url, mcp.EraModern)
	if res := call(t, m, "toggle-simulated-logging", nil); !res.IsError || !strings.Contains(text(t, res), "2025-era session") {
		t.Errorf("2026-07-28: %s", text(t, res))
	}
}

func TestToggleSubscriberUpdates(t *testing.T) {
	_, cfg, url := testServer(t)
	var mu sync.Mutex
	updated := map[string]int{}
	count := func(uri string) int { mu.Lock(); defer mu.Unlock(); return updated[uri] }
	c := connect(t, url, mcp.EraLegacy, client.WithResourceUpdatedHandler(func(uri string) {
		mu.Lock()
		updated[uri]++
		mu.Unlock()
	}))
	if err := c.Subscribe(t.Context(), "demo://resource/1"); err != nil {
		t.Fatal(err)
	}
	if res := call(t, c, "toggle-subscriber-updates", nil); !strings.Contains(text(t, res), "Started") {
		t.Fatalf("start: %s", text(t, res))
	}
	testwait.WaitFor(t, "2 updates of demo://resource/1", func() bool { return count("demo://resource/1") >= 2 })
	if count("demo://resource/2") != 0 {
		t.Error("an update of a URI the session did not subscribe to")
	}
	if res := call(t, c, "toggle-subscriber-updates", nil); !strings.Contains(text(t, res), "Stopped") {
		t.Fatalf("stop: %s", text(t, res))
	}
	if _, on := cfg.toggles.running(); on {
		t.Error("updates still on")
	}
	// The server's lifetime ends a running simulation too.
	ctx, cancel := context.WithCancel(t.Context())
	_, cfg2, url2 := testServer(t, WithLifetime(ctx))
	c2 := connect(t, url2, mcp.EraLegacy)
	call(t, c2, "toggle-subscriber-updates", nil)
	cancel()
	testwait.WaitFor(t, "the lifetime to end the updates", func() bool { _, on := cfg2.toggles.running(); return !on })
}

func TestResearchElicitation(t *testing.T) {
	_, _, url := testServer(t)
	for _, era := range []mcp.Era{mcp.EraLegacy, mcp.EraModern} {
		t.Run(era.String(), func(t *testing.T) {
			var asked []string
			var mu sync.Mutex
			c := connect(t, url, era, client.WithElicitationHandler(func(_ context.Context, p *mcp.ElicitParams) (*mcp.ElicitResult, error) {
				mu.Lock()
				asked = append(asked, p.Message)
				mu.Unlock()
				return &mcp.ElicitResult{Action: mcp.ActionAccept, Content: map[string]any{"interpretation": "historical"}}, nil
			}))
			if c.Era() != era {
				t.Fatalf("era %v, want %v", c.Era(), era)
			}
			res := call(t, c, "simulate-research-query", map[string]any{"topic": "quantum", "ambiguous": true})
			out := text(t, res)
			if res.IsError || !strings.Contains(out, "Interpretation: historical") || !strings.Contains(out, "Stage 4: Generating report: done") {
				t.Errorf("result %s", out)
			}
			mu.Lock()
			defer mu.Unlock()
			if len(asked) != 1 || !strings.Contains(asked[0], "quantum") {
				t.Errorf("elicitations %q, want one about the topic", asked)
			}
		})
	}
}
