package otc_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/toolwire/toolwire/internal/testhttp"
	"github.com/toolwire/toolwire/jsonrpc"
	"github.com/toolwire/toolwire/mcp"
	"github.com/toolwire/toolwire/otc"
	"github.com/toolwire/toolwire/server"
)

func errorSchemaCheck(t *testing.T, r *reply) {
	t.Helper()
	if err := validate(t, loadSchema(t, "error-responses.json"), r.body); err != nil {
		t.Errorf("error body %s fails the schema: %v", r.raw, err)
	}
}

func TestHealth(t *testing.T) {
	ts := serve(t, newSeedServer(t, defaultSeedEnv(t)), otc.WithAPIKeys("k"))
	r := do(t, http.MethodGet, ts.URL+"/health", nil, nil)
	wantStatus(t, r, 200) // no auth needed
	if r.body["status"] != "ok" {
		t.Errorf("body %s", r.raw)
	}
	var down error = errors.New("backend down")
	ts = serve(t, newSeedServer(t, defaultSeedEnv(t)), otc.WithHealthCheck(func(context.Context) error { return down }))
	r = do(t, http.MethodGet, ts.URL+"/health", nil, nil)
	wantStatus(t, r, 503)
	errorSchemaCheck(t, r)
}

func TestListTools(t *testing.T) {
	ts := serve(t, newSeedServer(t, defaultSeedEnv(t)))
	r := do(t, http.MethodGet, ts.URL+"/tools", nil, nil)
	wantStatus(t, r, 200)
	if r.body["$schema"] != "otc://1.0" || r.body["items"] != nil {
		t.Errorf("OTC spelling expected: %s", r.raw)
	}
	tools := r.body["tools"].([]any)
	defSchema := loadSchema(t, "tool-definition.json")
	var ids []string
	for _, x := range tools {
		d := x.(map[string]any)
		ids = append(ids, d["id"].(string))
		if err := validate(t, defSchema, d); err != nil {
			t.Errorf("%v fails the ToolDefinition schema: %v", d["id"], err)
		}
		in := d["input_schema"].(map[string]any)
		if len(in) != 1 || in["parameters"] == nil {
			t.Errorf("%v: OTC input_schema must be {parameters}: %v", d["id"], in)
		}
	}
	want := "Calculator.Add@1.0.0 Doorbell.Ring@1.0.0 Gmail.GetEmails@1.0.0 SMS.Send@1.0.0 System.GetTimestamp@1.0.0 Weather.GetForecast@1.0.0"
	if got := strings.Join(ids, " "); got != want {
		t.Errorf("ids %s\nwant %s", got, want)
	}
	add := tools[0].(map[string]any)
	if add["name"] != "Calculator_Add" || add["description"] != "Adds two numbers" || add["version"] != "1.0.0" {
		t.Errorf("Calculator.Add definition %v", add)
	}
	params := add["input_schema"].(map[string]any)["parameters"].(map[string]any)
	if params["type"] != "object" || params["properties"].(map[string]any)["a"] == nil {
		t.Errorf("parameters %v", params)
	}
	if out := add["output_schema"].(map[string]any); out["type"] != "number" {
		t.Errorf("output_schema %v", out)
	}
	weather := tools[5].(map[string]any)
	if out := weather["output_schema"].(map[string]any); len(out) != 0 {
		t.Errorf("a tool with no outputSchema must have output_schema {} (any): %v", out)
	}
}

func TestOXPSpelling(t *testing.T) {
	ts := serve(t, newSeedServer(t, defaultSeedEnv(t)))
	r := do(t, http.MethodGet, ts.URL+"/tools", nil, map[string]string{"OXP-Version": "1.0"})
	wantStatus(t, r, 200)
	if r.body["$schema"] != "urn:oxp:1.0" || r.body["tools"] != nil || r.header.Get("OXP-Version") != "1.0" {
		t.Fatalf("OXP spelling expected: %s", r.raw)
	}
	first := r.body["items"].([]any)[0].(map[string]any)
	if in := first["input_schema"].(map[string]any); in["type"] != "object" || in["parameters"] != nil {
		t.Errorf("OXP input_schema is the schema itself: %v", in)
	}
	// A body asking for OXP gets OXP; a flat (unwrapped) request is accepted.
	r = do(t, http.MethodPost, ts.URL+"/tools/call", map[string]any{"$schema": "urn:oxp:1.0",
		"request": map[string]any{"tool_id": "Calculator.Add", "input": map[string]any{"a": 1, "b": 2}}}, nil)
	wantStatus(t, r, 200)
	if r.body["$schema"] != "urn:oxp:1.0" || r.body["result"].(map[string]any)["value"] != 3.0 {
		t.Errorf("OXP call: %s", r.raw)
	}
	r = do(t, http.MethodPost, ts.URL+"/tools/call", map[string]any{"tool_id": "Calculator.Add", "input": map[string]any{"a": 1, "b": 2}}, nil)
	wantStatus(t, r, 200)
	if r.body["$schema"] != "otc://1.0" || r.body["result"].(map[string]any)["value"] != 3.0 {
		t.Errorf("flat call: %s", r.raw)
	}
	// The default spelling can be OXP.
	ts = serve(t, newSeedServer(t, defaultSeedEnv(t)), otc.WithDialect(otc.OXP))
	r = do(t, http.MethodGet, ts.URL+"/tools", nil, nil)
	if r.body["items"] == nil {
		t.Errorf("WithDialect(OXP): %s", r.raw)
	}
	r = call(t, ts, map[string]any{"tool_id": "Calculator.Add", "input": map[string]any{"a": 1, "b": 2}}, nil)
	if r.body["$schema"] != "otc://1.0" {
		t.Errorf("a request asking for OTC gets OTC: %s", r.raw)
	}
}

