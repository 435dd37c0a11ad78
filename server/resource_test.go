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

func staticText(text string) server.ResourceFunc {
	return func(_ context.Context, req *server.ResourceRequest) (*mcp.ReadResourceResult, error) {
		return &mcp.ReadResourceResult{Contents: []mcp.ResourceContents{&mcp.TextResourceContents{MIMEType: "text/plain", Text: text}}}, nil
	}
}

func resourceServer(t *testing.T, opts ...server.Option) *server.Server {
	t.Helper()
	s := server.New(mcp.Implementation{Name: "s", Version: "1"}, opts...)
	must(t, server.AddResource(s, &mcp.Resource{URI: "test://static-text", Name: "text", Description: "d", MIMEType: "text/plain"},
		staticText("This is the content of the static text resource.")))
	must(t, server.AddResource(s, &mcp.Resource{URI: "test://static-binary", Name: "bin", MIMEType: "image/png"},
		func(context.Context, *server.ResourceRequest) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{Contents: []mcp.ResourceContents{&mcp.BlobResourceContents{URI: "test://static-binary", MIMEType: "image/png", Blob: []byte{0x89, 'P', 'N', 'G'}}}}, nil
		}))
	must(t, server.AddResourceTemplate(s, &mcp.ResourceTemplate{URITemplate: "test://template/{id}/data", Name: "tmpl", MIMEType: "application/json"},
		func(_ context.Context, req *server.ResourceRequest) (*mcp.ReadResourceResult, error) {
			switch req.Vars["id"] {
			case "missing":
				return nil, fmt.Errorf("lookup: %w", server.ErrResourceNotFound)
			case "empty":
				return &mcp.ReadResourceResult{}, nil
			case "nilcontent":
				return &mcp.ReadResourceResult{Contents: []mcp.ResourceContents{(*mcp.TextResourceContents)(nil)}}, nil
			}
			if err := failAs(req.Vars["id"]); err != nil {
				return nil, err
			}
			b, _ := json.Marshal(map[string]any{"id": req.Vars["id"], "templateTest": true, "data": "Data for ID: " + req.Vars["id"]})
			return &mcp.ReadResourceResult{Contents: []mcp.ResourceContents{&mcp.TextResourceContents{MIMEType: "application/json", Text: string(b)}}}, nil
		}))
	must(t, server.AddResourceTemplate(s, &mcp.ResourceTemplate{URITemplate: "x://{a}{b}{c}{d}{e}/{f}", Name: "hostile"},
		func(_ context.Context, req *server.ResourceRequest) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{Contents: []mcp.ResourceContents{&mcp.TextResourceContents{Text: fmt.Sprintf("a=%d f=%s", len(req.Vars["a"]), req.Vars["f"])}}}, nil
		}))
	return s
}

