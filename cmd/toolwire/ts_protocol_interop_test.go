package main

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/toolwire/toolwire/client"
	"github.com/toolwire/toolwire/internal/testenv"
	"github.com/toolwire/toolwire/mcp"
	"github.com/toolwire/toolwire/reference"
	"github.com/toolwire/toolwire/server"
)

// The official TypeScript SDK client against `toolwire serve` for everything
// besides tools: resources and templates, prompts, completion, logging and
// elicitation (conformance/npm/interop/ts-client-protocol.mjs).
//
// What the reference server offers is taken from the reference package
// itself (an in-process reference.NewServer): the resources, templates,
// prompts and completions it registers are what the SDK must see, and each
// answer the SDK got must match the one toolwire's own client gets from an
// in-process reference server (the oracle). Where the reference answers are
// fixed (its prompts, simulate-research-query) they are also checked
// literally. A feature the reference package stopped registering (its
// resources, completions, toggle-simulated-logging) fails the check.

// tsProtocolPlan is what the script is asked to do (TS_PROTOCOL_PLAN).
type tsProtocolPlan struct {
	Read         []string           `json:"read"`
	Prompts      []tsPromptReq      `json:"prompts"`
	Completions  []tsCompletionReq  `json:"completions"`
	LogLevels    []mcp.LoggingLevel `json:"logLevels,omitempty"`
	LogTool      *tsToolReq         `json:"logTool,omitempty"`
	LogCalls     map[string]int     `json:"logCalls,omitempty"`
	ElicitTool   *tsToolReq         `json:"elicitTool,omitempty"`
	ElicitAccept map[string]any     `json:"elicitAccept,omitempty"`
}

type tsPromptReq struct {
	Name string            `json:"name"`
	Args map[string]string `json:"args,omitempty"`
}

type tsCompletionReq struct {
	Ref      mcp.CompletionReference `json:"ref"`
	Argument mcp.CompletionArgument  `json:"argument"`
	Context  map[string]string       `json:"context,omitempty"`
}

type tsToolReq struct {
	Name string         `json:"name"`
	Args map[string]any `json:"args"`
}

// tsFailure is how the script reports a request that failed.
type tsFailure struct {
	Thrown string          `json:"thrown"`
	Code   int             `json:"code"`
	Data   json.RawMessage `json:"data,omitempty"`
}

// tsProtocolRun is what the script prints.
type tsProtocolRun struct {
	ServerVersion struct{ Name, Version string } `json:"serverVersion"`
	Capabilities  map[string]json.RawMessage     `json:"capabilities"`
	Resources     struct {
		tsFailure
		Pages     int             `json:"pages"`
		Resources []*mcp.Resource `json:"resources"`
	} `json:"resources"`
	ResourceTemplates struct {
		tsFailure
		Pages             int                     `json:"pages"`
		ResourceTemplates []*mcp.ResourceTemplate `json:"resourceTemplates"`
	} `json:"resourceTemplates"`
	FirstText *string                    `json:"firstText"`
	FirstBlob *string                    `json:"firstBlob"`
	Reads     map[string]json.RawMessage `json:"reads"`
	Prompts   struct {
		tsFailure
		Pages   int           `json:"pages"`
		Prompts []*mcp.Prompt `json:"prompts"`
	} `json:"prompts"`
	GotPrompts []struct {
		tsPromptReq
		Result json.RawMessage `json:"result"`
	} `json:"gotPrompts"`
	Completions []struct {
		tsCompletionReq
		Result json.RawMessage `json:"result"`
	} `json:"completions"`
	SetLevel       map[string]json.RawMessage   `json:"setLevel"`
	LogCalls       map[string][]json.RawMessage `json:"logCalls"`
	ElicitAccepted json.RawMessage              `json:"elicitAccepted"`
	ElicitDeclined json.RawMessage              `json:"elicitDeclined"`
	Elicitations   []struct {
		Action string           `json:"action"`
		Params mcp.ElicitParams `json:"params"`
	} `json:"elicitations"`
	Logs []struct {
		Phase  string           `json:"phase"`
		Level  mcp.LoggingLevel `json:"level"`
		Logger string           `json:"logger"`
		Data   json.RawMessage  `json:"data"`
	} `json:"logs"`
}