func TestBadRequests(t *testing.T) {
	ts := serve(t, newSeedServer(t, defaultSeedEnv(t)))
	post := func(body any) *reply { return do(t, http.MethodPost, ts.URL+"/tools/call", body, nil) }
	for name, tc := range map[string]struct {
		body any
		want string
	}{
		"unknown tool":       {map[string]any{"request": map[string]any{"tool_id": "Calculator.Divide"}}, `unknown tool "Calculator.Divide"`},
		"unknown version":    {map[string]any{"request": map[string]any{"tool_id": "Calculator.Add@2.0.0"}}, "has no version 2.0.0 (available: 1.0.0)"},
		"unknown major":      {map[string]any{"request": map[string]any{"tool_id": "Calculator.Add@3"}}, "has no version 3.0.0"},
		"malformed tool_id":  {map[string]any{"request": map[string]any{"tool_id": "calculator-add"}}, "is not a tool id"},
		"version not semver": {map[string]any{"request": map[string]any{"tool_id": "Calculator.Add@1.0"}}, "is not a tool id"},
		"missing tool_id":    {map[string]any{"request": map[string]any{"input": map[string]any{}}}, `"tool_id" is required`},
		"no request":         {map[string]any{"$schema": "otc://1.0"}, `{"request": CallToolRequest}`},
		"not JSON":           {"{not json", "not a JSON object"},
		"array body":         {"[]", "not a JSON object"},
		"trailing data":      {`{"request":{"tool_id":"Calculator.Add"}} {}`, "data after the JSON object"},
		// Read exactly, as any other reader of the body would.
		"tool_id twice":       {`{"request":{"tool_id":"Calculator.Divide","tool_id":"Calculator.Add"}}`, "duplicate"},
		"request twice":       {`{"request":{"tool_id":"Nope.Nope"},"request":{"tool_id":"Calculator.Add"}}`, "duplicate"},
		"Tool_ID":             {`{"request":{"Tool_ID":"Calculator.Add"}}`, `did you mean "tool_id"`},
		"input not object":    {map[string]any{"request": map[string]any{"tool_id": "Calculator.Add", "input": []int{1, 2}}}, `"input" must be an object`},
		"unsupported version": {map[string]any{"$schema": "otc://2.0", "request": map[string]any{"tool_id": "Calculator.Add"}}, "not supported"},
		"bad $schema":         {map[string]any{"$schema": "otc", "request": map[string]any{"tool_id": "Calculator.Add"}}, `"$schema"`},
		// Wrapped and bare at once: a reader of the bare form would call
		// Calculator.Divide (found by FuzzParseCall against its reference).
		"request and tool_id": {`{"request":{"tool_id":"Calculator.Add","input":{"a":1,"b":2}},"tool_id":"Calculator.Divide"}`, `both "request" and a top-level "tool_id"`},
	} {
		r := post(tc.body)
		if r.status != 400 {
			t.Errorf("%s: status %d, want 400: %s", name, r.status, r.raw)
			continue
		}
		errorSchemaCheck(t, r)
		if msg, _ := r.body["message"].(string); !strings.Contains(msg, tc.want) {
			t.Errorf("%s: message %q does not say %q", name, msg, tc.want)
		}
	}
}