func TestResourceRegistrationErrors(t *testing.T) {
	s := server.New(mcp.Implementation{Name: "s", Version: "1"})
	h := staticText("x")
	th := server.ResourceTemplateFunc(h)
	cases := map[string]struct {
		err  error
		kind string
	}{
		"nil":          {server.AddResource(s, nil, h), "resource"},
		"nohandler":    {server.AddResource(s, &mcp.Resource{URI: "a://b", Name: "n"}, nil), "resource"},
		"nouri":        {server.AddResource(s, &mcp.Resource{Name: "n"}, h), "resource"},
		"noname":       {server.AddResource(s, &mcp.Resource{URI: "a://b"}, h), "resource"},
		"tnil":         {server.AddResourceTemplate(s, nil, th), "resource template"},
		"tnohandler":   {server.AddResourceTemplate(s, &mcp.ResourceTemplate{URITemplate: "a://{b}", Name: "n"}, nil), "resource template"},
		"tbad":         {server.AddResourceTemplate(s, &mcp.ResourceTemplate{URITemplate: "a://{b", Name: "n"}, th), "resource template"},
		"ttwice":       {server.AddResourceTemplate(s, &mcp.ResourceTemplate{URITemplate: "a://{b}/{b}", Name: "n"}, th), "resource template"},
		"tnoname":      {server.AddResourceTemplate(s, &mcp.ResourceTemplate{URITemplate: "a://{b}"}, th), "resource template"},
		"tcompletevar": {server.AddResourceTemplate(s, &mcp.ResourceTemplate{URITemplate: "a://{b}", Name: "n"}, th, server.WithVarCompletion("zz", server.CompleteFromList("x"))), "resource template"},
		"tcompletenil": {server.AddResourceTemplate(s, &mcp.ResourceTemplate{URITemplate: "a://{b}", Name: "n"}, th, server.WithVarCompletion("b", nil)), "resource template"},
	}
	for name, c := range cases {
		var re *server.RegistrationError
		if !errors.As(c.err, &re) || re.Kind != c.kind {
			t.Errorf("%s: got %v", name, c.err)
		}
	}
	if s.Capabilities().Resources != nil {
		t.Error("resources capability declared with nothing registered")
	}
	if err := server.AddResource(s, &mcp.Resource{URI: "a://b", Name: "n"}, h); err != nil {
		t.Fatal(err)
	}
	var re *server.RegistrationError
	if err := server.AddResource(s, &mcp.Resource{URI: "a://b", Name: "other"}, h); !errors.As(err, &re) || !strings.Contains(err.Error(), "already registered") {
		t.Errorf("duplicate: %v", err)
	}
	if err := server.AddResourceTemplate(s, &mcp.ResourceTemplate{URITemplate: "a://{b}", Name: "n"}, th); err != nil {
		t.Fatal(err)
	}
	if err := server.AddResourceTemplate(s, &mcp.ResourceTemplate{URITemplate: "a://{b}", Name: "n"}, th); !errors.As(err, &re) {
		t.Errorf("duplicate template: %v", err)
	}
	s2 := server.New(mcp.Implementation{Name: "s", Version: "1"})
	if err := server.AddMethod(s2, server.MethodSpec{Name: mcp.MethodReadResource},
		func(context.Context, *server.Request, *struct{}) (*mcp.EmptyResult, error) { return nil, nil }); err != nil {
		t.Fatal(err)
	}
	if err := server.AddResource(s2, &mcp.Resource{URI: "a://b", Name: "n"}, h); !errors.As(err, &re) || re.Kind != "resource" {
		t.Errorf("resources/read taken: %v", err)
	}
	// The definition is copied.
	def := &mcp.Resource{URI: "c://d", Name: "n"}
	if err := server.AddResource(s, def, h); err != nil {
		t.Fatal(err)
	}
	def.Name = "changed"
	for _, r := range s.Resources() {
		if r.URI == "c://d" && r.Name != "n" {
			t.Error("definition not copied")
		}
	}
}

func TestResourceCapabilityBothEras(t *testing.T) {
	s := resourceServer(t)
	p := connect(t, s)
	res := p.initialize("2025-11-25")
	raw, _ := json.Marshal(res.Capabilities)
	if !strings.Contains(string(raw), `"resources":{"subscribe":true,"listChanged":true}`) {
		t.Errorf("legacy capabilities %s", raw)
	}
	// resources/subscribe does not exist in 2026-07-28: listen replaces it.
	wantError(t, p.call(mcp.MethodSubscribe, map[string]any{"uri": "a://b", "_meta": modernMeta()}), jsonrpc.CodeMethodNotFound)
}