// tsOracle is toolwire's own client on an in-process reference server (a
// 2025-era session over Streamable HTTP, as the SDK's), plus the server
// itself for what it registers.
type tsOracle struct {
	ref *server.Server
	c   *client.Client
}

func newTSOracle(t *testing.T) *tsOracle {
	t.Helper()
	srv, url := serveReference(t)
	o := &tsOracle{ref: srv}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var err error
	o.c, err = client.Connect(ctx, &client.HTTP{URL: url}, client.WithEra(mcp.EraLegacy),
		client.WithElicitationHandler(func(context.Context, *mcp.ElicitParams) (*mcp.ElicitResult, error) {
			return &mcp.ElicitResult{Action: mcp.ActionDecline}, nil
		}))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { o.c.Close() })
	return o
}

// call is the oracle's raw answer to a request, or its JSON-RPC error code.
func (o *tsOracle) call(t *testing.T, method string, params any) (json.RawMessage, int) {
	t.Helper()
	raw, err := o.c.Call(context.Background(), method, params)
	var je *client.JSONRPCError
	if errors.As(err, &je) {
		return nil, int(je.Code)
	}
	if err != nil {
		t.Fatalf("oracle %s: %v", method, err)
	}
	return raw, 0
}

// literalCompletions are completion requests with known answers.
var literalCompletions = []tsCompletionReq{
	{Ref: mcp.CompletionReference{Type: mcp.RefPrompt, Name: "completable-prompt"}, Argument: mcp.CompletionArgument{Name: "department", Value: "S"}},
	{Ref: mcp.CompletionReference{Type: mcp.RefPrompt, Name: "completable-prompt"}, Argument: mcp.CompletionArgument{Name: "name"},
		Context: map[string]string{"department": "Sales"}},
	{Ref: mcp.CompletionReference{Type: mcp.RefPrompt, Name: "args-prompt"}, Argument: mcp.CompletionArgument{Name: "city", Value: "Bo"}},
	{Ref: mcp.CompletionReference{Type: mcp.RefPrompt, Name: "resource-prompt"}, Argument: mcp.CompletionArgument{Name: "resourceType", Value: "b"}},
	{Ref: mcp.CompletionReference{Type: mcp.RefResource, URI: "demo://text/{id}"}, Argument: mcp.CompletionArgument{Name: "id", Value: "9"}},
}

// literalCompletionValues are their answers, by index.
var literalCompletionValues = [][]string{
	{"Sales", "Support"},
	{"David", "Eve", "Frank"},
	{"Boston"},
	{"blob"},
	{"9", "90", "91", "92", "93", "94", "95", "96", "97", "98", "99"},
}

var templateVar = regexp.MustCompile(`\{[^}]*\}`)

// unknownURI is read to see the not-found error.
const unknownURI = "demo://no-such-resource/0"