func TestHTTPLimits(t *testing.T) {
	ts := serve(t, newSeedServer(t, defaultSeedEnv(t)), otc.WithLimits(otc.Limits{MaxRequestBytes: 200}))
	big := map[string]any{"request": map[string]any{"tool_id": "SMS.Send", "input": map[string]any{"phone_number": "1", "message": strings.Repeat("x", 300)}}}
	r := do(t, http.MethodPost, ts.URL+"/tools/call", big, nil)
	wantStatus(t, r, http.StatusRequestEntityTooLarge)
	errorSchemaCheck(t, r)
	if !strings.Contains(r.body["message"].(string), "200 bytes") {
		t.Errorf("413 does not name the limit: %s", r.raw)
	}
	r = do(t, http.MethodGet, ts.URL+"/tools/call", nil, nil)
	wantStatus(t, r, http.StatusMethodNotAllowed)
	if r.header.Get("Allow") != "POST" {
		t.Errorf("Allow: %q", r.header.Get("Allow"))
	}
	wantStatus(t, do(t, http.MethodPost, ts.URL+"/tools", "{}", nil), http.StatusMethodNotAllowed)
	wantStatus(t, do(t, http.MethodGet, ts.URL+"/nope", nil, nil), http.StatusNotFound)
	req, _ := http.NewRequest(http.MethodPost, ts.URL+"/tools/call", strings.NewReader("tool_id=x"))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	if resp, _ := testhttp.Do(t, nil, req); resp.StatusCode != http.StatusUnsupportedMediaType {
		t.Errorf("form body: status %d", resp.StatusCode)
	}
	// POST /call, shown by some OTC examples, is an alias.
	r = do(t, http.MethodPost, ts.URL+"/call", map[string]any{"request": map[string]any{"tool_id": "Calculator.Add", "input": map[string]any{"a": 1, "b": 1}}}, nil)
	wantStatus(t, r, 200)
}

func TestInputValidation422(t *testing.T) {
	env := defaultSeedEnv(t)
	ts := serve(t, newSeedServer(t, env))
	r := call(t, ts, map[string]any{"tool_id": "Calculator.Add", "input": map[string]any{"a": "seven"}}, nil)
	wantStatus(t, r, 422)
	errorSchemaCheck(t, r)
	pe, _ := r.body["parameter_errors"].(map[string]any)
	if pe["a"] != "expected number, got string" || pe["b"] != "required property is missing" || len(pe) != 2 {
		t.Errorf("parameter_errors %v", pe)
	}
	if msg := r.body["message"].(string); !strings.Contains(msg, "Calculator.Add@1.0.0") || !strings.Contains(msg, "a, b") {
		t.Errorf("message %q", msg)
	}
	// Absent input is {}: required parameters are missing.
	r = call(t, ts, map[string]any{"tool_id": "SMS.Send"}, nil)
	wantStatus(t, r, 422)
	if env.sentCount() != 0 {
		t.Error("the tool ran although its input failed validation")
	}
	// Defaults apply before validation: Gmail.GetEmails' limit defaults to 10.
	r = call(t, ts, map[string]any{"tool_id": "Gmail.GetEmails", "input": map[string]any{}}, nil)
	wantStatus(t, r, 200)
	if n := len(r.body["result"].(map[string]any)["value"].(map[string]any)["emails"].([]any)); n != 2 {
		t.Errorf("emails: %d", n)
	}
	r = call(t, ts, map[string]any{"tool_id": "Gmail.GetEmails", "input": map[string]any{"limit": 1}}, nil)
	if n := len(r.body["result"].(map[string]any)["value"].(map[string]any)["emails"].([]any)); n != 1 {
		t.Errorf("emails with limit 1: %d", n)
	}
}

// addVersioned registers "Calculator.Add" under several versions through
// the _meta keys, each answering its own version.
func addVersioned(t *testing.T, s *server.Server, mcpName, version string) {
	t.Helper()
	err := server.AddTool(s, &mcp.Tool{Name: mcpName, Description: "adds, v" + version,
		Meta: mcp.Meta{otc.MetaToolID: "Calculator.Add", otc.MetaToolVersion: version}},
		func(ctx context.Context, _ *server.CallRequest, in addIn) (string, error) {
			return version, nil
		})
	if err != nil {
		t.Fatal(err)
	}
}