func TestResourceListsPagedBothEras(t *testing.T) {
	s := server.New(mcp.Implementation{Name: "s", Version: "1"}, server.WithLimits(server.Limits{PageSize: 2}))
	for _, u := range []string{"z://5", "a://1", "m://3", "b://2", "y://4"} {
		if err := server.AddResource(s, &mcp.Resource{URI: u, Name: u}, staticText(u)); err != nil {
			t.Fatal(err)
		}
		if err := server.AddResourceTemplate(s, &mcp.ResourceTemplate{URITemplate: u + "/{x}", Name: u}, server.ResourceTemplateFunc(staticText(u))); err != nil {
			t.Fatal(err)
		}
	}
	for era, call := range eraPeers(t, s) {
		for _, method := range []string{mcp.MethodListResources, mcp.MethodListResourceTemplates} {
			var got []string
			pages := walkPages(t, era, call, method)
			for _, r := range pages {
				if method == mcp.MethodListResources {
					var res mcp.ListResourcesResult
					decodeResult(t, r, &res)
					for _, x := range res.Resources {
						got = append(got, x.URI)
					}
				} else {
					var res mcp.ListResourceTemplatesResult
					decodeResult(t, r, &res)
					for _, x := range res.ResourceTemplates {
						got = append(got, x.URITemplate)
					}
				}
			}
			if len(pages) != 3 {
				t.Errorf("%s %s: %d pages", era, method, len(pages))
			}
			want := "[a://1 b://2 m://3 y://4 z://5]"
			if method == mcp.MethodListResourceTemplates {
				want = "[a://1/{x} b://2/{x} m://3/{x} y://4/{x} z://5/{x}]"
			}
			if fmt.Sprint(got) != want {
				t.Errorf("%s %s: %v", era, method, got)
			}
			wantError(t, call(method, map[string]any{"cursor": "%%%"}), jsonrpc.CodeInvalidParams)
		}
		// A resources/list cursor is no templates/list cursor.
		var res mcp.ListResourcesResult
		decodeResult(t, call(mcp.MethodListResources, map[string]any{}), &res)
		wantError(t, call(mcp.MethodListResourceTemplates, map[string]any{"cursor": res.NextCursor}), jsonrpc.CodeInvalidParams)
	}
}

func TestReadResourceBothEras(t *testing.T) {
	s := resourceServer(t)
	for era, call := range eraPeers(t, s) {
		var res mcp.ReadResourceResult
		decodeResult(t, call(mcp.MethodReadResource, map[string]any{"uri": "test://static-text"}), &res)
		tc, ok := res.Contents[0].(*mcp.TextResourceContents)
		if len(res.Contents) != 1 || !ok || tc.URI != "test://static-text" || tc.Text != "This is the content of the static text resource." || tc.MIMEType != "text/plain" {
			t.Errorf("%s: text %+v", era, res.Contents)
		}
		r := call(mcp.MethodReadResource, map[string]any{"uri": "test://static-binary"})
		decodeResult(t, r, &res)
		if bc, ok := res.Contents[0].(*mcp.BlobResourceContents); !ok || string(bc.Blob) != "\x89PNG" || !strings.Contains(string(r.Result), `"blob":"iVBORw=="`) {
			t.Errorf("%s: blob %s", era, r.Result)
		}
		decodeResult(t, call(mcp.MethodReadResource, map[string]any{"uri": "test://template/123/data"}), &res)
		tc, ok = res.Contents[0].(*mcp.TextResourceContents)
		if !ok || tc.URI != "test://template/123/data" || tc.Text != `{"data":"Data for ID: 123","id":"123","templateTest":true}` {
			t.Errorf("%s: template %+v", era, res.Contents[0])
		}
		// Variables are percent-decoded.
		decodeResult(t, call(mcp.MethodReadResource, map[string]any{"uri": "test://template/a%20b/data"}), &res)
		if tc := res.Contents[0].(*mcp.TextResourceContents); !strings.Contains(tc.Text, `"id":"a b"`) {
			t.Errorf("%s: decoded var %s", era, tc.Text)
		}
	}
}