// tsProtocolPlanFor makes the plan from what the reference registers.
func tsProtocolPlanFor(ref *server.Server) (tsProtocolPlan, string) {
	p := tsProtocolPlan{
		Prompts: []tsPromptReq{
			{Name: "simple-prompt"},
			{Name: "args-prompt", Args: map[string]string{"city": "Chicago", "state": "IL"}},
			{Name: "args-prompt", Args: map[string]string{"city": "Lyon"}},
			{Name: "resource-prompt", Args: map[string]string{"resourceType": "text", "resourceId": "3"}},
			{Name: "resource-prompt", Args: map[string]string{"resourceType": "blob", "resourceId": "5"}},
			{Name: "completable-prompt", Args: map[string]string{"department": "Sales", "name": "Eve"}},
		},
		// toggle-simulated-logging: every other call starts it, and each
		// start sends one message of a random level at once. At error
		// about half of the 20 starts pass; at debug all 5.
		LogLevels:    []mcp.LoggingLevel{mcp.LevelError, mcp.LevelDebug},
		LogCalls:     map[string]int{"error": 40, "debug": 10},
		ElicitTool:   &tsToolReq{Name: "simulate-research-query", Args: map[string]any{"topic": "Go", "ambiguous": true}},
		ElicitAccept: map[string]any{"interpretation": "historical"},
	}
	for _, pr := range ref.Prompts() {
		known := slices.ContainsFunc(p.Prompts, func(q tsPromptReq) bool { return q.Name == pr.Name })
		required := slices.ContainsFunc(pr.Arguments, func(a mcp.PromptArgument) bool { return a.Required })
		if !known && !required {
			p.Prompts = append(p.Prompts, tsPromptReq{Name: pr.Name})
		}
	}
	for _, r := range ref.Resources() {
		if len(p.Read) < 20 {
			p.Read = append(p.Read, r.URI)
		}
	}
	for _, tm := range ref.ResourceTemplates() {
		p.Read = append(p.Read, templateVar.ReplaceAllString(tm.URITemplate, "1"))
	}
	p.Read = append(p.Read, "demo://resource/2", unknownURI, "demo://text/101")
	if ref.Capabilities().Completions != nil {
		p.Completions = append(p.Completions, literalCompletions...)
		for _, pr := range ref.Prompts() {
			for _, a := range pr.Arguments {
				p.Completions = append(p.Completions, tsCompletionReq{
					Ref: mcp.CompletionReference{Type: mcp.RefPrompt, Name: pr.Name}, Argument: mcp.CompletionArgument{Name: a.Name}})
			}
		}
		for _, tm := range ref.ResourceTemplates() {
			for _, v := range templateVar.FindAllString(tm.URITemplate, -1) {
				name := strings.TrimLeft(strings.Trim(v, "{}"), "+#./;?&")
				p.Completions = append(p.Completions, tsCompletionReq{
					Ref: mcp.CompletionReference{Type: mcp.RefResource, URI: tm.URITemplate}, Argument: mcp.CompletionArgument{Name: name}})
			}
		}
	}
	if _, ok := ref.Tool("toggle-simulated-logging"); ok {
		p.LogTool = &tsToolReq{Name: "toggle-simulated-logging", Args: map[string]any{}}
	}
	b, _ := json.Marshal(p)
	return p, string(b)
}

// runTSProtocol runs ts-client-protocol.mjs with Node 22.
func runTSProtocol(t *testing.T, plan string, args ...string) tsProtocolRun {
	t.Helper()
	script := filepath.Join(testenv.Root(t), "conformance", "npm", "interop", "ts-client-protocol.mjs")
	return runNodeJSON[tsProtocolRun](t, 90*time.Second, []string{"TS_PROTOCOL_PLAN=" + plan}, script, args...)
}

func jsonQuote(s string) string { b, _ := json.Marshal(s); return string(b) }

// failureOf returns the failure a result reports, if any.
func failureOf(raw json.RawMessage) *tsFailure {
	var f tsFailure
	if json.Unmarshal(raw, &f) == nil && f.Thrown != "" {
		return &f
	}
	return nil
}

// member returns one member of a JSON object, re-encoded ("null" if absent).
func member(raw json.RawMessage, name string) string {
	var m map[string]json.RawMessage
	_ = json.Unmarshal(raw, &m)
	v, ok := m[name]
	if !ok {
		return "null"
	}
	return string(v)
}

func TestTSProtocolOverStdio(t *testing.T) {
	o := newTSOracle(t)
	plan, planJSON := tsProtocolPlanFor(o.ref)
	run := runTSProtocol(t, planJSON, "stdio", testenv.Toolwire(t), "serve", "--stdio", "--page-size", "5", "--data-dir", t.TempDir())
	checkTSProtocol(t, o, plan, run)
}

func TestTSProtocolOverHTTP(t *testing.T) {
	o := newTSOracle(t)
	plan, planJSON := tsProtocolPlanFor(o.ref)
	url, stop := httpServe(t, "--page-size", "5")
	defer stop()
	run := runTSProtocol(t, planJSON, "http", url)
	checkTSProtocol(t, o, plan, run)
}

func checkTSProtocol(t *testing.T, o *tsOracle, plan tsProtocolPlan, run tsProtocolRun) {
	if run.ServerVersion.Name != reference.Info().Name || run.ServerVersion.Version != binaryVersion(t) {
		t.Errorf("server %+v", run.ServerVersion)
	}
	t.Run("prompts", func(t *testing.T) { checkTSPrompts(t, o, plan, run) })
	t.Run("elicitation", func(t *testing.T) { checkTSElicitation(t, run) })
	t.Run("resources", func(t *testing.T) { checkTSResources(t, o, run) })
	t.Run("completion", func(t *testing.T) { checkTSCompletion(t, o, run) })
	t.Run("logging", func(t *testing.T) { checkTSLogging(t, o, plan, run) })
}

