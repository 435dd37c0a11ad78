package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolwire/toolwire/mcp"
	"github.com/toolwire/toolwire/server"
	"github.com/toolwire/toolwire/transport/streamable"
)

// logoBytes is the blob resource's content: not valid UTF-8 on purpose.
var logoBytes = []byte{0x89, 'P', 'N', 'G', 0, 1, 2, 0xff, 0xfe}

// cliTestServer has resources, a template, prompts and tools that elicit,
// log and report the client's capabilities.
func cliTestServer(t *testing.T) *server.Server {
	t.Helper()
	s := server.New(mcp.Implementation{Name: "cli-test", Version: "1.0.0"})
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(server.AddResource(s, &mcp.Resource{URI: "file:///docs/readme.md", Name: "readme", Title: "Read me", MIMEType: "text/markdown",
		Description: "The project's introduction, which is long enough that the table has to cut it short somewhere"},
		func(ctx context.Context, req *server.ResourceRequest) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{Contents: []mcp.ResourceContents{&mcp.TextResourceContents{URI: req.URI, MIMEType: "text/markdown", Text: "# Hello\nworld\n"}}}, nil
		}))
	must(server.AddResource(s, &mcp.Resource{URI: "file:///img/logo.png", Name: "logo", MIMEType: "image/png"},
		func(ctx context.Context, req *server.ResourceRequest) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{Contents: []mcp.ResourceContents{&mcp.BlobResourceContents{URI: req.URI, MIMEType: "image/png", Blob: logoBytes}}}, nil
		}))
	must(server.AddResourceTemplate(s, &mcp.ResourceTemplate{URITemplate: "file:///logs/{day}.log", Name: "daily-log", MIMEType: "text/plain", Description: "One day's log"},
		func(ctx context.Context, req *server.ResourceRequest) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{Contents: []mcp.ResourceContents{&mcp.TextResourceContents{URI: req.URI, Text: "log of " + req.Vars["day"]}}}, nil
		}))
	must(server.AddPrompt(s, &mcp.Prompt{Name: "greet", Title: "Greeting", Description: "Greets someone",
		Arguments: []mcp.PromptArgument{{Name: "name", Required: true}, {Name: "style"}}},
		func(ctx context.Context, req *server.PromptRequest, args map[string]string) (*mcp.GetPromptResult, error) {
			return &mcp.GetPromptResult{Description: "A greeting", Messages: []mcp.PromptMessage{
				{Role: mcp.RoleUser, Content: &mcp.TextContent{Text: "Greet " + args["name"] + " in a " + args["style"] + " way."}},
				{Role: mcp.RoleAssistant, Content: &mcp.EmbeddedResource{Resource: &mcp.TextResourceContents{URI: "file:///docs/readme.md", MIMEType: "text/markdown", Text: "# Hello"}}},
				{Role: mcp.RoleUser, Content: &mcp.ImageContent{Data: logoBytes, MIMEType: "image/png"}},
			}}, nil
		}))
	type none struct{}
	must(server.AddTool(s, &mcp.Tool{Name: "caps"}, func(ctx context.Context, req *server.CallRequest, _ none) (string, error) {
		return fmt.Sprintf("elicitation declared: %v", req.Peer.ClientCapabilities.Has("elicitation")), nil
	}))
	must(server.AddTool(s, &mcp.Tool{Name: "signup"}, func(ctx context.Context, req *server.CallRequest, _ none) (string, error) {
		res, err := req.Elicit(ctx, &mcp.ElicitParams{Message: "Sign up for the service", RequestedSchema: json.RawMessage(signupSchema)})
		if err != nil {
			return "", err
		}
		if res.Action != mcp.ActionAccept {
			return "action: " + res.Action, nil
		}
		b, err := json.Marshal(res.Content)
		return "accepted: " + string(b), err
	}))
	must(server.AddTool(s, &mcp.Tool{Name: "chatty"}, func(ctx context.Context, req *server.CallRequest, _ none) (string, error) {
		for _, m := range []struct {
			level mcp.LoggingLevel
			data  any
		}{
			{mcp.LevelDebug, "debug detail"},
			{mcp.LevelInfo, map[string]any{"msg": "informational"}},
			{mcp.LevelWarning, map[string]any{"msg": "careful now", "n": 1}},
			{mcp.LevelError, map[string]any{"code": 7, "what": "broken"}},
		} {
			if err := req.Log(ctx, m.level, "chatty", m.data); err != nil {
				return "", err
			}
		}
		return "done", nil
	}))
	return s
}