func TestVersionResolution(t *testing.T) {
	s := server.New(mcp.Implementation{Name: "versions", Version: "1"})
	for name, v := range map[string]string{"add-v1": "1.0.0", "add-v1-1": "1.1.0", "add-v2": "2.0.0", "add-v10": "10.0.0", "add-v9": "9.3.1"} {
		addVersioned(t, s, name, v)
	}
	ts := serve(t, s)
	for id, want := range map[string]string{
		"Calculator.Add":        "10.0.0", // latest, compared numerically
		"Calculator.Add@1":      "1.0.0",  // @X is X.0.0
		"Calculator.Add@1.1.0":  "1.1.0",
		"Calculator.Add@2":      "2.0.0",
		"Calculator.Add@9.3.1":  "9.3.1",
		"Calculator.Add@10.0.0": "10.0.0",
	} {
		r := call(t, ts, map[string]any{"tool_id": id, "input": map[string]any{"a": 1, "b": 2}}, nil)
		wantStatus(t, r, 200)
		if got := r.body["result"].(map[string]any)["value"]; got != want {
			t.Errorf("%s resolved to %v, want %s", id, got, want)
		}
	}
	for _, id := range []string{"Calculator.Add@9", "Calculator.Add@1.0.1", "Calculator.Add@3"} {
		r := call(t, ts, map[string]any{"tool_id": id, "input": map[string]any{"a": 1, "b": 2}}, nil)
		wantStatus(t, r, 400)
		if msg := r.body["message"].(string); !strings.Contains(msg, "available: 1.0.0, 1.1.0, 2.0.0, 9.3.1, 10.0.0") {
			t.Errorf("%s: message %q does not list the versions", id, msg)
		}
	}
}

func TestMappingErrorsSurface(t *testing.T) {
	s := server.New(mcp.Implementation{Name: "clash", Version: "1"})
	for _, name := range []string{"get-sum", "get_sum"} {
		if err := server.AddTool(s, &mcp.Tool{Name: name}, func(ctx context.Context, _ *server.CallRequest, in addIn) (string, error) {
			return "", nil
		}); err != nil {
			t.Fatal(err)
		}
	}
	h, err := otc.NewHandler(otc.NewServerBackend(s))
	if err != nil {
		t.Fatal(err)
	}
	err = h.Check(context.Background())
	var me *otc.MappingError
	if !errors.As(err, &me) || me.ID != "clash.get_sum@1.0.0" || len(me.Tools) != 2 {
		t.Fatalf("Check: %v", err)
	}
	if !strings.Contains(err.Error(), `"get-sum" and "get_sum"`) {
		t.Errorf("error does not name both tools: %v", err)
	}
	ts := serve(t, s)
	for _, r := range []*reply{
		do(t, http.MethodGet, ts.URL+"/tools", nil, nil),
		call(t, ts, map[string]any{"tool_id": "clash.get_sum"}, nil),
	} {
		wantStatus(t, r, 500)
		if dev, _ := r.body["developer_message"].(string); !strings.Contains(dev, "same OTC id") {
			t.Errorf("500 body %s", r.raw)
		}
	}
	// Removing one tool resolves it.
	s.RemoveTool("get_sum")
	if err := h.Check(context.Background()); err != nil {
		t.Errorf("after removal: %v", err)
	}
}

// fakeBackend answers from fixed values, for the failure paths a real
// server rarely takes.
type fakeBackend struct {
	tools []*mcp.Tool
	res   *mcp.CallToolResult
	err   error
}

func (f *fakeBackend) ListTools(context.Context) ([]*mcp.Tool, error) { return f.tools, nil }
func (f *fakeBackend) CallTool(context.Context, string, json.RawMessage) (*mcp.CallToolResult, error) {
	return f.res, f.err
}

func TestBackendFailures(t *testing.T) {
	tool := &mcp.Tool{Name: "x.y", InputSchema: json.RawMessage(`{"type":"object"}`)}
	for name, tc := range map[string]struct {
		err     error
		status  int
		message string
	}{
		"unreachable":    {errors.New("connection reset"), 502, "could not be reached"},
		"unknown tool":   {jsonrpc.NewError(jsonrpc.CodeInvalidParams, "unknown tool: %q", "y"), 400, "unknown tool"},
		"internal error": {jsonrpc.NewError(jsonrpc.CodeInternalError, "output breaks schema"), 200, "the tool failed with an internal error"},
	} {
		h, err := otc.NewHandler(&fakeBackend{tools: []*mcp.Tool{tool}, err: tc.err})
		if err != nil {
			t.Fatal(err)
		}
		ts := newTestServer(t, h)
		r := call(t, ts, map[string]any{"tool_id": "x.y"}, nil)
		wantStatus(t, r, tc.status)
		msg, _ := r.body["message"].(string)
		if res, ok := r.body["result"].(map[string]any); ok {
			e := res["error"].(map[string]any)
			msg = e["message"].(string)
			if e["developer_message"] != "output breaks schema" || res["success"] != false {
				t.Errorf("%s: %s", name, r.raw)
			}
		}
		if !strings.Contains(msg, tc.message) {
			t.Errorf("%s: %s", name, r.raw)
		}
	}
}