func checkTSPrompts(t *testing.T, o *tsOracle, plan tsProtocolPlan, run tsProtocolRun) {
	if run.Prompts.Thrown != "" {
		t.Fatalf("prompts/list: %+v", run.Prompts.tsFailure)
	}
	var want, got []string
	for _, p := range o.ref.Prompts() {
		want = append(want, p.Name)
	}
	for _, p := range run.Prompts.Prompts {
		got = append(got, p.Name)
	}
	slices.Sort(want)
	slices.Sort(got)
	if !slices.Equal(got, want) || !slices.Contains(got, "args-prompt") || !slices.Contains(got, "resource-prompt") || !slices.Contains(got, "simple-prompt") {
		t.Errorf("prompts %v, want %v (with simple-prompt, args-prompt, resource-prompt)", got, want)
	}
	if pages := max(1, (len(want)+4)/5); run.Prompts.Pages != pages {
		t.Errorf("%d pages of prompts, want %d", run.Prompts.Pages, pages)
	}
	for _, p := range run.Prompts.Prompts {
		if p.Name == "args-prompt" && (len(p.Arguments) != 2 || p.Arguments[0].Name != "city" || !p.Arguments[0].Required ||
			p.Arguments[1].Name != "state" || p.Arguments[1].Required) {
			t.Errorf("args-prompt arguments %+v", p.Arguments)
		}
	}
	literal := map[string]string{
		`completable-prompt {"department":"Sales","name":"Eve"}`: `[{"role":"user","content":{"type":"text","text":"Please promote Eve to the head of the Sales team."}}]`,
		`simple-prompt {}`: `[{"role":"user","content":{"type":"text","text":"This is a simple prompt without arguments."}}]`,
		`args-prompt {"city":"Chicago","state":"IL"}`: `[{"role":"user","content":{"type":"text","text":"What's the weather in Chicago, IL?"}}]`,
		`args-prompt {"city":"Lyon"}`:                 `[{"role":"user","content":{"type":"text","text":"What's the weather in Lyon?"}}]`,
		`resource-prompt {"resourceId":"3","resourceType":"text"}`: `[{"role":"user","content":{"type":"text","text":"This prompt includes the text resource 3:"}},` +
			`{"role":"user","content":{"type":"resource","resource":{"uri":"demo://text/3","mimeType":"text/plain","text":"Resource 3: this is a plaintext resource"}}}]`,
		`resource-prompt {"resourceId":"5","resourceType":"blob"}`: `[{"role":"user","content":{"type":"text","text":"This prompt includes the blob resource 5:"}},` +
			`{"role":"user","content":{"type":"resource","resource":{"uri":"demo://blob/5","mimeType":"application/octet-stream","blob":"` +
			base64.StdEncoding.EncodeToString([]byte("Resource 5: this is a binary resource")) + `"}}}]`,
	}
	if len(run.GotPrompts) != len(plan.Prompts) {
		t.Fatalf("%d prompts/get results for %d requests", len(run.GotPrompts), len(plan.Prompts))
	}
	for _, g := range run.GotPrompts {
		args, _ := json.Marshal(g.Args)
		if g.Args == nil {
			args = []byte("{}")
		}
		key := g.Name + " " + string(args)
		if f := failureOf(g.Result); f != nil {
			t.Errorf("prompts/get %s: %+v", key, f)
			continue
		}
		msgs := member(g.Result, "messages")
		if want, ok := literal[key]; ok && !sameJSON(t, msgs, want) {
			t.Errorf("prompts/get %s:\n got %s\nwant %s", key, msgs, want)
		}
		oracle, code := o.call(t, mcp.MethodGetPrompt, mcp.GetPromptParams{Name: g.Name, Arguments: g.Args})
		if code != 0 || !sameJSON(t, msgs, member(oracle, "messages")) {
			t.Errorf("prompts/get %s: the SDK got %s, toolwire's client %s (code %d)", key, msgs, member(oracle, "messages"), code)
		}
	}
}

