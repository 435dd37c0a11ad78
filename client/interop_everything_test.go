package client_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/toolwire/toolwire/client"
	"github.com/toolwire/toolwire/internal/testenv"
	"github.com/toolwire/toolwire/internal/testwait"
	"github.com/toolwire/toolwire/mcp"
)

// everythingTargets are the transports server-everything is driven over:
// stdio (a child process) and streamable HTTP (its streamableHttp mode,
// bound to loopback by testenv.EverythingHTTP).
func everythingTargets(t *testing.T) map[string]func(t *testing.T) client.Transport {
	node, entry := testenv.Everything(t)
	return map[string]func(t *testing.T) client.Transport{
		"stdio": func(t *testing.T) client.Transport {
			return &client.Command{Path: node, Args: []string{entry, "stdio"}}
		},
		"streamableHttp": func(t *testing.T) client.Transport { return &client.HTTP{URL: everythingHTTP(t)} },
	}
}

// everythingDocs returns the documents server-everything serves as static
// resources (every file of its dist/docs, demo://resource/static/document/<name>).
func everythingDocs(t *testing.T) map[string]string {
	t.Helper()
	_, entry := testenv.Everything(t)
	dir := filepath.Join(filepath.Dir(entry), "docs")
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	docs := map[string]string{}
	for _, e := range ents {
		if e.Type().IsRegular() {
			b, err := os.ReadFile(filepath.Join(dir, e.Name()))
			if err != nil {
				t.Fatal(err)
			}
			docs[e.Name()] = string(b)
		}
	}
	if len(docs) == 0 {
		t.Fatalf("no documents in %s", dir)
	}
	return docs
}

// TestInteropEverythingResources lists server-everything's resources and
// templates and reads a static text document, a template-made text and blob
// resource, and an unknown URI.
func TestInteropEverythingResources(t *testing.T) {
	docs := everythingDocs(t)
	for name, target := range everythingTargets(t) {
		t.Run(name, func(t *testing.T) {
			c := connect(t, target(t))
			ctx := context.Background()
			if caps := c.ServerCapabilities(); caps.Resources == nil {
				t.Fatalf("no resources capability: %+v", caps)
			}

			// Every page; the static documents are the listed resources
			// (its templates declare no list callback).
			pages := 0
			var listed []*mcp.Resource
			for page, err := range c.ResourcePages(ctx) {
				if err != nil {
					t.Fatal(err)
				}
				pages++
				listed = append(listed, page.Resources...)
			}
			all, err := c.ListResources(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if pages < 1 || len(all) != len(listed) {
				t.Errorf("%d pages with %d resources; ListResources gave %d", pages, len(listed), len(all))
			}
			want := map[string]string{} // uri -> mime
			for doc := range docs {
				mime := "text/plain"
				if strings.HasSuffix(doc, ".md") {
					mime = "text/markdown"
				}
				want["demo://resource/static/document/"+doc] = mime
			}
			got := map[string]string{}
			for _, r := range listed {
				got[r.URI] = r.MIMEType
				doc := strings.TrimPrefix(r.URI, "demo://resource/static/document/")
				if r.Name != doc || r.Description != "Static document file exposed from /docs: "+doc {
					t.Errorf("resource %s: name %q, description %q", r.URI, r.Name, r.Description)
				}
			}
			if len(got) != len(want) || len(listed) != len(want) {
				t.Errorf("listed %v, want %v", got, want)
			}
			for uri, mime := range want {
				if got[uri] != mime {
					t.Errorf("resource %s: mime %q, want %q (listed: %v)", uri, got[uri], mime, got)
				}
			}

			tmpls, err := c.ListResourceTemplates(ctx)
			if err != nil {
				t.Fatal(err)
			}
			wantT := map[string][2]string{
				"demo://resource/dynamic/text/{resourceId}": {"Dynamic Text Resource", "text/plain"},
				"demo://resource/dynamic/blob/{resourceId}": {"Dynamic Blob Resource", "application/octet-stream"},
			}
			if len(tmpls) != len(wantT) {
				t.Errorf("%d templates, want %d: %+v", len(tmpls), len(wantT), tmpls)
			}
			for _, tm := range tmpls {
				if w, ok := wantT[tm.URITemplate]; !ok || tm.Name != w[0] || tm.MIMEType != w[1] {
					t.Errorf("template %+v, want %v", tm, w)
				}
			}

			// A static text document: exactly the file, as text/markdown.
			const doc = "features.md"
			uri := "demo://resource/static/document/" + doc
			res, err := c.ReadResource(ctx, uri)
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Contents) != 1 {
				t.Fatalf("%s: %d contents", uri, len(res.Contents))
			}
			tc, ok := res.Contents[0].(*mcp.TextResourceContents)
			if !ok || tc.URI != uri || tc.MIMEType != "text/markdown" || tc.Text != docs[doc] {
				t.Errorf("%s: %T %+v; want the text of docs/%s as text/markdown", uri, res.Contents[0], res.Contents[0], doc)
			}

			// Template-made resources: text, and a blob that decodes to the
			// sentence the package documents.
			res, err = c.ReadResource(ctx, "demo://resource/dynamic/text/7")
			if err != nil {
				t.Fatal(err)
			}
			if tc, ok := res.Contents[0].(*mcp.TextResourceContents); !ok || len(res.Contents) != 1 ||
				tc.URI != "demo://resource/dynamic/text/7" || tc.MIMEType != "text/plain" ||
				!strings.HasPrefix(tc.Text, "Resource 7: This is a plaintext resource created at ") {
				t.Errorf("dynamic text: %+v", res.Contents)
			}
			res, err = c.ReadResource(ctx, "demo://resource/dynamic/blob/42")
			if err != nil {
				t.Fatal(err)
			}
			bc, ok := res.Contents[0].(*mcp.BlobResourceContents)
			if !ok || len(res.Contents) != 1 || bc.URI != "demo://resource/dynamic/blob/42" || bc.MIMEType != "text/plain" ||
				!strings.HasPrefix(string(bc.Blob), "Resource 42: This is a base64 blob created at ") {
				t.Errorf("dynamic blob: %T %+v", res.Contents[0], res.Contents[0])
			}

			// An unknown URI. The pinned server (TS SDK McpServer) answers
			// -32602 "Resource <uri> not found" without data.uri.
			missing := "demo://resource/static/document/no-such-file.md"
			_, err = c.ReadResource(ctx, missing)
			var je *client.JSONRPCError
			if !errors.As(err, &je) || je.Code != -32602 || !strings.Contains(je.Message, missing) || !strings.Contains(je.Message, "not found") {
				t.Fatalf("unknown resource: %T %v", err, err)
			}
			// Its SDK answers -32602 naming the URI, without data.uri: the
			// client still recognises a missing resource.
			if !client.IsResourceNotFound(err) {
				t.Errorf("IsResourceNotFound(%v) = false (code %d)", err, je.Code)
			}
		})
	}
}