const signupSchema = `{"type":"object","properties":{
	"name":{"type":"string","title":"Your name","minLength":2},
	"age":{"type":"integer","description":"in years","minimum":0,"maximum":150},
	"color":{"type":"string","title":"Favourite colour","oneOf":[{"const":"red","title":"Red"},{"const":"green","title":"Green"}]},
	"plan":{"type":"string","enum":["basic","pro"],"enumNames":["Basic plan","Pro plan"],"default":"basic"},
	"newsletter":{"type":"boolean","default":true},
	"tags":{"type":"array","items":{"anyOf":[{"const":"a","title":"Alpha"},{"const":"b","title":"Beta"},{"const":"c","title":"Gamma"}]}}
},"required":["name","age","color"]}`

// cliTestURL serves cliTestServer over Streamable HTTP in-process.
func cliTestURL(t *testing.T) string {
	t.Helper()
	h := streamable.NewHandler(cliTestServer(t))
	hs := httptest.NewServer(h)
	t.Cleanup(func() { hs.Close(); h.Close() })
	return hs.URL + "/mcp"
}

// runCLIWith runs the binary in dir with stdin.
func runCLIWith(t *testing.T, dir string, stdin io.Reader, args ...string) cliResult {
	t.Helper()
	return runCLIIn(t, dir, nil, stdin, args...)
}

// ttyInput is scripted input that says it is a terminal.
type ttyInput struct{ io.Reader }

func (ttyInput) IsTerminal() bool { return true }

// runInProcess runs the command in this process with stdin; only for runs
// that succeed or fail with a usage error (a client error ends the
// process).
func runInProcess(t *testing.T, stdin io.Reader, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	root := newRootCmd()
	var out, errb bytes.Buffer
	root.SetArgs(args)
	root.SetIn(stdin)
	root.SetOut(&out)
	root.SetErr(&errb)
	err = root.ExecuteContext(t.Context())
	return out.String(), errb.String(), err
}

func TestResourcesTable(t *testing.T) {
	url := cliTestURL(t)
	r := runCLI(t, "resources", url)
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	lines := strings.Split(strings.TrimRight(r.stdout, "\n"), "\n")
	want := [][]string{
		{"URI", "NAME", "MIME", "DESCRIPTION"},
		{"file:///docs/readme.md", "readme", "(Read", "me)", "text/markdown", "The"},
		{"file:///img/logo.png", "logo", "image/png", "-"},
		{},
		{"TEMPLATE", "NAME", "MIME", "DESCRIPTION"},
		{"file:///logs/{day}.log", "daily-log", "text/plain", "One", "day's", "log"},
	}
	if len(lines) != len(want) {
		t.Fatalf("got %d lines, want %d:\n%s", len(lines), len(want), r.stdout)
	}
	for i, w := range want {
		got := strings.Fields(lines[i])
		if len(got) < len(w) || strings.Join(got[:len(w)], " ") != strings.Join(w, " ") {
			t.Errorf("line %d = %q, want it to start with %q", i, lines[i], w)
		}
	}
	if !strings.Contains(lines[1], "…") || strings.Contains(lines[1], "cut it short somewhere") {
		t.Errorf("long description not truncated: %q", lines[1])
	}

	r = runCLI(t, "resources", "--json", url)
	var got resourceLists
	if err := json.Unmarshal([]byte(r.stdout), &got); err != nil {
		t.Fatalf("--json: %v\n%s", err, r.stdout)
	}
	if len(got.Resources) != 2 || got.Resources[0].URI != "file:///docs/readme.md" || got.Resources[0].Title != "Read me" ||
		len(got.ResourceTemplates) != 1 || got.ResourceTemplates[0].URITemplate != "file:///logs/{day}.log" {
		t.Errorf("--json = %s", r.stdout)
	}
}

func TestReadText(t *testing.T) {
	url := cliTestURL(t)
	r := runCLI(t, "read", url, "file:///docs/readme.md")
	if r.code != 0 || r.stdout != "# Hello\nworld\n" {
		t.Fatalf("exit %d, stdout %q, stderr %s", r.code, r.stdout, r.stderr)
	}
	r = runCLI(t, "read", url, "file:///logs/2026-01-02.log") // a template's resource; no trailing newline in the text
	if r.code != 0 || r.stdout != "log of 2026-01-02\n" {
		t.Fatalf("template read: exit %d, stdout %q, stderr %s", r.code, r.stdout, r.stderr)
	}
}

