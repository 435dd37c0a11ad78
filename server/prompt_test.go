package server_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"testing/synctest"

	"github.com/toolwire/toolwire/jsonrpc"
	"github.com/toolwire/toolwire/mcp"
	"github.com/toolwire/toolwire/server"
)

// reviewPrompt is a prompt with one required and one optional argument.
var reviewPrompt = &mcp.Prompt{Name: "review", Title: "Code review", Description: "Reviews code",
	Arguments: []mcp.PromptArgument{{Name: "code", Required: true}, {Name: "style"}}}

func reviewHandler(_ context.Context, req *server.PromptRequest, args map[string]string) (*mcp.GetPromptResult, error) {
	switch args["style"] {
	case "bad":
		return nil, &server.PromptArgumentError{Argument: "style", Reason: `"bad" is no style`}
	case "badrole":
		return &mcp.GetPromptResult{Messages: []mcp.PromptMessage{{Role: "system", Content: &mcp.TextContent{Text: "x"}}}}, nil
	case "nil":
		return nil, nil
	}
	if err := failAs(args["style"]); err != nil {
		return nil, err
	}
	return &mcp.GetPromptResult{Description: "review of " + req.Name, Messages: []mcp.PromptMessage{
		{Role: mcp.RoleUser, Content: &mcp.TextContent{Text: "Review " + args["code"] + " in style " + args["style"]}},
		{Role: mcp.RoleAssistant, Content: &mcp.ImageContent{Data: []byte("PNG"), MIMEType: "image/png"}},
		{Role: mcp.RoleUser, Content: &mcp.EmbeddedResource{Resource: &mcp.TextResourceContents{URI: "file:///a.go", Text: "package a"}}},
	}}, nil
}

// failAs is how a test handler fails when its input names a failure mode:
// "jsonrpc" with a *jsonrpc.Error of its own (-32001 "custom"), "fail" with
// a plain error ("backend down"), "panic" with a panic; any other mode is
// no failure (nil).
func failAs(mode string) error {
	switch mode {
	case "jsonrpc":
		return jsonrpc.NewError(-32001, "custom")
	case "fail":
		return errors.New("backend down")
	case "panic":
		panic("boom")
	}
	return nil
}

func promptServer(t *testing.T, opts ...server.Option) *server.Server {
	t.Helper()
	s := server.New(mcp.Implementation{Name: "s", Version: "1"}, opts...)
	if err := server.AddPrompt(s, reviewPrompt, reviewHandler); err != nil {
		t.Fatal(err)
	}
	return s
}

// eraPeers returns a legacy session and a modern peer with the params
// helper each needs.
func eraPeers(t *testing.T, s *server.Server) map[string]func(method string, params map[string]any) *jsonrpc.Response {
	legacy := connect(t, s)
	legacy.initialize("2025-11-25")
	modern := connect(t, s)
	return map[string]func(string, map[string]any) *jsonrpc.Response{
		"2025-11-25": func(m string, p map[string]any) *jsonrpc.Response {
			return legacy.call(m, p)
		},
		"2026-07-28": func(m string, p map[string]any) *jsonrpc.Response {
			if p == nil {
				p = map[string]any{}
			}
			p["_meta"] = modernMeta()
			return modern.call(m, p)
		},
	}
}