// TestInteropEverythingPrompts lists server-everything's prompts, gets one
// with arguments and one embedding a resource, and completes prompt
// arguments and a template variable.
func TestInteropEverythingPrompts(t *testing.T) {
	for name, target := range everythingTargets(t) {
		t.Run(name, func(t *testing.T) {
			c := connect(t, target(t))
			ctx := context.Background()

			prompts, err := c.ListPrompts(ctx)
			if err != nil {
				t.Fatal(err)
			}
			byName := map[string]*mcp.Prompt{}
			var names []string
			for _, p := range prompts {
				byName[p.Name] = p
				names = append(names, p.Name)
			}
			slices.Sort(names)
			if strings.Join(names, ",") != "args-prompt,completable-prompt,resource-prompt,simple-prompt" {
				t.Errorf("prompts %v", names)
			}
			args := func(p *mcp.Prompt) string {
				var s []string
				for _, a := range p.Arguments {
					s = append(s, a.Name+map[bool]string{true: "!", false: "?"}[a.Required])
				}
				return strings.Join(s, ",")
			}
			for n, want := range map[string]string{
				"simple-prompt": "", "args-prompt": "city!,state?", "completable-prompt": "department!,name!", "resource-prompt": "resourceType!,resourceId!",
			} {
				if p := byName[n]; p == nil || args(p) != want {
					t.Errorf("%s: arguments %q, want %q (%+v)", n, func() string {
						if p == nil {
							return "<missing>"
						}
						return args(p)
					}(), want, p)
				}
			}
			if p := byName["args-prompt"]; p != nil && (p.Title != "Arguments Prompt" || p.Description != "A prompt with two arguments, one required and one optional") {
				t.Errorf("args-prompt: %+v", p)
			}

			text := func(m mcp.PromptMessage) string {
				t.Helper()
				tc, ok := m.Content.(*mcp.TextContent)
				if !ok {
					t.Fatalf("message content is %T", m.Content)
				}
				return tc.Text
			}
			gp, err := c.GetPrompt(ctx, "simple-prompt", nil)
			if err != nil || len(gp.Messages) != 1 || gp.Messages[0].Role != mcp.RoleUser || text(gp.Messages[0]) != "This is a simple prompt without arguments." {
				t.Fatalf("simple-prompt: %v %+v", err, gp)
			}
			gp, err = c.GetPrompt(ctx, "args-prompt", map[string]string{"city": "Chicago", "state": "IL"})
			if err != nil || len(gp.Messages) != 1 || gp.Messages[0].Role != mcp.RoleUser || text(gp.Messages[0]) != "What's weather in Chicago, IL?" {
				t.Fatalf("args-prompt: %v %+v", err, gp)
			}
			gp, err = c.GetPrompt(ctx, "args-prompt", map[string]string{"city": "Lyon"})
			if err != nil || len(gp.Messages) != 1 || text(gp.Messages[0]) != "What's weather in Lyon?" {
				t.Fatalf("args-prompt without state: %v %+v", err, gp)
			}

			// A prompt embedding a resource, text and blob.
			gp, err = c.GetPrompt(ctx, "resource-prompt", map[string]string{"resourceType": "Text", "resourceId": "3"})
			if err != nil || len(gp.Messages) != 2 {
				t.Fatalf("resource-prompt Text: %v %+v", err, gp)
			}
			if got := text(gp.Messages[0]); got != "This prompt includes the Text resource with id: 3. Please analyze the following resource:" {
				t.Errorf("resource-prompt message 0: %q", got)
			}
			er, ok := gp.Messages[1].Content.(*mcp.EmbeddedResource)
			if !ok || gp.Messages[1].Role != mcp.RoleUser {
				t.Fatalf("resource-prompt message 1: %+v", gp.Messages[1])
			}
			if tr, ok := er.Resource.(*mcp.TextResourceContents); !ok || tr.URI != "demo://resource/dynamic/text/3" || tr.MIMEType != "text/plain" ||
				!strings.HasPrefix(tr.Text, "Resource 3: This is a plaintext resource created at ") {
				t.Errorf("resource-prompt embedded: %T %+v", er.Resource, er.Resource)
			}
			gp, err = c.GetPrompt(ctx, "resource-prompt", map[string]string{"resourceType": "Blob", "resourceId": "5"})
			if err != nil || len(gp.Messages) != 2 {
				t.Fatalf("resource-prompt Blob: %v %+v", err, gp)
			}
			if er, ok := gp.Messages[1].Content.(*mcp.EmbeddedResource); !ok {
				t.Errorf("resource-prompt Blob message 1: %+v", gp.Messages[1])
			} else if br, ok := er.Resource.(*mcp.BlobResourceContents); !ok || br.URI != "demo://resource/dynamic/blob/5" ||
				!strings.HasPrefix(string(br.Blob), "Resource 5: This is a base64 blob created at ") {
				t.Errorf("resource-prompt embedded blob: %T %+v", er.Resource, er.Resource)
			}
			// An invalid argument is the server's error.
			if _, err := c.GetPrompt(ctx, "resource-prompt", map[string]string{"resourceType": "Video", "resourceId": "1"}); err == nil {
				t.Error("resource-prompt with resourceType Video succeeded")
			}
			var je *client.JSONRPCError
			if _, err := c.GetPrompt(ctx, "no-such-prompt", nil); !errors.As(err, &je) || je.Code != -32602 {
				t.Errorf("unknown prompt: %T %v", err, err)
			}

			// Completion.
			complete := func(ref mcp.CompletionReference, arg, value string, resolved map[string]string) []string {
				t.Helper()
				comp, err := c.Complete(ctx, ref, mcp.CompletionArgument{Name: arg, Value: value}, resolved)
				if err != nil {
					t.Fatalf("complete %+v %s=%q: %v", ref, arg, value, err)
				}
				return comp.Values
			}
			prompt := func(n string) mcp.CompletionReference { return mcp.CompletionReference{Type: mcp.RefPrompt, Name: n} }
			for _, tc := range []struct {
				ref      mcp.CompletionReference
				arg, val string
				resolved map[string]string
				want     []string
			}{
				{prompt("completable-prompt"), "department", "", nil, []string{"Engineering", "Sales", "Marketing", "Support"}},
				{prompt("completable-prompt"), "department", "S", nil, []string{"Sales", "Support"}},
				{prompt("completable-prompt"), "name", "", map[string]string{"department": "Sales"}, []string{"David", "Eve", "Frank"}},
				{prompt("completable-prompt"), "name", "A", map[string]string{"department": "Engineering"}, []string{"Alice"}},
				{prompt("completable-prompt"), "name", "", nil, []string{}},
				{prompt("resource-prompt"), "resourceType", "B", nil, []string{"Blob"}},
				{prompt("resource-prompt"), "resourceId", "12", nil, []string{"12"}},
				{prompt("resource-prompt"), "resourceId", "x", nil, []string{}},
				{mcp.CompletionReference{Type: mcp.RefResource, URI: "demo://resource/dynamic/text/{resourceId}"}, "resourceId", "9", nil, []string{"9"}},
			} {
				if got := complete(tc.ref, tc.arg, tc.val, tc.resolved); !slices.Equal(got, tc.want) && !(len(got) == 0 && len(tc.want) == 0) {
					t.Errorf("complete %s %s=%q %v: %q, want %q", tc.ref.Name+tc.ref.URI, tc.arg, tc.val, tc.resolved, got, tc.want)
				}
			}
		})
	}
}