func TestReadBlobToFile(t *testing.T) {
	url := cliTestURL(t)
	dir := t.TempDir()
	r := runCLIWith(t, dir, nil, "read", url, "file:///img/logo.png")
	if r.code != 0 || r.stdout != "" {
		t.Fatalf("exit %d, stdout %q, stderr %s", r.code, r.stdout, r.stderr)
	}
	got, err := os.ReadFile(filepath.Join(dir, "logo.png"))
	if err != nil || !bytes.Equal(got, logoBytes) {
		t.Fatalf("logo.png = %v, %v; want %v", got, err, logoBytes)
	}
	if want := fmt.Sprintf("%d bytes, to logo.png", len(logoBytes)); !strings.Contains(r.stderr, want) {
		t.Errorf("stderr %q does not say %q", r.stderr, want)
	}

	// Never overwritten without --force.
	if err := os.WriteFile(filepath.Join(dir, "logo.png"), []byte("mine"), 0o644); err != nil {
		t.Fatal(err)
	}
	r = runCLIWith(t, dir, nil, "read", url, "file:///img/logo.png")
	if r.code != 1 || !strings.Contains(r.stderr, "logo.png already exists") {
		t.Fatalf("existing file: exit %d, stderr %q", r.code, r.stderr)
	}
	if got, _ := os.ReadFile(filepath.Join(dir, "logo.png")); string(got) != "mine" {
		t.Fatalf("the existing file was overwritten: %q", got)
	}
	r = runCLIWith(t, dir, nil, "read", "--force", url, "file:///img/logo.png")
	if got, _ := os.ReadFile(filepath.Join(dir, "logo.png")); r.code != 0 || !bytes.Equal(got, logoBytes) {
		t.Fatalf("--force: exit %d, file %v, stderr %q", r.code, got, r.stderr)
	}

	out := filepath.Join(dir, "sub-logo.bin")
	r = runCLIWith(t, dir, nil, "read", "--output", out, url, "file:///img/logo.png")
	if got, _ := os.ReadFile(out); r.code != 0 || !bytes.Equal(got, logoBytes) || !strings.Contains(r.stderr, out) {
		t.Fatalf("-o: exit %d, file %v, stderr %q", r.code, got, r.stderr)
	}
}

func TestReadNotFound(t *testing.T) {
	url := cliTestURL(t)
	for _, era := range []string{"auto", "legacy"} {
		r := runCLI(t, "read", "--era", era, url, "file:///nope.txt")
		if r.code != 5 || !strings.Contains(r.stderr, `resource "file:///nope.txt" not found`) || r.stdout != "" {
			t.Errorf("--era %s: exit %d, stdout %q, stderr %q", era, r.code, r.stdout, r.stderr)
		}
	}
}

func TestPromptsTable(t *testing.T) {
	r := runCLI(t, "prompts", cliTestURL(t))
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	lines := strings.Split(strings.TrimRight(r.stdout, "\n"), "\n")
	if len(lines) != 2 || strings.Join(strings.Fields(lines[0]), " ") != "NAME TITLE ARGUMENTS DESCRIPTION" ||
		strings.Join(strings.Fields(lines[1]), " ") != "greet Greeting name*, style Greets someone" {
		t.Fatalf("stdout:\n%s", r.stdout)
	}
}