func TestReadResourceErrors(t *testing.T) {
	s := resourceServer(t)
	notFound := map[string]int64{"2025-11-25": mcp.CodeResourceNotFound, "2026-07-28": jsonrpc.CodeInvalidParams}
	for era, call := range eraPeers(t, s) {
		for _, uri := range []string{"test://nonexistent-resource-for-conformance-testing", "test://template/missing/data"} {
			e := wantError(t, call(mcp.MethodReadResource, map[string]any{"uri": uri}), notFound[era])
			var d mcp.ResourceNotFoundData
			if err := json.Unmarshal(e.Data, &d); err != nil || d.URI != uri || e.Message != "Resource not found" {
				t.Errorf("%s %s: %q data %s", era, uri, e.Message, e.Data)
			}
		}
		cases := []struct {
			params map[string]any
			code   int64
			want   string
		}{
			{map[string]any{}, jsonrpc.CodeInvalidParams, `"uri" is required`},
			{map[string]any{"uri": 7}, jsonrpc.CodeInvalidParams, "invalid resources/read params"},
			{map[string]any{"uri": "test://template/jsonrpc/data"}, -32001, "custom"},
			{map[string]any{"uri": "test://template/fail/data"}, jsonrpc.CodeInternalError, "backend down"},
			{map[string]any{"uri": "test://template/panic/data"}, jsonrpc.CodeInternalError, "internal error"},
			{map[string]any{"uri": "test://template/empty/data"}, jsonrpc.CodeInternalError, "no contents"},
			{map[string]any{"uri": "test://template/nilcontent/data"}, jsonrpc.CodeInternalError, "invalid content"},
		}
		for _, c := range cases {
			e := wantError(t, call(mcp.MethodReadResource, c.params), c.code)
			if !strings.Contains(e.Message, c.want) {
				t.Errorf("%s %v: %q, want %q", era, c.params, e.Message, c.want)
			}
		}
	}
}

// TestHostileURI reads a URI built to make a backtracking matcher try
// every split of 100,000 characters among five adjacent variables (about
// 10^23 steps). By default it is longer than the server matches; with the
// limit raised, RE2 answers in one pass. Results are checked, not time.
func TestHostileURI(t *testing.T) {
	long := strings.Repeat("a", 100_000)
	p := connect(t, resourceServer(t))
	p.initialize("2025-11-25")
	e := wantError(t, p.call(mcp.MethodReadResource, map[string]any{"uri": "x://" + long + "!"}), jsonrpc.CodeInvalidParams)
	if !strings.Contains(e.Message, "longer than the 8192") {
		t.Errorf("default limit: %s", e.Message)
	}
	p = connect(t, resourceServer(t, server.WithLimits(server.Limits{MaxURILength: 1 << 20})))
	p.initialize("2025-11-25")
	wantError(t, p.call(mcp.MethodReadResource, map[string]any{"uri": "x://" + long + "!"}), mcp.CodeResourceNotFound)
	var res mcp.ReadResourceResult
	decodeResult(t, p.call(mcp.MethodReadResource, map[string]any{"uri": "x://" + long + "/f"}), &res)
	if tc := res.Contents[0].(*mcp.TextResourceContents); tc.Text != "a=100000 f=f" {
		t.Errorf("got %q", tc.Text)
	}
}

func TestSubscribeLegacy(t *testing.T) { synctest.Test(t, testSubscribeLegacy) }

func testSubscribeLegacy(t *testing.T) {
	s := resourceServer(t, server.WithLimits(server.Limits{MaxSubscriptions: 2}))
	p := connect(t, s)
	p.initialize("2025-11-25")
	other := connect(t, s)
	other.initialize("2025-11-25")
	r := p.call(mcp.MethodSubscribe, map[string]any{"uri": "test://watched-resource"})
	if r.Error != nil || string(r.Result) != "{}" {
		t.Fatalf("subscribe: %s %v", r.Result, r.Error)
	}
	s.NotifyResourceUpdated("test://other")
	s.NotifyResourceUpdated("test://watched-resource")
	n := p.note()
	var np mcp.ResourceUpdatedParams
	if err := json.Unmarshal(n.Params, &np); err != nil || n.Method != mcp.NotificationResourceUpdated || np.URI != "test://watched-resource" {
		t.Errorf("got %s %s", n.Method, n.Params)
	}
	other.noNote()
	// Subscribing twice is one subscription; the limit counts URIs.
	p.call(mcp.MethodSubscribe, map[string]any{"uri": "test://watched-resource"})
	p.call(mcp.MethodSubscribe, map[string]any{"uri": "test://second"})
	e := wantError(t, p.call(mcp.MethodSubscribe, map[string]any{"uri": "test://third"}), jsonrpc.CodeInvalidParams)
	if !strings.Contains(e.Message, "too many subscriptions") {
		t.Errorf("limit: %s", e.Message)
	}
	wantError(t, p.call(mcp.MethodSubscribe, map[string]any{}), jsonrpc.CodeInvalidParams)
	r = p.call(mcp.MethodUnsubscribe, map[string]any{"uri": "test://watched-resource"})
	if r.Error != nil || string(r.Result) != "{}" {
		t.Fatalf("unsubscribe: %s %v", r.Result, r.Error)
	}
	p.call(mcp.MethodUnsubscribe, map[string]any{"uri": "test://never"})
	s.NotifyResourceUpdated("test://watched-resource")
	p.noNote()
	s.NotifyResourceUpdated("test://second")
	if n := p.note(); !strings.Contains(string(n.Params), "test://second") {
		t.Errorf("got %s", n.Params)
	}
}