func checkTSElicitation(t *testing.T, run tsProtocolRun) {
	text := func(raw json.RawMessage) string {
		var r struct {
			Content []struct{ Type, Text string }
			IsError bool
		}
		if err := json.Unmarshal(raw, &r); err != nil || r.IsError || len(r.Content) != 1 || r.Content[0].Type != "text" {
			t.Errorf("simulate-research-query result %s", raw)
			return ""
		}
		return r.Content[0].Text
	}
	stages := "- Stage 1: Gathering sources: done\n- Stage 2: Analyzing content: done\n- Stage 3: Synthesizing findings: done\n- Stage 4: Generating report: done\n"
	if got, want := text(run.ElicitAccepted), "# Research report: Go\n\nInterpretation: historical\n\n"+stages; got != want {
		t.Errorf("accepted: %q, want %q", got, want)
	}
	if got, want := text(run.ElicitDeclined), "# Research report: Go\n\nInterpretation: technical (default: the user declined)\n\n"+stages; got != want {
		t.Errorf("declined: %q, want %q", got, want)
	}
	if len(run.Elicitations) != 2 || run.Elicitations[0].Action != "accept" || run.Elicitations[1].Action != "decline" {
		t.Fatalf("elicitation requests %+v", run.Elicitations)
	}
	for _, e := range run.Elicitations {
		p := e.Params
		if p.Message != `The research query "Go" could have several interpretations. Which do you mean?` || (p.Mode != "" && p.Mode != "form") {
			t.Errorf("elicitation params %+v", p)
		}
		var schema struct {
			Type       string
			Required   []string
			Properties map[string]struct {
				Type  string
				OneOf []struct{ Const, Title string }
			}
		}
		if err := json.Unmarshal(p.RequestedSchema, &schema); err != nil {
			t.Fatal(err)
		}
		in := schema.Properties["interpretation"]
		if schema.Type != "object" || !slices.Equal(schema.Required, []string{"interpretation"}) || len(schema.Properties) != 1 ||
			in.Type != "string" || len(in.OneOf) != 3 || in.OneOf[1] != (struct{ Const, Title string }{"historical", "Historical: how Go came about"}) {
			t.Errorf("requested schema %s", p.RequestedSchema)
		}
	}
}