func TestAddPromptRegistrationErrors(t *testing.T) {
	s := server.New(mcp.Implementation{Name: "s", Version: "1"})
	h := func(context.Context, *server.PromptRequest, map[string]string) (*mcp.GetPromptResult, error) {
		return nil, nil
	}
	cases := map[string]error{
		"nil":       server.AddPrompt(s, nil, h),
		"nohandler": server.AddPrompt(s, &mcp.Prompt{Name: "x"}, nil),
		"empty":     server.AddPrompt(s, &mcp.Prompt{}, h),
		"spaces":    server.AddPrompt(s, &mcp.Prompt{Name: " x"}, h),
		"argname":   server.AddPrompt(s, &mcp.Prompt{Name: "x", Arguments: []mcp.PromptArgument{{}}}, h),
		"argtwice":  server.AddPrompt(s, &mcp.Prompt{Name: "x", Arguments: []mcp.PromptArgument{{Name: "a"}, {Name: "a"}}}, h),
	}
	for name, err := range cases {
		var re *server.RegistrationError
		if !errors.As(err, &re) || re.Kind != "prompt" {
			t.Errorf("%s: got %v", name, err)
		}
	}
	if s.Capabilities().Prompts != nil {
		t.Error("prompts capability declared with no prompt registered")
	}
	if err := server.AddPrompt(s, &mcp.Prompt{Name: "x"}, h); err != nil {
		t.Fatal(err)
	}
	var re *server.RegistrationError
	if err := server.AddPrompt(s, &mcp.Prompt{Name: "x"}, h); !errors.As(err, &re) || !strings.Contains(err.Error(), "already registered") {
		t.Errorf("duplicate: %v", err)
	}
	// Methods added by hand leave no room for the registry.
	s2 := server.New(mcp.Implementation{Name: "s", Version: "1"})
	if err := server.AddMethod(s2, server.MethodSpec{Name: mcp.MethodListPrompts, Capability: "prompts"},
		func(context.Context, *server.Request, *struct{}) (*mcp.ListPromptsResult, error) { return nil, nil }); err != nil {
		t.Fatal(err)
	}
	if err := server.AddPrompt(s2, &mcp.Prompt{Name: "x"}, h); !errors.As(err, &re) {
		t.Errorf("prompts/list taken: %v", err)
	}
}

func TestPromptCapabilityDeclared(t *testing.T) {
	s := promptServer(t)
	p := connect(t, s)
	res := p.initialize("2025-11-25")
	raw, _ := json.Marshal(res.Capabilities)
	if !strings.Contains(string(raw), `"prompts":{"listChanged":true}`) {
		t.Errorf("legacy capabilities %s", raw)
	}
	var d map[string]json.RawMessage
	decodeResult(t, p.call(mcp.MethodDiscover, map[string]any{"_meta": modernMeta()}), &d)
	if !strings.Contains(string(d["capabilities"]), `"prompts":{"listChanged":true}`) {
		t.Errorf("discover capabilities %s", d["capabilities"])
	}
}

func TestPromptsListBothEras(t *testing.T) {
	s := server.New(mcp.Implementation{Name: "s", Version: "1"}, server.WithLimits(server.Limits{PageSize: 2}))
	for _, n := range []string{"k", "b", "z", "a", "m"} {
		if err := server.AddPrompt(s, &mcp.Prompt{Name: n, Arguments: []mcp.PromptArgument{{Name: "x", Required: true}}}, reviewHandler); err != nil {
			t.Fatal(err)
		}
	}
	for era, call := range eraPeers(t, s) {
		var names []string
		for _, r := range walkPages(t, era, call, mcp.MethodListPrompts) {
			var res mcp.ListPromptsResult
			decodeResult(t, r, &res)
			for _, p := range res.Prompts {
				names = append(names, p.Name)
				if len(p.Arguments) != 1 || !p.Arguments[0].Required {
					t.Errorf("%s: arguments %+v", era, p.Arguments)
				}
			}
		}
		if fmt.Sprint(names) != "[a b k m z]" {
			t.Errorf("%s: listed %v", era, names)
		}
		wantError(t, call(mcp.MethodListPrompts, map[string]any{"cursor": "%%%"}), jsonrpc.CodeInvalidParams)
	}
}

func TestPromptCursorIsNoToolCursor(t *testing.T) {
	s := promptServer(t, server.WithLimits(server.Limits{PageSize: 1}))
	addNamed(t, s, "a")
	addNamed(t, s, "b")
	p := connect(t, s)
	p.initialize("2025-11-25")
	var tools mcp.ListToolsResult
	decodeResult(t, p.call(mcp.MethodListTools, nil), &tools)
	if tools.NextCursor == "" {
		t.Fatal("no tools cursor")
	}
	wantError(t, p.call(mcp.MethodListPrompts, map[string]any{"cursor": tools.NextCursor}), jsonrpc.CodeInvalidParams)
}

