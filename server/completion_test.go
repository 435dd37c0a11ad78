package server_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/toolwire/toolwire/jsonrpc"
	"github.com/toolwire/toolwire/mcp"
	"github.com/toolwire/toolwire/server"
)

func TestCompletion(t *testing.T) {
	s := resourceServer(t)
	if s.Capabilities().Completions != nil {
		t.Error("completions declared before any completion")
	}
	if err := server.AddPrompt(s, &mcp.Prompt{Name: "p", Arguments: []mcp.PromptArgument{{Name: "lang"}, {Name: "ver"}, {Name: "many"}, {Name: "bad"}, {Name: "none"}}}, reviewHandler); err != nil {
		t.Fatal(err)
	}
	must(t, server.AddPromptCompletion(s, "p", "lang", server.CompleteFromList("Go", "gleam", "Haskell", "göteborg")))
	must(t, server.AddPromptCompletion(s, "p", "ver", func(_ context.Context, req *server.CompleteRequest) (*mcp.Completion, error) {
		return &mcp.Completion{Values: []string{req.Context["lang"] + "-" + req.Value + "1"}}, nil
	}))
	must(t, server.AddPromptCompletion(s, "p", "many", func(context.Context, *server.CompleteRequest) (*mcp.Completion, error) {
		v := make([]string, 250)
		for i := range v {
			v[i] = fmt.Sprint(i)
		}
		return &mcp.Completion{Values: v}, nil
	}))
	must(t, server.AddPromptCompletion(s, "p", "bad", func(_ context.Context, req *server.CompleteRequest) (*mcp.Completion, error) {
		if err := failAs(req.Value); err != nil {
			return nil, err
		}
		return nil, errors.New("backend down") // every other value fails plainly
	}))
	must(t, server.AddTemplateCompletion(s, "test://template/{id}/data", "id", server.CompleteFromList("123", "124", "200")))
	var re *server.RegistrationError
	if err := server.AddPromptCompletion(s, "p", "lang", server.CompleteFromList()); !errors.As(err, &re) || re.Kind != "completion" {
		t.Errorf("duplicate: %v", err)
	}
	if err := server.AddPromptCompletion(s, "", "x", server.CompleteFromList()); !errors.As(err, &re) {
		t.Errorf("unnamed: %v", err)
	}
	if err := server.AddTemplateCompletion(s, "a://{b}", "b", nil); !errors.As(err, &re) {
		t.Errorf("nil: %v", err)
	}
	if s.Capabilities().Completions == nil {
		t.Error("completions not declared")
	}
	prompt := func(arg, value string, ctx map[string]string) map[string]any {
		p := map[string]any{"ref": map[string]any{"type": "ref/prompt", "name": "p"}, "argument": map[string]any{"name": arg, "value": value}}
		if ctx != nil {
			p["context"] = map[string]any{"arguments": ctx}
		}
		return p
	}
	for era, call := range eraPeers(t, s) {
		ok := []struct {
			params  map[string]any
			values  string
			hasMore bool
			total   int
		}{
			{prompt("lang", "g", nil), "[Go gleam göteborg]", false, 0},
			{prompt("lang", "GÖ", nil), "[göteborg]", false, 0},
			{prompt("lang", "x", nil), "[]", false, 0},
			{prompt("ver", "v", map[string]string{"lang": "go"}), "[go-v1]", false, 0},
			{prompt("none", "", nil), "[]", false, 0},
			{map[string]any{"ref": map[string]any{"type": "ref/resource", "uri": "test://template/{id}/data"}, "argument": map[string]any{"name": "id", "value": "12"}}, "[123 124]", false, 0},
			{map[string]any{"ref": map[string]any{"type": "ref/resource", "uri": "x://{a}{b}{c}{d}{e}/{f}"}, "argument": map[string]any{"name": "f", "value": ""}}, "[]", false, 0},
		}
		for _, c := range ok {
			var res mcp.CompleteResult
			decodeResult(t, call(mcp.MethodComplete, c.params), &res)
			if fmt.Sprint(res.Completion.Values) != c.values || res.Completion.HasMore {
				t.Errorf("%s %v: %+v", era, c.params, res.Completion)
			}
		}
		var res mcp.CompleteResult
		decodeResult(t, call(mcp.MethodComplete, prompt("many", "", nil)), &res)
		if len(res.Completion.Values) != mcp.MaxCompletionValues || !res.Completion.HasMore || res.Completion.Total == nil || *res.Completion.Total != 250 || res.Completion.Values[99] != "99" {
			t.Errorf("%s: truncation %d values, hasMore %v total %v", era, len(res.Completion.Values), res.Completion.HasMore, res.Completion.Total)
		}
		errs := []struct {
			params map[string]any
			code   int64
			want   string
		}{
			{map[string]any{"ref": map[string]any{"type": "ref/prompt", "name": "nope"}, "argument": map[string]any{"name": "a", "value": ""}}, jsonrpc.CodeInvalidParams, `unknown prompt: "nope"`},
			{prompt("zzz", "", nil), jsonrpc.CodeInvalidParams, `has no argument "zzz"`},
			{map[string]any{"ref": map[string]any{"type": "ref/resource", "uri": "n://{x}"}, "argument": map[string]any{"name": "x", "value": ""}}, jsonrpc.CodeInvalidParams, "unknown resource template"},
			{map[string]any{"ref": map[string]any{"type": "ref/resource", "uri": "test://template/{id}/data"}, "argument": map[string]any{"name": "x", "value": ""}}, jsonrpc.CodeInvalidParams, `has no variable "x"`},
			{map[string]any{"ref": map[string]any{"type": "ref/resource", "uri": "test://static-text"}, "argument": map[string]any{"name": "x", "value": ""}}, jsonrpc.CodeInvalidParams, "is no template"},
			{map[string]any{"ref": map[string]any{"type": "ref/other"}, "argument": map[string]any{"name": "x", "value": ""}}, jsonrpc.CodeInvalidParams, "unknown type"},
			{map[string]any{"argument": map[string]any{"name": "x", "value": ""}}, jsonrpc.CodeInvalidParams, `"ref" is required`},
			{map[string]any{"ref": map[string]any{"type": "ref/prompt", "name": "p"}}, jsonrpc.CodeInvalidParams, `"argument.name" is required`},
			{prompt("bad", "panic", nil), jsonrpc.CodeInternalError, "internal error"},
			{prompt("bad", "jsonrpc", nil), -32001, "custom"},
			{prompt("bad", "x", nil), jsonrpc.CodeInternalError, "backend down"},
		}
		for _, c := range errs {
			e := wantError(t, call(mcp.MethodComplete, c.params), c.code)
			if !strings.Contains(e.Message, c.want) {
				t.Errorf("%s %v: %q, want %q", era, c.params, e.Message, c.want)
			}
		}
	}
}

func TestWithVarCompletion(t *testing.T) {
	s := server.New(mcp.Implementation{Name: "s", Version: "1"})
	err := server.AddResourceTemplate(s, &mcp.ResourceTemplate{URITemplate: "db://{table}/{row}", Name: "rows"},
		server.ResourceTemplateFunc(staticText("x")), server.WithVarCompletion("table", server.CompleteFromList("users", "orders")))
	if err != nil {
		t.Fatal(err)
	}
	p := connect(t, s)
	p.initialize("2025-11-25")
	var res mcp.CompleteResult
	decodeResult(t, p.call(mcp.MethodComplete, map[string]any{"ref": map[string]any{"type": "ref/resource", "uri": "db://{table}/{row}"},
		"argument": map[string]any{"name": "table", "value": "U"}}), &res)
	if fmt.Sprint(res.Completion.Values) != "[users]" {
		t.Errorf("got %v", res.Completion.Values)
	}
}