func checkTSResources(t *testing.T, o *tsOracle, run tsProtocolRun) {
	resources, templates := o.ref.Resources(), o.ref.ResourceTemplates()
	if run.Resources.Thrown != "" || run.ResourceTemplates.Thrown != "" {
		t.Fatalf("resources/list: %+v; resources/templates/list: %+v", run.Resources.tsFailure, run.ResourceTemplates.tsFailure)
	}
	resourceKey := func(r *mcp.Resource) string { return r.URI + " " + r.Name + " " + r.MIMEType }
	listed := sameListed(t, "resources", resources, run.Resources.Resources, resourceKey, run.Resources.Pages)
	templateKey := func(r *mcp.ResourceTemplate) string { return r.URITemplate + " " + r.Name + " " + r.MIMEType }
	sameListed(t, "resource templates", templates, run.ResourceTemplates.ResourceTemplates, templateKey, run.ResourceTemplates.Pages)
	if len(resources) > 0 && run.FirstText == nil {
		t.Errorf("no listed text resource among %q", listed)
	}

	var texts, blobs int
	for uri, raw := range run.Reads {
		oracle, code := o.call(t, mcp.MethodReadResource, mcp.ReadResourceParams{URI: uri})
		if f := failureOf(raw); f != nil {
			if uri != unknownURI && uri != "demo://text/101" {
				t.Errorf("resources/read %s: %+v", uri, f)
			} else if f.Code != code || (f.Code != -32002 && f.Code != -32602) || member(f.Data, "uri") != jsonQuote(uri) {
				t.Errorf("resources/read of an unknown URI: %+v; toolwire's client got code %d", f, code)
			}
			continue
		}
		if uri == unknownURI || uri == "demo://text/101" {
			t.Errorf("resources/read of an unknown URI succeeded: %s", raw)
			continue
		}
		var res struct {
			Contents []struct {
				URI, MIMEType string
				Text, Blob    *string
			}
		}
		if err := json.Unmarshal(raw, &res); err != nil || len(res.Contents) == 0 {
			t.Errorf("resources/read %s: %s", uri, raw)
			continue
		}
		for _, c := range res.Contents {
			if c.URI == "" || (c.Text == nil) == (c.Blob == nil) {
				t.Errorf("resources/read %s: content %+v", uri, c)
			}
			if c.Text != nil {
				texts++
			}
			if c.Blob != nil {
				if _, err := base64.StdEncoding.DecodeString(*c.Blob); err != nil {
					t.Errorf("resources/read %s: blob: %v", uri, err)
				}
				blobs++
			}
		}
		if code != 0 || !sameJSON(t, member(raw, "contents"), member(oracle, "contents")) {
			t.Errorf("resources/read %s: the SDK got %s, toolwire's client %s (code %d)", uri, member(raw, "contents"), member(oracle, "contents"), code)
		}
	}
	t.Logf("%d resources, %d templates; %d reads: %d text and %d blob contents", len(resources), len(templates), len(run.Reads), texts, blobs)
	if texts == 0 || blobs == 0 {
		t.Errorf("read %d text and %d blob contents (of %v); want both kinds", texts, blobs, slices.Collect(func(yield func(string) bool) {
			for u := range run.Reads {
				if !yield(u) {
					return
				}
			}
		}))
	}
	if _, ok := run.Reads["demo://text/101"]; !ok {
		t.Errorf("demo://text/101 (beyond MaxResourceID) not read")
	}
	for uri, want := range map[string]string{
		"demo://resource/1": `[{"uri":"demo://resource/1","mimeType":"text/plain","text":"Resource 1: this is a plaintext resource"}]`,
		"demo://resource/2": fmt.Sprintf(`[{"uri":"demo://resource/2","mimeType":"application/octet-stream","blob":%q}]`,
			base64.StdEncoding.EncodeToString([]byte("Resource 2: this is a binary resource"))),
		"demo://logo.png": fmt.Sprintf(`[{"uri":"demo://logo.png","mimeType":"image/png","blob":%q}]`, base64.StdEncoding.EncodeToString(reference.TinyPNG())),
	} {
		if raw, ok := run.Reads[uri]; !ok || !sameJSON(t, member(raw, "contents"), want) {
			t.Errorf("%s: %s, want contents %s", uri, raw, want)
		}
	}
	if raw := run.Reads["demo://readme"]; !strings.HasPrefix(member(raw, "contents"), `[{"uri":"demo://readme","mimeType":"text/markdown","text":"# toolwire reference server\n`) {
		t.Errorf("demo://readme: %.200s", raw)
	}
	if run.FirstText == nil || *run.FirstText != "demo://readme" || run.FirstBlob == nil || *run.FirstBlob != "demo://logo.png" {
		t.Errorf("first listed text %v, blob %v; want demo://readme, demo://logo.png", run.FirstText, run.FirstBlob)
	}
	// The demo resources the reference prompts embed.
	if raw := run.Reads["demo://text/1"]; !sameJSON(t, member(raw, "contents"), `[{"uri":"demo://text/1","mimeType":"text/plain","text":"Resource 1: this is a plaintext resource"}]`) {
		t.Errorf("demo://text/1: %s", raw)
	}
	if raw := run.Reads["demo://blob/1"]; !sameJSON(t, member(raw, "contents"), fmt.Sprintf(`[{"uri":"demo://blob/1","mimeType":"application/octet-stream","blob":%q}]`,
		base64.StdEncoding.EncodeToString([]byte("Resource 1: this is a binary resource")))) {
		t.Errorf("demo://blob/1: %s", raw)
	}
}