func TestPromptGet(t *testing.T) {
	url := cliTestURL(t)
	r := runCLI(t, "prompt", url, "greet", "name=Ada", "style=formal")
	want := "# A greeting\n\n[user]\nGreet Ada in a formal way.\n\n[assistant]\n[resource file:///docs/readme.md text/markdown]\n# Hello\n\n" +
		fmt.Sprintf("[user]\n[image image/png, %d bytes]\n", len(logoBytes))
	if r.code != 0 || r.stdout != want {
		t.Fatalf("exit %d, stderr %q, stdout:\n%s\nwant:\n%s", r.code, r.stderr, r.stdout, want)
	}

	r = runCLI(t, "prompt", "--json", url, "greet", "name=Ada")
	var res struct {
		Messages []struct {
			Role string `json:"role"`
		} `json:"messages"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &res); err != nil || len(res.Messages) != 3 || res.Messages[1].Role != "assistant" {
		t.Fatalf("--json: %v: %s", err, r.stdout)
	}

	r = runCLI(t, "prompt", url, "greet", "style=formal")
	if r.code != 5 || !strings.Contains(r.stderr, `missing required argument "name"`) || !strings.Contains(r.stderr, "-32602") {
		t.Fatalf("missing argument: exit %d, stderr %q", r.code, r.stderr)
	}
	r = runCLI(t, "prompt", url, "greet", "oops")
	if r.code != 2 || !strings.Contains(r.stderr, `invalid argument "oops": want key=value`) {
		t.Fatalf("bad argument: exit %d, stderr %q", r.code, r.stderr)
	}
}

// TestElicitationInteractive fills a form from scripted terminal input:
// a bad number is asked again, a choice is taken by number, Enter takes the
// defaults, and a multi-select takes comma-separated numbers.
func TestElicitationInteractive(t *testing.T) {
	url := cliTestURL(t)
	for _, era := range []string{"auto", "legacy"} {
		t.Run(era, func(t *testing.T) {
			in := ttyInput{strings.NewReader("A\nAda\n200\nlots\n42\n2\n\n\n1,3\n")}
			stdout, stderr, err := runInProcess(t, in, "call", "--era", era, url, "signup")
			if err != nil {
				t.Fatalf("%v\nstderr: %s", err, stderr)
			}
			want := `accepted: {"age":42,"color":"green","name":"Ada","newsletter":true,"plan":"basic","tags":["a","c"]}` + "\n"
			if stdout != want {
				t.Errorf("stdout %q, want %q\nstderr:\n%s", stdout, want, stderr)
			}
			for _, s := range []string{"Sign up for the service", ":decline", ":cancel", "Your name (name) *", "too short: at least 2 characters",
				"must be at most 150", `"lots" is not a whole number`, "1) Red", "2) Green", "[Basic plan]", "[y]", "3) Gamma"} {
				if !strings.Contains(stderr, s) {
					t.Errorf("stderr lacks %q:\n%s", s, stderr)
				}
			}
		})
	}
}

func TestElicitationDeclineAndCancel(t *testing.T) {
	url := cliTestURL(t)
	for input, want := range map[string]string{
		"Ada\n:decline\n": "action: decline\n",
		":cancel\n":       "action: cancel\n",
		"Ada\n":           "action: cancel\n", // input ends mid-form
	} {
		stdout, stderr, err := runInProcess(t, ttyInput{strings.NewReader(input)}, "call", url, "signup")
		if err != nil || stdout != want {
			t.Errorf("input %q: %v, stdout %q, want %q\nstderr:\n%s", input, err, stdout, want, stderr)
		}
	}
}

// TestElicitationNotTerminal: with stdin not a terminal the client does
// not declare elicitation, so the server does not ask.
func TestElicitationNotTerminal(t *testing.T) {
	url := cliTestURL(t)
	for _, era := range []string{"auto", "legacy"} {
		r := runCLIWith(t, "", strings.NewReader("Ada\n"), "call", "--era", era, url, "caps")
		if r.code != 0 || r.stdout != "elicitation declared: false\n" {
			t.Errorf("--era %s, piped stdin: exit %d, stdout %q, stderr %q", era, r.code, r.stdout, r.stderr)
		}
		r = runCLIWith(t, "", nil, "call", "--era", era, url, "caps") // /dev/null is a character device, not a terminal
		if r.code != 0 || r.stdout != "elicitation declared: false\n" {
			t.Errorf("--era %s, /dev/null stdin: exit %d, stdout %q, stderr %q", era, r.code, r.stdout, r.stderr)
		}
		stdout, stderr, err := runInProcess(t, ttyInput{strings.NewReader("")}, "call", "--era", era, url, "caps")
		if err != nil || stdout != "elicitation declared: true\n" {
			t.Errorf("--era %s, terminal: %v, stdout %q, stderr %q", era, err, stdout, stderr)
		}
	}
}

func TestLogLevel(t *testing.T) {
	url := cliTestURL(t)
	for _, era := range []string{"auto", "legacy"} {
		r := runCLI(t, "call", "--era", era, "--log-level", "warning", url, "chatty")
		if r.code != 0 || r.stdout != "done\n" {
			t.Fatalf("--era %s: exit %d, stdout %q, stderr %q", era, r.code, r.stdout, r.stderr)
		}
		for _, s := range []string{"[warning] chatty: careful now\n", `[error] chatty: {"code":7,"what":"broken"}` + "\n"} {
			if !strings.Contains(r.stderr, s) {
				t.Errorf("--era %s: stderr lacks %q:\n%s", era, s, r.stderr)
			}
		}
		for _, s := range []string{"[debug]", "[info]", "informational"} {
			if strings.Contains(r.stderr, s) {
				t.Errorf("--era %s: stderr has %q below the level:\n%s", era, s, r.stderr)
			}
		}

		r = runCLI(t, "call", "--era", era, "--log-level", "debug", url, "chatty")
		if !strings.Contains(r.stderr, "[debug] chatty: debug detail\n") || !strings.Contains(r.stderr, "[info] chatty: informational\n") {
			t.Errorf("--era %s --log-level debug: stderr:\n%s", era, r.stderr)
		}

		r = runCLI(t, "call", "--era", era, url, "chatty")
		if r.code != 0 || strings.Contains(r.stderr, "chatty") {
			t.Errorf("--era %s, no --log-level: exit %d, stderr %q", era, r.code, r.stderr)
		}
	}
	r := runCLI(t, "call", "--log-level", "loud", url, "chatty")
	if r.code != 2 || !strings.Contains(r.stderr, `invalid --log-level "loud"`) {
		t.Errorf("bad level: exit %d, stderr %q", r.code, r.stderr)
	}
}
