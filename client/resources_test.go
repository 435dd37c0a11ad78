package client_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/toolwire/toolwire/client"
	"github.com/toolwire/toolwire/jsonrpc"
	"github.com/toolwire/toolwire/mcp"
	"github.com/toolwire/toolwire/server"
)

// standIn answers one method of a standInServer.
type standIn func(ctx context.Context, r *server.Request, params json.RawMessage) (any, error)

// standInServer is a toolwire server whose methods are stood in for by
// the tests: each is added with server.AddMethod (resources/read with its
// Mcp-Name member, so that the server checks the header); a method the
// server already serves itself is answered by a middleware instead, ahead
// of the server's own.
func standInServer(t *testing.T, methods map[string]standIn, opts ...server.Option) *server.Server {
	t.Helper()
	var fallback sync.Map
	mw := func(next jsonrpc.MethodHandler) jsonrpc.MethodHandler {
		return func(ctx context.Context, req *jsonrpc.Request) (any, error) {
			if h, ok := fallback.Load(req.Method); ok {
				return h.(standIn)(ctx, server.RequestFrom(ctx), req.Params)
			}
			return next(ctx, req)
		}
	}
	s := server.New(mcp.Implementation{Name: "stand-in", Version: "1"}, append(opts, server.WithMiddleware(mw))...)
	for name, h := range methods {
		spec := server.MethodSpec{Name: name}
		if name == mcp.MethodReadResource {
			spec.NameParam, spec.Capability = "uri", "resources"
		}
		err := server.AddMethod(s, spec, func(ctx context.Context, r *server.Request, p *json.RawMessage) (any, error) {
			return h(ctx, r, *p)
		})
		if err != nil {
			fallback.Store(name, h)
		}
	}
	return s
}

// resourceMethods stand in for a server with three resources listed two to
// a page, one template, two readable resources and completions.
func resourceMethods(t *testing.T, headers *sync.Map) map[string]standIn {
	pages := map[string]string{
		"":   `{"resources":[{"uri":"file:///a.txt","name":"a","mimeType":"text/plain"},{"uri":"file:///b.bin","name":"b"}],"nextCursor":"p2"}`,
		"p2": `{"resources":[{"uri":"file:///c.txt","name":"c","size":3}]}`,
	}
	return map[string]standIn{
		mcp.MethodListResources: func(_ context.Context, r *server.Request, params json.RawMessage) (any, error) {
			var p mcp.ListResourcesParams
			json.Unmarshal(params, &p)
			page, ok := pages[p.Cursor]
			if !ok {
				return nil, jsonrpc.NewError(jsonrpc.CodeInvalidParams, "bad cursor")
			}
			return json.RawMessage(page), nil
		},
		mcp.MethodListResourceTemplates: func(context.Context, *server.Request, json.RawMessage) (any, error) {
			return json.RawMessage(`{"resourceTemplates":[{"uriTemplate":"file:///{name}","name":"files"}]}`), nil
		},
		mcp.MethodReadResource: func(_ context.Context, r *server.Request, params json.RawMessage) (any, error) {
			var p mcp.ReadResourceParams
			json.Unmarshal(params, &p)
			// Only 2026-07-28 over HTTP carries Mcp-Name; the legacy HTTP
			// subtest (run in any order) must not overwrite what it saw.
			if h := r.Header(); h != nil && headers != nil && r.Peer.Era == mcp.EraModern {
				headers.Store(p.URI, h.Get("Mcp-Name"))
			}
			switch p.URI {
			case "file:///a.txt":
				return &mcp.ReadResourceResult{Contents: []mcp.ResourceContents{&mcp.TextResourceContents{URI: p.URI, MIMEType: "text/plain", Text: "hello"}}}, nil
			case "file:///b.bin":
				return &mcp.ReadResourceResult{Contents: []mcp.ResourceContents{&mcp.BlobResourceContents{URI: p.URI, Blob: []byte{0, 1, 2}}}}, nil
			case "file:///bad":
				return nil, jsonrpc.NewError(jsonrpc.CodeInvalidParams, "not a file URI")
			}
			data, _ := json.Marshal(mcp.ResourceNotFoundData{URI: p.URI})
			if r.Peer.Era == mcp.EraLegacy {
				return nil, &jsonrpc.Error{Code: -32002, Message: "Resource not found", Data: data}
			}
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "Resource not found", Data: data}
		},
		mcp.MethodComplete: func(_ context.Context, r *server.Request, params json.RawMessage) (any, error) {
			var p mcp.CompleteParams
			if err := json.Unmarshal(params, &p); err != nil {
				return nil, err
			}
			var vals []string
			for _, v := range []string{"python", "pytorch", "go"} {
				if strings.HasPrefix(v, p.Argument.Value) {
					vals = append(vals, v+"@"+p.Ref.Name+"/"+p.Argument.Name+"/"+p.Context.Arguments["owner"])
				}
			}
			total := len(vals)
			return &mcp.CompleteResult{Completion: mcp.Completion{Values: vals, Total: &total}}, nil
		},
	}
}