// logTextRE matches server-everything's simulated log texts to their level.
var logTextRE = regexp.MustCompile(`^(Debug|Info|Notice|Warning|Error|Critical|Emergency)-level message|^(Alert) level-message`)

// TestInteropEverythingLogging sets the log level and has
// toggle-simulated-logging send messages (each start sends one message of a
// random level at once): at "warning" only messages at or above it arrive;
// after lowering the level to "debug", lower ones arrive as well.
func TestInteropEverythingLogging(t *testing.T) {
	for name, target := range everythingTargets(t) {
		t.Run(name, func(t *testing.T) {
			var mu sync.Mutex
			var msgs []client.LogMessage
			c := connect(t, target(t), client.WithLogHandler(func(m client.LogMessage) {
				mu.Lock()
				msgs = append(msgs, m)
				mu.Unlock()
			}))
			ctx := context.Background()
			if c.ServerCapabilities().Logging == nil {
				t.Fatalf("no logging capability: %+v", c.ServerCapabilities())
			}
			snapshot := func() []client.LogMessage {
				mu.Lock()
				defer mu.Unlock()
				return slices.Clone(msgs)
			}
			toggle := func(want string) {
				t.Helper()
				res, err := c.CallTool(ctx, "toggle-simulated-logging", nil)
				if err != nil {
					t.Fatal(err)
				}
				if tc, ok := res.Content[0].(*mcp.TextContent); !ok || !strings.HasPrefix(tc.Text, want) {
					t.Fatalf("toggle-simulated-logging: %+v, want %q...", res.Content, want)
				}
			}
			// drive toggles the simulated logging on and off until done holds
			// of the messages received (each start sends one, of a random
			// level, at once), at most 40 times, then waits for the messages
			// of those starts still on their way. The pause between starts
			// only paces them; a level filter lets some messages never come.
			drive := func(done func([]client.LogMessage) bool) []client.LogMessage {
				t.Helper()
				for i := 0; i < 40 && !done(snapshot()); i++ {
					toggle("Started simulated")
					toggle("Stopped simulated")
					time.Sleep(20 * time.Millisecond)
				}
				testwait.WaitFor(t, "the messages that 40 starts send", func() bool { return done(snapshot()) })
				return snapshot()
			}
			check := func(m client.LogMessage) {
				t.Helper()
				var s string
				if err := json.Unmarshal(m.Data, &s); err != nil {
					t.Errorf("log data %s: %v", m.Data, err)
					return
				}
				sm := logTextRE.FindStringSubmatch(s)
				if sm == nil || mcp.LoggingLevel(strings.ToLower(sm[1]+sm[2])) != m.Level {
					t.Errorf("log message at %s says %q", m.Level, s)
				}
			}

			if err := c.SetLogLevel(ctx, mcp.LevelWarning); err != nil {
				t.Fatal(err)
			}
			got := drive(func(ms []client.LogMessage) bool { return len(ms) >= 3 })
			for _, m := range got {
				check(m)
				if !m.Level.AtLeast(mcp.LevelWarning) {
					t.Errorf("message below warning arrived: %+v", m)
				}
			}
			n := len(got)

			if err := c.SetLogLevel(ctx, mcp.LevelDebug); err != nil {
				t.Fatal(err)
			}
			got = drive(func(ms []client.LogMessage) bool {
				return slices.ContainsFunc(ms[n:], func(m client.LogMessage) bool { return !m.Level.AtLeast(mcp.LevelWarning) })
			})
			for _, m := range got[n:] {
				check(m)
			}
			t.Logf("%d messages at warning, then %d at debug", n, len(got)-n)
		})
	}
}