func checkTSCompletion(t *testing.T, o *tsOracle, run tsProtocolRun) {
	if len(run.Completions) == 0 {
		t.Fatal("no completion requests made")
	}
	some := 0
	for i, c := range run.Completions {
		what := fmt.Sprintf("%s%s %s", c.Ref.Name, c.Ref.URI, c.Argument.Name)
		params := mcp.CompleteParams{Ref: c.Ref, Argument: c.Argument}
		if c.Context != nil {
			params.Context = &mcp.CompletionContext{Arguments: c.Context}
			what += fmt.Sprintf(" %v", c.Context)
		}
		oracle, code := o.call(t, mcp.MethodComplete, params)
		if f := failureOf(c.Result); f != nil {
			if f.Code == 0 || f.Code != code {
				t.Errorf("complete %s: %+v; toolwire's client got code %d", what, f, code)
			}
			continue
		}
		got := member(c.Result, "completion")
		if code != 0 || !sameJSON(t, got, member(oracle, "completion")) {
			t.Errorf("complete %s: the SDK got %s, toolwire's client %s (code %d)", what, got, member(oracle, "completion"), code)
		}
		var comp mcp.Completion
		if err := json.Unmarshal([]byte(got), &comp); err != nil {
			t.Errorf("complete %s: %s: %v", what, got, err)
		}
		if len(comp.Values) > 0 {
			some++
		}
		if i < len(literalCompletionValues) && !slices.Equal(comp.Values, literalCompletionValues[i]) {
			t.Errorf("complete %s %q: %q, want %q", what, c.Argument.Value, comp.Values, literalCompletionValues[i])
		}
	}
	t.Logf("%d completion requests, %d with values", len(run.Completions), some)
	if some == 0 {
		t.Errorf("no completion request got any value: %+v", run.Completions)
	}
}

func checkTSLogging(t *testing.T, o *tsOracle, plan tsProtocolPlan, run tsProtocolRun) {
	for _, l := range plan.LogLevels {
		if !sameJSON(t, string(run.SetLevel[string(l)]), `"ok"`) {
			t.Errorf("logging/setLevel %s: %s", l, run.SetLevel[string(l)])
		}
	}
	for _, level := range plan.LogLevels {
		calls := run.LogCalls[string(level)]
		if len(calls) != plan.LogCalls[string(level)] {
			t.Fatalf("%d calls at %s, want %d", len(calls), level, plan.LogCalls[string(level)])
		}
		for i, raw := range calls {
			want := []string{"Started simulated", "Stopped simulated"}[i%2]
			var r struct {
				Content []struct{ Text string }
				IsError bool
			}
			if err := json.Unmarshal(raw, &r); err != nil || r.IsError || len(r.Content) != 1 || !strings.HasPrefix(r.Content[0].Text, want) {
				t.Fatalf("call %d at %s: %s, want %q...", i, level, raw, want)
			}
		}
		starts := (len(calls) + 1) / 2
		n := 0
		for _, m := range run.Logs {
			if m.Phase != string(level) {
				continue
			}
			n++
			if !m.Level.AtLeast(level) {
				t.Errorf("at %s the SDK got a %s message: %+v", level, m.Level, m)
			}
			if m.Logger != "simulated" || string(m.Data) != fmt.Sprintf(`"%s-level message"`, m.Level) {
				t.Errorf("message %+v (data %s)", m, m.Data)
			}
		}
		// Each start sends one message at once (more if a tick passes).
		switch {
		case level == mcp.LevelDebug && n < starts:
			t.Errorf("at debug %d messages for %d starts", n, starts)
		case n == 0:
			t.Errorf("at %s no message for %d starts", level, starts)
		}
		t.Logf("%s: %d messages for %d starts", level, n, starts)
	}
}

// sameListed checks that the TypeScript client listed (got) the entries the
// server has (want), compared by key in any order, in pages of five; it
// returns the keys listed, sorted.
func sameListed[T any](t *testing.T, what string, want, got []T, key func(T) string, pages int) []string {
	t.Helper()
	var wantKeys, gotKeys []string
	for _, e := range want {
		wantKeys = append(wantKeys, key(e))
	}
	for _, e := range got {
		gotKeys = append(gotKeys, key(e))
	}
	slices.Sort(wantKeys)
	slices.Sort(gotKeys)
	if !slices.Equal(gotKeys, wantKeys) {
		t.Errorf("%s\n got %q\nwant %q", what, gotKeys, wantKeys)
	}
	if wantPages := max(1, (len(wantKeys)+4)/5); pages != wantPages {
		t.Errorf("%d pages of %s, want %d", pages, what, wantPages)
	}
	return gotKeys
}