func TestResourcesBothEras(t *testing.T) {
	var headers sync.Map
	s := standInServer(t, resourceMethods(t, &headers))
	for name, c := range promptTransports(t, s) {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			all, err := c.ListResources(ctx)
			if err != nil {
				t.Fatal(err)
			}
			var uris []string
			for _, r := range all {
				uris = append(uris, r.URI)
			}
			if fmt.Sprint(uris) != "[file:///a.txt file:///b.bin file:///c.txt]" || all[0].MIMEType != "text/plain" || all[2].Size == nil || *all[2].Size != 3 {
				t.Errorf("resources %v %+v", uris, all)
			}
			pages := 0
			for page, err := range c.ResourcePages(ctx) {
				if err != nil {
					t.Fatal(err)
				}
				if pages++; pages == 1 && page.NextCursor != "p2" {
					t.Errorf("first page's cursor %q", page.NextCursor)
				}
			}
			if pages != 2 {
				t.Errorf("%d pages, want 2", pages)
			}
			tpls, err := c.ListResourceTemplates(ctx)
			if err != nil || len(tpls) != 1 || tpls[0].URITemplate != "file:///{name}" {
				t.Errorf("templates %+v, %v", tpls, err)
			}

			res, err := c.ReadResource(ctx, "file:///a.txt")
			if err != nil {
				t.Fatal(err)
			}
			if tc, ok := res.Contents[0].(*mcp.TextResourceContents); !ok || tc.Text != "hello" || tc.URI != "file:///a.txt" {
				t.Errorf("read %+v", res.Contents)
			}
			res, err = c.ReadResource(ctx, "file:///b.bin")
			if err != nil {
				t.Fatal(err)
			}
			if bc, ok := res.Contents[0].(*mcp.BlobResourceContents); !ok || string(bc.Blob) != "\x00\x01\x02" {
				t.Errorf("read %+v", res.Contents)
			}

			_, err = c.ReadResource(ctx, "file:///missing")
			var nf *client.ResourceNotFoundError
			var je *client.JSONRPCError
			if !client.IsResourceNotFound(err) || !errors.As(err, &nf) || nf.URI != "file:///missing" || !errors.As(err, &je) || client.CodeOf(err) != client.CodeJSONRPC {
				t.Errorf("missing resource: %v", err)
			}
			if want := int64(-32602); strings.HasSuffix(name, "legacy") && je.Code != -32002 || !strings.HasSuffix(name, "legacy") && je.Code != want {
				t.Errorf("code %d", je.Code)
			}
			if _, err := c.ReadResource(ctx, "file:///bad"); client.IsResourceNotFound(err) || client.CodeOf(err) != client.CodeJSONRPC {
				t.Errorf("a -32602 without data.uri: %v", err)
			}

			comp, err := c.Complete(ctx, mcp.CompletionReference{Type: mcp.RefPrompt, Name: "code"},
				mcp.CompletionArgument{Name: "lang", Value: "py"}, map[string]string{"owner": "ada"})
			if err != nil {
				t.Fatal(err)
			}
			if fmt.Sprint(comp.Values) != "[python@code/lang/ada pytorch@code/lang/ada]" || comp.Total == nil || *comp.Total != 2 {
				t.Errorf("completion %+v", comp)
			}
		})
	}
	// Over 2026-07-28 HTTP the Mcp-Name header carried the uri (and the
	// server, which checks it against the body, accepted it).
	if h, _ := headers.Load("file:///a.txt"); h != "file:///a.txt" {
		t.Errorf("Mcp-Name of resources/read = %v", h)
	}
}

func TestResourcePagesBounded(t *testing.T) {
	s := standInServer(t, resourceMethods(t, nil))
	c := connect(t, inProcess(t, s), client.WithLimits(client.Limits{MaxPages: 1}))
	_, err := c.ListResources(context.Background())
	var pe *client.ProtocolError
	if !errors.As(err, &pe) || !strings.Contains(err.Error(), "more than 1 pages") {
		t.Fatalf("err = %v, want the page limit", err)
	}
}

