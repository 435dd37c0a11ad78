package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/toolwire/toolwire/client"
	"github.com/toolwire/toolwire/internal/testenv"
	"github.com/toolwire/toolwire/internal/testmcp"
	"github.com/toolwire/toolwire/internal/testwait"
	"github.com/toolwire/toolwire/mcp"
)

// The gateway against software nobody here wrote: server-everything (the
// official TypeScript SDK's demo server, from conformance/npm) as a stdio
// upstream next to `toolwire serve` over HTTP, driven through the gateway by
// toolwire's client in both eras and by the official TypeScript SDK client.

// gatewayInterop is a running gateway with two upstreams, `everything`
// (server-everything over stdio) and `ref` (`toolwire serve` over HTTP), and
// what is needed to reach each upstream directly.
type gatewayInterop struct {
	g           *gatewayProc
	ref         *servedProc
	refWire     *cancelWatch // between the gateway and ref
	node, entry string       // server-everything: the node binary and its entry point
}

// cancelWatch is a reverse proxy between the gateway and ref that counts
// the cancellations ref is sent for trigger-long-running-operation calls:
// a notifications/cancelled POST (a 2025-era session), or the gateway
// dropping the call's HTTP request before its answer (which the proxy
// passes on by dropping its own request to ref).
type cancelWatch struct {
	mu        sync.Mutex
	notified  int // notifications/cancelled POSTs
	abandoned int // long-running calls whose request the gateway dropped
}

func (w *cancelWatch) counts() (notified, abandoned int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.notified, w.abandoned
}

func newCancelWatch(t *testing.T, target string) (*cancelWatch, string) {
	t.Helper()
	w := &cancelWatch{}
	return w, inspectingProxy(t, target, func(rw http.ResponseWriter, r *http.Request, body []byte, proxy http.Handler) {
		if bytes.Contains(body, []byte(`"notifications/cancelled"`)) {
			w.mu.Lock()
			w.notified++
			w.mu.Unlock()
		}
		if !bytes.Contains(body, []byte(`"trigger-long-running-operation"`)) {
			proxy.ServeHTTP(rw, r)
			return
		}
		// Counted as soon as the gateway goes away mid-call.
		stop := context.AfterFunc(r.Context(), func() {
			w.mu.Lock()
			w.abandoned++
			w.mu.Unlock()
		})
		proxy.ServeHTTP(rw, r)
		stop()
	})
}

// gatewayInteropTools are tools the gateway must serve once both upstreams
// are up (server-everything registers trigger-elicitation-request only after
// initialization, for a client declaring elicitation, as the gateway does).
var gatewayInteropTools = []string{
	"everything__echo", "everything__get-tiny-image", "everything__get-resource-links", "everything__get-resource-reference",
	"everything__get-structured-content", "everything__trigger-long-running-operation", "everything__trigger-elicitation-request",
	"ref__echo", "ref__gallery", "ref__get-structured-content", "ref__trigger-long-running-operation",
}