// TestInteropEverythingElicitation calls trigger-elicitation-request (which
// server-everything registers only for a client declaring elicitation) and
// answers its elicitation/create: accepting with values, which the tool
// reports back, and declining.
func TestInteropEverythingElicitation(t *testing.T) {
	for name, target := range everythingTargets(t) {
		t.Run(name, func(t *testing.T) {
			var mu sync.Mutex
			action := "accept"
			var asked []*mcp.ElicitParams
			values := map[string]any{
				"name": "Ada Lovelace", "check": true, "email": "ada@example.com", "homepage": "https://example.com/ada",
				"birthdate": "1815-12-10", "integer": 7, "number": 2.5, "untitledMultipleSelectEnum": []string{"Piano", "Violin"},
			}
			c := connect(t, target(t), client.WithElicitationHandler(func(ctx context.Context, p *mcp.ElicitParams) (*mcp.ElicitResult, error) {
				mu.Lock()
				defer mu.Unlock()
				asked = append(asked, p)
				if action == "accept" {
					return &mcp.ElicitResult{Action: "accept", Content: values}, nil
				}
				return &mcp.ElicitResult{Action: action}, nil
			}))
			ctx := context.Background()
			texts := func(res *mcp.CallToolResult) []string {
				var s []string
				for _, b := range res.Content {
					if tc, ok := b.(*mcp.TextContent); ok {
						s = append(s, tc.Text)
					}
				}
				return s
			}
			// The tool is registered once the session is initialized.
			var res *mcp.CallToolResult
			var err error
			testwait.WaitForNil(t, "trigger-elicitation-request to be registered", func() error {
				res, err = c.CallTool(ctx, "trigger-elicitation-request", nil)
				return err
			})
			got := texts(res)
			wantLines := "User inputs:\n- Name: Ada Lovelace\n- Agreed to terms: true\n- Email: ada@example.com\n" +
				"- Homepage: https://example.com/ada\n- Birthdate: 1815-12-10\n- Favorite Integer: 7\n- Favorite Number: 2.5"
			if len(got) != 3 || got[0] != "✅ User provided the requested information!" || got[1] != wantLines {
				t.Fatalf("accepted: %q", got)
			}
			raw, ok := strings.CutPrefix(got[2], "\nRaw result: ")
			var echoed struct {
				Action  string         `json:"action"`
				Content map[string]any `json:"content"`
			}
			if !ok || json.Unmarshal([]byte(raw), &echoed) != nil || echoed.Action != "accept" {
				t.Fatalf("raw result %q", got[2])
			}
			wantJSON, _ := json.Marshal(values)
			gotJSON, _ := json.Marshal(echoed.Content)
			if string(wantJSON) != string(gotJSON) {
				t.Errorf("server saw content %s, want %s", gotJSON, wantJSON)
			}
			mu.Lock()
			if len(asked) != 1 || asked[0].Message != "Please provide inputs for the following fields:" || (asked[0].Mode != "" && asked[0].Mode != "form") {
				t.Errorf("elicitation requests %+v", asked)
			} else {
				var schema struct {
					Type       string                     `json:"type"`
					Properties map[string]json.RawMessage `json:"properties"`
					Required   []string                   `json:"required"`
				}
				if err := json.Unmarshal(asked[0].RequestedSchema, &schema); err != nil || schema.Type != "object" ||
					len(schema.Properties) != 13 || !slices.Equal(schema.Required, []string{"name"}) {
					t.Errorf("requested schema %s (%v)", asked[0].RequestedSchema, err)
				}
			}
			action = "decline"
			mu.Unlock()

			res, err = c.CallTool(ctx, "trigger-elicitation-request", nil)
			if err != nil {
				t.Fatal(err)
			}
			got = texts(res)
			if len(got) != 2 || got[0] != "❌ User declined to provide the requested information." || !strings.Contains(got[1], `"action": "decline"`) {
				t.Errorf("declined: %q", got)
			}
			mu.Lock()
			action = "cancel"
			mu.Unlock()
			res, err = c.CallTool(ctx, "trigger-elicitation-request", nil)
			if err != nil {
				t.Fatal(err)
			}
			if got = texts(res); len(got) != 2 || got[0] != "⚠️ User cancelled the elicitation dialog." {
				t.Errorf("cancelled: %q", got)
			}
			mu.Lock()
			if len(asked) != 3 {
				t.Errorf("%d elicitation requests, want 3", len(asked))
			}
			mu.Unlock()
		})
	}
}