func TestGetPromptBothEras(t *testing.T) {
	s := promptServer(t)
	for era, call := range eraPeers(t, s) {
		r := call(mcp.MethodGetPrompt, map[string]any{"name": "review", "arguments": map[string]any{"code": "x := 1", "style": "terse"}})
		var res mcp.GetPromptResult
		decodeResult(t, r, &res)
		if len(res.Messages) != 3 || res.Description != "review of review" {
			t.Fatalf("%s: %s", era, r.Result)
		}
		if tc, ok := res.Messages[0].Content.(*mcp.TextContent); !ok || tc.Text != "Review x := 1 in style terse" {
			t.Errorf("%s: first message %+v", era, res.Messages[0])
		}
		if _, ok := res.Messages[2].Content.(*mcp.EmbeddedResource); !ok {
			t.Errorf("%s: third message %+v", era, res.Messages[2])
		}
		var raw map[string]json.RawMessage
		_ = json.Unmarshal(r.Result, &raw)
		if _, ok := raw["resultType"]; ok != (era == "2026-07-28") {
			t.Errorf("%s: resultType present %v", era, ok)
		}
		// Optional arguments may be left out.
		decodeResult(t, call(mcp.MethodGetPrompt, map[string]any{"name": "review", "arguments": map[string]any{"code": "c"}}), &res)
		// A nil result is one with no messages.
		r = call(mcp.MethodGetPrompt, map[string]any{"name": "review", "arguments": map[string]any{"code": "c", "style": "nil"}})
		if !strings.Contains(string(r.Result), `"messages":[]`) {
			t.Errorf("%s: nil result answered %s %v", era, r.Result, r.Error)
		}
	}
}

func TestGetPromptErrors(t *testing.T) {
	s := promptServer(t)
	cases := []struct {
		params map[string]any
		code   int64
		want   string
	}{
		{map[string]any{"name": "nope"}, jsonrpc.CodeInvalidParams, `unknown prompt: "nope"`},
		{map[string]any{}, jsonrpc.CodeInvalidParams, `"name" is required`},
		{map[string]any{"name": "review"}, jsonrpc.CodeInvalidParams, `missing required argument "code"`},
		{map[string]any{"name": "review", "arguments": map[string]any{"style": "x"}}, jsonrpc.CodeInvalidParams, `missing required argument "code"`},
		{map[string]any{"name": "review", "arguments": map[string]any{"code": 1}}, jsonrpc.CodeInvalidParams, `argument "code" must be a string, not a number`},
		{map[string]any{"name": "review", "arguments": map[string]any{"code": "c", "n": nil}}, jsonrpc.CodeInvalidParams, `argument "n" must be a string, not null`},
		{map[string]any{"name": "review", "arguments": []string{"c"}}, jsonrpc.CodeInvalidParams, `"arguments" must be an object of strings, not an array`},
		{map[string]any{"name": "review", "arguments": nil}, jsonrpc.CodeInvalidParams, `"arguments" must be an object of strings, not null`},
		{map[string]any{"name": 7}, jsonrpc.CodeInvalidParams, "invalid prompts/get params"},
		{map[string]any{"name": "review", "arguments": map[string]any{"code": "c", "style": "bad"}}, jsonrpc.CodeInvalidParams, `argument "style"`},
		{map[string]any{"name": "review", "arguments": map[string]any{"code": "c", "style": "jsonrpc"}}, -32001, "custom"},
		{map[string]any{"name": "review", "arguments": map[string]any{"code": "c", "style": "fail"}}, jsonrpc.CodeInternalError, "backend down"},
		{map[string]any{"name": "review", "arguments": map[string]any{"code": "c", "style": "panic"}}, jsonrpc.CodeInternalError, "internal error"},
		{map[string]any{"name": "review", "arguments": map[string]any{"code": "c", "style": "badrole"}}, jsonrpc.CodeInternalError, "invalid message"},
	}
	for era, call := range eraPeers(t, s) {
		for _, c := range cases {
			e := wantError(t, call(mcp.MethodGetPrompt, c.params), c.code)
			if !strings.Contains(e.Message, c.want) {
				t.Errorf("%s %v: message %q, want %q", era, c.params, e.Message, c.want)
			}
		}
	}
	// Two missing arguments are both named.
	h := func(context.Context, *server.PromptRequest, map[string]string) (*mcp.GetPromptResult, error) {
		return nil, nil
	}
	if err := server.AddPrompt(s, &mcp.Prompt{Name: "two", Arguments: []mcp.PromptArgument{{Name: "a", Required: true}, {Name: "b", Required: true}}}, h); err != nil {
		t.Fatal(err)
	}
	p := connect(t, s)
	p.initialize("2025-11-25")
	e := wantError(t, p.call(mcp.MethodGetPrompt, map[string]any{"name": "two"}), jsonrpc.CodeInvalidParams)
	if !strings.Contains(e.Message, `"a", "b"`) {
		t.Errorf("message %q", e.Message)
	}
	// A raw duplicate argument is refused.
	resp := p.wait(func() chan *jsonrpc.Response {
		_, ch := p.startRaw(jsonrpc.StringID("dup"), `{"jsonrpc":"2.0","id":"dup","method":"prompts/get","params":{"name":"review","arguments":{"code":"a","code":"b"}}}`)
		return ch
	}())
	wantError(t, resp, jsonrpc.CodeInvalidParams)
}