func TestListenResourceSubscriptions(t *testing.T) { synctest.Test(t, testListenResourceSubscriptions) }

func testListenResourceSubscriptions(t *testing.T) {
	s := resourceServer(t, server.WithLimits(server.Limits{MaxSubscriptions: 2}))
	p := connect(t, s)
	id, _, ap := p.listen(map[string]any{"resourcesListChanged": true, "resourceSubscriptions": []string{"test://a", "test://a", "test://b", "test://c"}})
	if !ap.Notifications.ResourcesListChanged || fmt.Sprint(ap.Notifications.ResourceSubscriptions) != "[test://a test://b]" {
		t.Fatalf("acknowledged %+v", ap.Notifications)
	}
	s.NotifyResourceUpdated("test://c") // not acknowledged: not delivered
	s.NotifyResourceUpdated("test://b")
	n := p.listened(mcp.NotificationResourceUpdated, id)
	var np mcp.ResourceUpdatedParams
	if err := json.Unmarshal(n.Params, &np); err != nil || np.URI != "test://b" {
		t.Errorf("got %s %s", n.Method, n.Params)
	}
	if err := server.AddResource(s, &mcp.Resource{URI: "test://new", Name: "new"}, staticText("x")); err != nil {
		t.Fatal(err)
	}
	if n := p.note(); n.Method != mcp.NotificationResourcesListChanged || !strings.Contains(string(n.Params), mcp.MetaSubscriptionID) {
		t.Errorf("got %s %s", n.Method, n.Params)
	}
	p.noNote()

	// A server without resources acknowledges neither.
	s2 := newTestServer(t)
	p2 := connect(t, s2)
	_, _, ap2 := p2.listen(map[string]any{"resourcesListChanged": true, "resourceSubscriptions": []string{"test://a"}})
	if ap2.Notifications.ResourcesListChanged || len(ap2.Notifications.ResourceSubscriptions) != 0 {
		t.Errorf("acknowledged %+v without resources", ap2.Notifications)
	}
}

func TestResourceListChangedLegacy(t *testing.T) {
	s := resourceServer(t)
	p := connect(t, s)
	p.initialize("2025-11-25")
	if err := server.AddResourceTemplate(s, &mcp.ResourceTemplate{URITemplate: "n://{x}", Name: "n"}, server.ResourceTemplateFunc(staticText("x"))); err != nil {
		t.Fatal(err)
	}
	if n := p.note(); n.Method != mcp.NotificationResourcesListChanged {
		t.Errorf("got %s", n.Method)
	}
	if !s.RemoveResourceTemplate("n://{x}") || s.RemoveResourceTemplate("n://{x}") {
		t.Error("RemoveResourceTemplate")
	}
	if n := p.note(); n.Method != mcp.NotificationResourcesListChanged {
		t.Errorf("got %s", n.Method)
	}
	if !s.RemoveResource("test://static-text") || s.RemoveResource("test://static-text") {
		t.Error("RemoveResource")
	}
	if n := p.note(); n.Method != mcp.NotificationResourcesListChanged {
		t.Errorf("got %s", n.Method)
	}
	wantError(t, p.call(mcp.MethodReadResource, map[string]any{"uri": "test://static-text"}), mcp.CodeResourceNotFound)
	if got := len(s.Resources()); got != 1 {
		t.Errorf("Resources() has %d", got)
	}
	if got := s.ResourceTemplates(); len(got) != 2 || got[0].URITemplate != "test://template/{id}/data" {
		t.Errorf("ResourceTemplates() = %v", got)
	}
}