func TestResourceResultsDecodedExactly(t *testing.T) {
	cases := map[string]struct{ method, result string }{
		"no resources":          {mcp.MethodListResources, `{}`},
		"resource without name": {mcp.MethodListResources, `{"resources":[{"uri":"x:1"}]}`},
		"duplicate member":      {mcp.MethodListResources, `{"resources":[{"uri":"x:1","name":"a","name":"b"}]}`},
		"template without uri":  {mcp.MethodListResourceTemplates, `{"resourceTemplates":[{"name":"t"}]}`},
		"read without contents": {mcp.MethodReadResource, `{}`},
		"text and blob":         {mcp.MethodReadResource, `{"contents":[{"uri":"x:1","text":"a","blob":"AA=="}]}`},
		"completion too long":   {mcp.MethodComplete, `{"completion":{"values":[` + strings.Repeat(`"v",`, 100) + `"v"]}}`},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			s := standInServer(t, map[string]standIn{tc.method: func(context.Context, *server.Request, json.RawMessage) (any, error) {
				return json.RawMessage(tc.result), nil
			}})
			c := connect(t, inProcess(t, s), client.WithEra(mcp.EraLegacy))
			ctx := context.Background()
			var err error
			switch tc.method {
			case mcp.MethodListResources:
				_, err = c.ListResources(ctx)
			case mcp.MethodListResourceTemplates:
				_, err = c.ListResourceTemplates(ctx)
			case mcp.MethodReadResource:
				_, err = c.ReadResource(ctx, "x:1")
			case mcp.MethodComplete:
				_, err = c.Complete(ctx, mcp.CompletionReference{Type: mcp.RefPrompt, Name: "p"}, mcp.CompletionArgument{Name: "a"}, nil)
			}
			if client.CodeOf(err) != client.CodeProtocol {
				t.Fatalf("err = %v, want a protocol error", err)
			}
		})
	}
}

// metaMethods stand in for logging/setLevel (recording the levels set)
// and test/meta, which answers with the request's _meta.
func metaMethods(levels *[]string, mu *sync.Mutex) map[string]standIn {
	return map[string]standIn{
		mcp.MethodSetLevel: func(_ context.Context, _ *server.Request, params json.RawMessage) (any, error) {
			var p mcp.SetLevelParams
			if err := json.Unmarshal(params, &p); err != nil {
				return nil, err
			}
			mu.Lock()
			*levels = append(*levels, string(p.Level))
			mu.Unlock()
			return struct{}{}, nil
		},
		"test/meta": func(_ context.Context, r *server.Request, _ json.RawMessage) (any, error) {
			level, _ := r.Meta()[mcp.MetaLogLevel].(string)
			return map[string]string{"level": level}, nil
		},
	}
}

func TestSetLogLevel(t *testing.T) {
	var levels []string
	var mu sync.Mutex
	s := standInServer(t, metaMethods(&levels, &mu))
	for name, c := range promptTransports(t, s) {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			metaLevel := func() string {
				raw, err := c.Call(ctx, "test/meta", nil)
				if err != nil {
					t.Fatal(err)
				}
				var r struct{ Level string }
				json.Unmarshal(raw, &r)
				return r.Level
			}
			if l := metaLevel(); l != "" {
				t.Errorf("a logLevel (%q) before SetLogLevel", l)
			}
			mu.Lock()
			levels = nil
			mu.Unlock()
			if err := c.SetLogLevel(ctx, mcp.LevelWarning); err != nil {
				t.Fatal(err)
			}
			mu.Lock()
			sent := fmt.Sprint(levels)
			mu.Unlock()
			if c.Era() == mcp.EraLegacy {
				if sent != "[warning]" || metaLevel() != "" {
					t.Errorf("legacy: setLevel sent %s, _meta level %q", sent, metaLevel())
				}
			} else if sent != "[]" || metaLevel() != "warning" {
				t.Errorf("2026: setLevel sent %s, _meta level %q", sent, metaLevel())
			}
			if err := c.SetLogLevel(ctx, "loud"); err == nil {
				t.Error("an unknown level was accepted")
			}
		})
	}
}

// TestLogLevelRestoredOnNewSession: a legacy session the server lost is
// replaced, and the new one is told the level SetLogLevel set.
func TestLogLevelRestoredOnNewSession(t *testing.T) {
	f := newFake(t)
	f.handle = func(w http.ResponseWriter, r *http.Request, req *jsonrpc.Request) bool {
		switch {
		case legacyOnly(w, r, req):
		case req.Method == "test/x" && r.Header.Get("Mcp-Session-Id") == "session-1":
			w.WriteHeader(http.StatusNotFound)
		case req.Method == "test/x" || req.Method == "logging/setLevel":
			writeResult(w, req.ID, `{}`)
		default:
			return false
		}
		return true
	}
	c := connect(t, f.transport(), client.WithEra(mcp.EraLegacy))
	ctx := context.Background()
	if err := c.SetLogLevel(ctx, mcp.LevelDebug); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Call(ctx, "test/x", nil); err != nil {
		t.Fatal(err)
	}
	sets := f.calls("logging/setLevel")
	if len(sets) != 2 || sets[1].Header.Get("Mcp-Session-Id") != "session-2" || !bodyContains(sets[1], `"params":{"level":"debug"}`) {
		t.Fatalf("setLevel requests %+v", sets)
	}
}