func TestPromptListChangedBothEras(t *testing.T) { synctest.Test(t, testPromptListChangedBothEras) }

func testPromptListChangedBothEras(t *testing.T) {
	s := promptServer(t)
	h := func(context.Context, *server.PromptRequest, map[string]string) (*mcp.GetPromptResult, error) {
		return nil, nil
	}
	legacy := connect(t, s)
	legacy.initialize("2025-11-25")
	modern := connect(t, s)
	id, _, ap := modern.listen(map[string]any{"promptsListChanged": true})
	if !ap.Notifications.PromptsListChanged || ap.Notifications.ToolsListChanged {
		t.Errorf("acknowledged %+v", ap.Notifications)
	}
	if err := server.AddPrompt(s, &mcp.Prompt{Name: "later"}, h); err != nil {
		t.Fatal(err)
	}
	if n := legacy.note(); n.Method != mcp.NotificationPromptsListChanged {
		t.Errorf("legacy got %s", n.Method)
	}
	modern.listened(mcp.NotificationPromptsListChanged, id)
	if !s.RemovePrompt("later") {
		t.Error("RemovePrompt reported no prompt")
	}
	if n := legacy.note(); n.Method != mcp.NotificationPromptsListChanged {
		t.Errorf("legacy got %s after remove", n.Method)
	}
	if n := modern.note(); n.Method != mcp.NotificationPromptsListChanged {
		t.Errorf("modern got %s after remove", n.Method)
	}
	if s.RemovePrompt("later") {
		t.Error("removing a missing prompt reported success")
	}
	// A tool change does not reach a subscription that asked for prompts only.
	addNamed(t, s, "tool")
	if n := legacy.note(); n.Method != mcp.NotificationToolsListChanged {
		t.Errorf("legacy got %s", n.Method)
	}
	modern.noNote()
	wantError(t, legacy.call(mcp.MethodGetPrompt, map[string]any{"name": "later"}), jsonrpc.CodeInvalidParams)
	if got := s.Prompts(); len(got) != 1 || got[0].Name != "review" {
		t.Errorf("Prompts() = %v", got)
	}
}