func startGatewayInterop(t *testing.T) *gatewayInterop {
	t.Helper()
	node, entry := testenv.Everything(t)
	ref := startServe(t, nil, "--data-dir", t.TempDir())
	watch, refVia := newCancelWatch(t, ref.url)
	q := func(s string) string { b, _ := json.Marshal(s); return string(b) }
	cfg := writeConfig(t, t.TempDir(), fmt.Sprintf(`
upstreams:
  everything:
    command: [%s, %s, stdio]
  ref:
    url: %s
`, q(node), q(entry), refVia))
	g := startGateway(t, "--config", cfg)
	gi := &gatewayInterop{g: g, ref: ref, refWire: watch, node: node, entry: entry}
	var last []string
	deadline := time.Now().Add(durableDeadline)
	for {
		last = toolNames(t, g.url, mcp.EraLegacy)
		missing := slices.DeleteFunc(slices.Clone(gatewayInteropTools), func(n string) bool { return slices.Contains(last, n) })
		if len(missing) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("gateway never served %v; it serves %v\ngateway log:\n%s", missing, last, g.log.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
	return gi
}

// directEverything connects toolwire's client to server-everything itself (a stdio
// child of this test).
func (gi *gatewayInterop) directEverything(t *testing.T) *client.Client {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), durableDeadline)
	defer cancel()
	c, err := client.Connect(ctx, &client.Command{Path: gi.node, Args: []string{gi.entry, "stdio"}})
	if err != nil {
		t.Fatalf("connecting to server-everything directly: %v", err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// structuredOf returns the structuredContent member of a raw tools/call
// result, byte for byte.
func structuredOf(t *testing.T, what string, raw json.RawMessage) json.RawMessage {
	t.Helper()
	var r struct {
		StructuredContent json.RawMessage `json:"structuredContent"`
	}
	if err := json.Unmarshal(raw, &r); err != nil {
		t.Fatalf("%s: result %s: %v", what, raw, err)
	}
	if len(r.StructuredContent) == 0 {
		t.Fatalf("%s: no structuredContent in %s", what, raw)
	}
	return r.StructuredContent
}

// TestGatewayInterop: through one gateway endpoint, toolwire's client in
// both eras sees both upstreams namespaced and gets every content type,
// structuredContent byte for byte as the upstream sent it, a prompt and a
// resource of server-everything; progress crosses the hop in order, and a
// cancelled call returns at once, reaches ref and leaves the gateway
// serving; an upstream's elicitation reaches the downstream client in
// both eras, from a 2025-era stdio upstream and a 2026-07-28 HTTP one; the official
// TypeScript SDK client does the same through the gateway (its one era,
// 2025-11-25).
func TestGatewayInterop(t *testing.T) {
	gi := startGatewayInterop(t)
	ctxFor := func(t *testing.T) context.Context {
		ctx, cancel := context.WithTimeout(t.Context(), durableDeadline)
		t.Cleanup(cancel)
		return ctx
	}

	for _, era := range []mcp.Era{mcp.EraLegacy, mcp.EraModern} {
		t.Run("toolwire-client/"+era.String(), func(t *testing.T) {
			c := connectServe(t, gi.g.url, era)
			if c.Era() != era {
				t.Fatalf("session era %v, want %v", c.Era(), era)
			}
			ctx := ctxFor(t)

			// tools/list: both upstreams, namespaced, nothing unprefixed.
			names := testmcp.ToolNames(t, c)
			for _, name := range names {
				if !strings.HasPrefix(name, "everything__") && !strings.HasPrefix(name, "ref__") {
					t.Errorf("tool %q is served without an upstream prefix", name)
				}
			}
			for _, want := range gatewayInteropTools {
				if !slices.Contains(names, want) {
					t.Errorf("tools/list lacks %s: %v", want, names)
				}
			}

			// echo on both.
			for _, up := range []string{"everything", "ref"} {
				res, err := c.CallTool(ctx, up+"__echo", map[string]any{"message": "via gateway " + era.String()})
				if err != nil {
					t.Fatalf("%s__echo: %v", up, err)
				}
				if got := texts(res); len(got) != 1 || got[0] != "Echo: via gateway "+era.String() {
					t.Errorf("%s__echo: %q, want [\"Echo: via gateway %s\"]", up, got, era)
				}
			}

			// Image (server-everything's MCP logo, exactly as it sends it).
			res, err := c.CallTool(ctx, "everything__get-tiny-image", map[string]any{})
			if err != nil {
				t.Fatalf("everything__get-tiny-image: %v", err)
			}
			if len(res.Content) != 3 {
				t.Fatalf("everything__get-tiny-image: %d blocks, want 3: %s", len(res.Content), testwait.MustJSON(t, res.Content))
			}
			img, ok := res.Content[1].(*mcp.ImageContent)
			if !ok || img.MIMEType != "image/png" || len(img.Data) < 8 || string(img.Data[1:4]) != "PNG" {
				t.Errorf("everything__get-tiny-image block 1: %T, want a PNG image: %.200s", res.Content[1], testwait.MustJSON(t, res.Content[1]))
			}
			if got := texts(res); !slices.Equal(got, []string{"Here's the image you requested:", "The image above is the MCP logo."}) {
				t.Errorf("everything__get-tiny-image texts: %q", got)
			}

			// Resource links.
			res, err = c.CallTool(ctx, "everything__get-resource-links", map[string]any{"count": 4})
			if err != nil {
				t.Fatalf("everything__get-resource-links: %v", err)
			}
			if len(res.Content) != 5 {
				t.Fatalf("everything__get-resource-links: %d blocks, want 5: %s", len(res.Content), testwait.MustJSON(t, res.Content))
			}
			for i := 1; i <= 4; i++ {
				// Odd ids link blobs, even ids texts; the pinned
				// server-everything labels both text/plain.
				kind, uri, mime := "Blob", fmt.Sprintf("demo://resource/dynamic/blob/%d", i), "text/plain"
				if i%2 == 0 {
					kind, uri = "Text", fmt.Sprintf("demo://resource/dynamic/text/%d", i)
				}
				rl, ok := res.Content[i].(*mcp.ResourceLink)
				if !ok || rl.URI != uri || rl.Name != fmt.Sprintf("%s Resource %d", kind, i) || rl.MIMEType != mime {
					t.Errorf("everything__get-resource-links block %d: %T %s, want a resource_link to %s (%s)", i, res.Content[i], testwait.MustJSON(t, res.Content[i]), uri, mime)
				}
			}

			// Embedded resources, text and blob.
			embedded := func(kind string, id int) mcp.ResourceContents {
				what := "everything__get-resource-reference " + kind
				res, err := c.CallTool(ctx, "everything__get-resource-reference", map[string]any{"resourceType": kind, "resourceId": id})
				if err != nil {
					t.Fatalf("%s: %v", what, err)
				}
				if len(res.Content) != 3 {
					t.Fatalf("%s: %s", what, testwait.MustJSON(t, res.Content))
				}
				er, ok := res.Content[1].(*mcp.EmbeddedResource)
				if !ok {
					t.Errorf("%s block 1: %T", what, res.Content[1])
					return nil
				}
				return er.Resource
			}
			if rc := embedded("Text", 3); rc != nil {
				if tr, ok := rc.(*mcp.TextResourceContents); !ok || tr.URI != "demo://resource/dynamic/text/3" ||
					!strings.HasPrefix(tr.Text, "Resource 3: This is a plaintext resource created at ") {
					t.Errorf("everything__get-resource-reference Text embedded: %s", testwait.MustJSON(t, rc))
				}
			}
			if rc := embedded("Blob", 4); rc != nil {
				if br, ok := rc.(*mcp.BlobResourceContents); !ok || br.URI != "demo://resource/dynamic/blob/4" ||
					!strings.HasPrefix(string(br.Blob), "Resource 4: This is a base64 blob created at ") {
					t.Errorf("everything__get-resource-reference Blob embedded: %s", testwait.MustJSON(t, rc))
				}
			}

			// Audio: server-everything has no audio tool; ref's gallery
			// carries one block of each of the five types.
			res, err = c.CallTool(ctx, "ref__gallery", map[string]any{})
			if err != nil {
				t.Fatalf("ref__gallery: %v", err)
			}
			if len(res.Content) != 5 {
				t.Fatalf("ref__gallery: %d blocks: %s", len(res.Content), testwait.MustJSON(t, res.Content))
			}
			if a, ok := res.Content[2].(*mcp.AudioContent); !ok || a.MIMEType != "audio/wav" || string(a.Data) != "WAVDATA" {
				t.Errorf("ref__gallery audio block: %T %s", res.Content[2], testwait.MustJSON(t, res.Content[2]))
			}
			if im, ok := res.Content[1].(*mcp.ImageContent); !ok || string(im.Data) != "PNGDATA" {
				t.Errorf("ref__gallery image block: %T %s", res.Content[1], testwait.MustJSON(t, res.Content[1]))
			}
			if rl, ok := res.Content[3].(*mcp.ResourceLink); !ok || rl.URI != "file:///project/main.go" {
				t.Errorf("ref__gallery resource link: %T %s", res.Content[3], testwait.MustJSON(t, res.Content[3]))
			}
			if er, ok := res.Content[4].(*mcp.EmbeddedResource); !ok {
				t.Errorf("ref__gallery embedded: %T", res.Content[4])
			} else if tr, ok := er.Resource.(*mcp.TextResourceContents); !ok || tr.Text != "embedded inline" {
				t.Errorf("ref__gallery embedded: %s", testwait.MustJSON(t, er.Resource))
			}

			// structuredContent byte for byte as the upstream sent it.
			directRef := connectServe(t, gi.ref.url, era)
			directEv := gi.directEverything(t)
			for _, tc := range []struct {
				up     string
				direct *client.Client
				city   string
			}{
				{"ref", directRef, "Chicago"}, {"ref", directRef, "Los Angeles"},
				{"everything", directEv, "Chicago"}, {"everything", directEv, "New York"},
			} {
				args := map[string]any{"location": tc.city}
				rawDirect, err := tc.direct.CallToolRaw(ctx, "get-structured-content", args)
				if err != nil {
					t.Fatalf("%s get-structured-content directly: %v", tc.up, err)
				}
				rawGW, err := c.CallToolRaw(ctx, tc.up+"__get-structured-content", args)
				if err != nil {
					t.Fatalf("%s__get-structured-content through the gateway: %v", tc.up, err)
				}
				d := structuredOf(t, tc.up+" direct", rawDirect)
				g := structuredOf(t, tc.up+" via gateway", rawGW)
				if string(d) != string(g) {
					t.Errorf("%s get-structured-content %s: structuredContent differs\n direct:  %s\n gateway: %s", tc.up, tc.city, d, g)
				}
			}

			// A prompt with arguments.
			gp, err := c.GetPrompt(ctx, "everything__args-prompt", map[string]string{"city": "Chicago", "state": "IL"})
			if err != nil {
				t.Fatalf("prompts/get everything__args-prompt: %v", err)
			}
			if len(gp.Messages) != 1 || gp.Messages[0].Role != mcp.RoleUser {
				t.Fatalf("everything__args-prompt: %s", testwait.MustJSON(t, gp))
			}
			if tc, ok := gp.Messages[0].Content.(*mcp.TextContent); !ok || tc.Text != "What's weather in Chicago, IL?" {
				t.Errorf("everything__args-prompt message: %s", testwait.MustJSON(t, gp.Messages[0]))
			}
			prompts, err := c.ListPrompts(ctx)
			if err != nil {
				t.Fatalf("prompts/list: %v", err)
			}
			var pnames []string
			for _, p := range prompts {
				pnames = append(pnames, p.Name)
			}
			for _, want := range []string{"everything__args-prompt", "everything__simple-prompt", "everything__resource-prompt"} {
				if !slices.Contains(pnames, want) {
					t.Errorf("prompts/list lacks %s: %v", want, pnames)
				}
			}

			// A resource listed through the gateway, read through it.
			resources, err := c.ListResources(ctx)
			if err != nil {
				t.Fatalf("resources/list: %v", err)
			}
			const featuresURI = "demo://resource/static/document/features.md"
			if !slices.ContainsFunc(resources, func(r *mcp.Resource) bool { return r.URI == featuresURI }) {
				t.Fatalf("resources/list lacks %s: %s", featuresURI, testwait.MustJSON(t, resources))
			}
			want, err := os.ReadFile(filepath.Join(filepath.Dir(gi.entry), "docs", "features.md"))
			if err != nil {
				t.Fatal(err)
			}
			rr, err := c.ReadResource(ctx, featuresURI)
			if err != nil {
				t.Fatalf("resources/read %s: %v", featuresURI, err)
			}
			if len(rr.Contents) != 1 {
				t.Fatalf("resources/read %s: %d contents", featuresURI, len(rr.Contents))
			}
			if tr, ok := rr.Contents[0].(*mcp.TextResourceContents); !ok || tr.URI != featuresURI || tr.MIMEType != "text/markdown" || tr.Text != string(want) {
				t.Errorf("resources/read %s: %T %.300s; want docs/features.md as text/markdown", featuresURI, rr.Contents[0], testwait.MustJSON(t, rr.Contents[0]))
			}
			// And a template-made one (server-everything's dynamic text).
			rr, err = c.ReadResource(ctx, "demo://resource/dynamic/text/7")
			if err != nil {
				t.Fatalf("resources/read demo://resource/dynamic/text/7: %v", err)
			}
			if tr, ok := rr.Contents[0].(*mcp.TextResourceContents); !ok || len(rr.Contents) != 1 ||
				!strings.HasPrefix(tr.Text, "Resource 7: This is a plaintext resource created at ") {
				t.Errorf("resources/read dynamic text: %s", testwait.MustJSON(t, rr.Contents))
			}
		})
	}

	for _, era := range []mcp.Era{mcp.EraLegacy, mcp.EraModern} {
		t.Run("progress/"+era.String(), func(t *testing.T) {
			c := connectServe(t, gi.g.url, era)
			ctx := ctxFor(t)
			for _, up := range []string{"everything", "ref"} {
				var mu sync.Mutex
				var got []client.Progress
				res, err := c.CallTool(ctx, up+"__trigger-long-running-operation", map[string]any{"duration": 0.5, "steps": 5},
					client.WithProgress(func(p client.Progress) { mu.Lock(); got = append(got, p); mu.Unlock() }))
				if err != nil {
					t.Fatalf("%s__trigger-long-running-operation: %v", up, err)
				}
				if tx := texts(res); len(tx) == 0 || !strings.Contains(tx[0], "ong running operation") {
					t.Errorf("%s__trigger-long-running-operation: %q", up, tx)
				}
				mu.Lock()
				if len(got) != 5 {
					t.Errorf("%s: %d progress reports, want 5: %+v", up, len(got), got)
				}
				for i, p := range got {
					if p.Progress != float64(i+1) || p.Total != 5 {
						t.Errorf("%s: progress report %d is %+v, want %d of 5 (in order)", up, i, p, i+1)
					}
				}
				mu.Unlock()
			}
		})
	}

	for _, era := range []mcp.Era{mcp.EraLegacy, mcp.EraModern} {
		t.Run("cancel/"+era.String(), func(t *testing.T) {
			c := connectServe(t, gi.g.url, era)
			for _, up := range []string{"everything", "ref"} {
				notified0, abandoned0 := gi.refWire.counts()
				ctx, cancel := context.WithCancel(t.Context())
				first := make(chan struct{})
				var once sync.Once
				type outcome struct {
					res *mcp.CallToolResult
					err error
				}
				done := make(chan outcome, 1)
				go func() {
					res, err := c.CallTool(ctx, up+"__trigger-long-running-operation", map[string]any{"duration": 120, "steps": 240},
						client.WithProgress(func(client.Progress) { once.Do(func() { close(first) }) }))
					done <- outcome{res, err}
				}()
				select {
				case <-first: // the upstream is running the call
				case o := <-done:
					cancel()
					t.Fatalf("%s: the long call ended before any progress: %v %+v", up, o.err, o.res)
				case <-time.After(durableDeadline):
					cancel()
					t.Fatalf("%s: no progress from the long call\ngateway log:\n%s", up, gi.g.log.String())
				}
				cancel()
				select {
				case o := <-done:
					if !errors.Is(o.err, context.Canceled) {
						t.Errorf("%s: cancelled call returned %v %+v, want context.Canceled", up, o.err, o.res)
					}
				case <-time.After(durableDeadline):
					t.Fatalf("%s: the cancelled call did not return within %v", up, durableDeadline)
				}
				// ref was told: a notifications/cancelled, or the call's
				// request dropped (server-everything's side is not
				// observable: its tool ignores cancellation).
				if up == "ref" {
					deadline := time.Now().Add(durableDeadline)
					for {
						n, a := gi.refWire.counts()
						if n > notified0 || a > abandoned0 {
							t.Logf("ref saw the cancellation: %d notifications/cancelled, %d dropped requests", n-notified0, a-abandoned0)
							break
						}
						if time.Now().After(deadline) {
							t.Fatalf("ref was never told of the cancelled call (no notifications/cancelled, request not dropped)\ngateway log:\n%s", gi.g.log.String())
						}
						time.Sleep(20 * time.Millisecond)
					}
				}
				// The gateway (and the upstream session) still serve.
				cctx, ccancel := context.WithTimeout(t.Context(), durableDeadline)
				res, err := c.CallTool(cctx, up+"__echo", map[string]any{"message": "after cancel"})
				ccancel()
				if err != nil || !slices.Equal(texts(res), []string{"Echo: after cancel"}) {
					t.Fatalf("%s__echo after a cancelled call: %v %+v", up, err, res)
				}
			}
		})
	}

	// Each era asks its own way: a 2025-era client by a server-to-client
	// request, a 2026-07-28 one by an input_required round.
	for _, era := range []mcp.Era{mcp.EraLegacy, mcp.EraModern} {
		t.Run("elicitation/"+era.String(), func(t *testing.T) {
			var mu sync.Mutex
			var asked []*mcp.ElicitParams
			snapshot := func() []*mcp.ElicitParams { mu.Lock(); defer mu.Unlock(); return slices.Clone(asked) }
			values := map[string]any{"name": "Ada Lovelace", "check": true, "email": "ada@example.com", "integer": 7}
			c := connectServe(t, gi.g.url, era, client.WithElicitationHandler(func(ctx context.Context, p *mcp.ElicitParams) (*mcp.ElicitResult, error) {
				mu.Lock()
				defer mu.Unlock()
				asked = append(asked, p)
				if strings.HasPrefix(p.Message, "The research query") {
					return &mcp.ElicitResult{Action: mcp.ActionAccept, Content: map[string]any{"interpretation": "historical"}}, nil
				}
				return &mcp.ElicitResult{Action: mcp.ActionAccept, Content: values}, nil
			}))
			ctx := ctxFor(t)
			res, err := c.CallTool(ctx, "everything__trigger-elicitation-request", map[string]any{})
			if err != nil {
				t.Fatalf("everything__trigger-elicitation-request: %v\ngateway log:\n%s", err, gi.g.log.String())
			}
			got := snapshot()
			if len(got) != 1 || got[0].Message != "Please provide inputs for the following fields:" {
				t.Fatalf("elicitation handler calls: %s", testwait.MustJSON(t, got))
			}
			var schema struct {
				Type       string                     `json:"type"`
				Properties map[string]json.RawMessage `json:"properties"`
			}
			if err := json.Unmarshal(got[0].RequestedSchema, &schema); err != nil || schema.Type != "object" || schema.Properties["name"] == nil {
				t.Errorf("requested schema %s (%v)", got[0].RequestedSchema, err)
			}
			tx := texts(res)
			if len(tx) < 2 || tx[0] != "✅ User provided the requested information!" ||
				!strings.Contains(tx[1], "- Name: Ada Lovelace") || !strings.Contains(tx[1], "- Email: ada@example.com") ||
				!strings.Contains(tx[1], "- Favorite Integer: 7") {
				t.Errorf("tool result does not reflect the accepted answer: %q", tx)
			}

			// ref, a 2026-07-28 upstream, asks in an input_required round;
			// the gateway puts it to the same downstream client.
			res, err = c.CallTool(ctx, "ref__simulate-research-query", map[string]any{"topic": "MCP", "ambiguous": true})
			if err != nil {
				t.Fatalf("ref__simulate-research-query: %v\ngateway log:\n%s", err, gi.g.log.String())
			}
			got = snapshot()
			if len(got) != 2 || got[1].Message != `The research query "MCP" could have several interpretations. Which do you mean?` {
				t.Fatalf("elicitation handler calls after ref__simulate-research-query: %s", testwait.MustJSON(t, got))
			}
			if tx := texts(res); len(tx) != 1 || !strings.Contains(tx[0], "Interpretation: historical\n") {
				t.Errorf("ref__simulate-research-query does not reflect the answer: %q", tx)
			}
		})
	}

	t.Run("typescript-sdk", func(t *testing.T) {
		run := runTSGateway(t, gi.g.url)
		if run.ProtocolVersion == "" {
			t.Errorf("no protocol version negotiated: %+v", run)
		}
		for _, want := range gatewayInteropTools {
			if !slices.Contains(run.Tools, want) {
				t.Errorf("TypeScript SDK tools/list lacks %s: %v", want, run.Tools)
			}
		}
		for _, n := range run.Tools {
			if !strings.HasPrefix(n, "everything__") && !strings.HasPrefix(n, "ref__") {
				t.Errorf("TypeScript SDK sees an unprefixed tool %q", n)
			}
		}
		for _, up := range []string{"everything", "ref"} {
			r := run.Calls[up+"__echo"]
			if r.Thrown != "" || r.IsError || len(r.Content) != 1 || r.Content[0].Text != "Echo: hello from the TypeScript SDK" {
				t.Errorf("TypeScript SDK %s__echo: %+v", up, r)
			}
			s := run.Calls[up+"__get-structured-content"]
			if !sameJSON(t, string(s.StructuredContent), `{"temperature":36,"conditions":"Light rain / drizzle","humidity":82}`) {
				t.Errorf("TypeScript SDK %s__get-structured-content: %+v", up, s)
			}
		}
		types := func(r tsResult) []string {
			var out []string
			for _, c := range r.Content {
				out = append(out, c.Type)
			}
			return out
		}
		if got := types(run.Calls["ref__gallery"]); !slices.Equal(got, []string{"text", "image", "audio", "resource_link", "resource"}) {
			t.Errorf("TypeScript SDK ref__gallery content types %q", got)
		}
		if got := types(run.Calls["everything__get-tiny-image"]); !slices.Contains(got, "image") {
			t.Errorf("TypeScript SDK everything__get-tiny-image content types %q", got)
		}
		if got := types(run.Calls["everything__get-resource-reference"]); !slices.Contains(got, "resource") {
			t.Errorf("TypeScript SDK everything__get-resource-reference content types %q", got)
		}
		if n := len(run.Progress); n == 0 || run.Progress[n-1].Progress != 3 || run.Progress[n-1].Total != 3 {
			t.Errorf("TypeScript SDK progress reports %+v, want them ending at 3 of 3", run.Progress)
		}
		for i := 1; i < len(run.Progress); i++ {
			if run.Progress[i].Progress <= run.Progress[i-1].Progress {
				t.Errorf("TypeScript SDK progress out of order: %+v", run.Progress)
			}
		}
		if run.Cancelled == "completed" || run.Cancelled == "" {
			t.Errorf("TypeScript SDK cancelled call: %q", run.Cancelled)
		}
		if r := run.Calls["after-cancel"]; len(r.Content) != 1 || r.Content[0].Text != "Echo: after cancel" {
			t.Errorf("TypeScript SDK call after the cancelled one: %+v", r)
		}
		if m := run.Prompt.Messages; len(m) != 1 || m[0].Role != "user" || m[0].Content.Text != "What's weather in Chicago, IL?" {
			t.Errorf("TypeScript SDK prompt: %+v", run.Prompt)
		}
		if c := run.Resource.Contents; len(c) != 1 || c[0].URI != "demo://readme" || c[0].Text == "" {
			t.Errorf("TypeScript SDK resource: %+v", run.Resource)
		}
		if len(run.Elicited) != 1 || !strings.HasPrefix(run.Elicited[0], `The research query "MCP"`) {
			t.Errorf("TypeScript SDK elicitations: %q", run.Elicited)
		}
		if r := run.Calls["elicit"]; r.IsError || len(r.Content) != 1 || !strings.Contains(r.Content[0].Text, "Interpretation: historical") {
			t.Errorf("TypeScript SDK ref__simulate-research-query: %+v", r)
		}
		t.Logf("TypeScript SDK negotiated %s", run.ProtocolVersion)
	})
}

// tsGatewayScript drives the gateway with the official TypeScript SDK
// client: the paged tool list, calls with every content type, progress, a
// cancelled call and one after it, a prompt, a resource, and an upstream's
// elicitation answered by the script.
// It imports the SDK by absolute file URL (it runs from a temporary
// directory); %s are those URLs.
const tsGatewayScript = `
import { Client } from %s;
import { StreamableHTTPClientTransport } from %s;
const transport = new StreamableHTTPClientTransport(new URL(process.argv[2]));
const client = new Client({ name: "ts-sdk-gateway-interop", version: "1.0.0" }, { capabilities: { elicitation: { form: {} } } });
await client.connect(transport);
const out = { protocolVersion: transport.protocolVersion ?? null, tools: [], calls: {} };
let cursor, pages = 0;
do {
  const page = await client.listTools(cursor ? { cursor } : {});
  pages++;
  out.tools.push(...page.tools.map((t) => t.name));
  cursor = page.nextCursor;
} while (cursor && pages < 50);
const call = async (name, args) => {
  try {
    return await client.callTool({ name, arguments: args });
  } catch (e) {
    return { thrown: String(e && e.message ? e.message : e), code: e && e.code };
  }
};
for (const up of ["everything", "ref"]) {
  out.calls[up + "__echo"] = await call(up + "__echo", { message: "hello from the TypeScript SDK" });
  out.calls[up + "__get-structured-content"] = await call(up + "__get-structured-content", { location: "Chicago" });
}
// Every content type: text, image, audio, resource link and embedded resource.
out.calls["ref__gallery"] = await call("ref__gallery", {});
out.calls["everything__get-tiny-image"] = await call("everything__get-tiny-image", {});
out.calls["everything__get-resource-reference"] = await call("everything__get-resource-reference", { resourceType: "Text", resourceId: 3 });
// Progress across the hop.
out.progress = [];
out.calls["ref__trigger-long-running-operation"] = await client.callTool(
  { name: "ref__trigger-long-running-operation", arguments: { duration: 0.3, steps: 3 } }, undefined,
  { onprogress: (p) => out.progress.push({ progress: p.progress, total: p.total ?? 0 }) });
// Cancellation across the hop: the call is abandoned, the gateway goes on.
const abort = new AbortController();
setTimeout(() => abort.abort("enough"), 300);
try {
  await client.callTool({ name: "everything__trigger-long-running-operation", arguments: { duration: 30, steps: 30 } }, undefined, { signal: abort.signal });
  out.cancelled = "completed";
} catch (e) {
  out.cancelled = String(e && e.message ? e.message : e);
}
out.calls["after-cancel"] = await call("ref__echo", { message: "after cancel" });
// A prompt and a resource through the gateway.
out.prompt = await client.getPrompt({ name: "everything__args-prompt", arguments: { city: "Chicago", state: "IL" } });
out.resource = await client.readResource({ uri: "demo://readme" });
// An upstream's elicitation reaches this client.
const elicited = [];
const { ElicitRequestSchema } = await import(%s);
client.setRequestHandler(ElicitRequestSchema, async (req) => {
  elicited.push(req.params.message);
  return { action: "accept", content: { interpretation: "historical" } };
});
out.calls["elicit"] = await call("ref__simulate-research-query", { topic: "MCP", ambiguous: true });
out.elicited = elicited;
await transport.terminateSession().catch(() => {});
await client.close();
process.stdout.write(JSON.stringify(out));
`

// tsGatewayRun is what tsGatewayScript reports.
type tsGatewayRun struct {
	tsRun
	Cancelled string `json:"cancelled"`
	Prompt    struct {
		Messages []struct {
			Role    string `json:"role"`
			Content struct {
				Type string `json:"type"`
				Text string `json:"text"`
			} `json:"content"`
		} `json:"messages"`
	} `json:"prompt"`
	Resource struct {
		Contents []struct {
			URI  string `json:"uri"`
			Text string `json:"text"`
		} `json:"contents"`
	} `json:"resource"`
	Elicited []string `json:"elicited"`
}

func runTSGateway(t *testing.T, endpoint string) tsGatewayRun {
	t.Helper()
	sdk := filepath.Join(testenv.NodeModules(t), "@modelcontextprotocol", "sdk", "dist", "esm", "client")
	fileURL := func(p string) string {
		b, _ := json.Marshal((&url.URL{Scheme: "file", Path: p}).String())
		return string(b)
	}
	script := filepath.Join(t.TempDir(), "ts-gateway.mjs")
	types := filepath.Join(testenv.NodeModules(t), "@modelcontextprotocol", "sdk", "dist", "esm", "types.js")
	src := fmt.Sprintf(tsGatewayScript, fileURL(filepath.Join(sdk, "index.js")), fileURL(filepath.Join(sdk, "streamableHttp.js")), fileURL(types))
	if err := os.WriteFile(script, []byte(src), 0o600); err != nil {
		t.Fatal(err)
	}
	return runNodeJSON[tsGatewayRun](t, durableDeadline, nil, script, endpoint)
}
