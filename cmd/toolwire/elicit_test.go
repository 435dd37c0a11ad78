package main

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/toolwire/toolwire/client"
	"github.com/toolwire/toolwire/jsonrpc"
	"github.com/toolwire/toolwire/mcp"
)

// scriptedConsole is a console over input, answering as a terminal.
func scriptedConsole(input string) (*console, *strings.Builder) {
	var out strings.Builder
	return newConsole(strings.NewReader(input), &out, func() bool { return true }), &out
}

func formParams(schema string) *mcp.ElicitParams {
	return &mcp.ElicitParams{Message: "Fill in", RequestedSchema: json.RawMessage(schema)}
}

func TestFormFields(t *testing.T) {
	for _, tc := range []struct {
		name, schema, input string
		want                map[string]any
		shown               []string
	}{
		{"enumNames by number", `{"type":"object","properties":{"s":{"type":"string","enum":["x","y"],"enumNames":["Ex","Why"]}},"required":["s"]}`,
			"3\n\n2\n", map[string]any{"s": "y"}, []string{"1) Ex", "2) Why", "choose a number from 1 to 2", "a value is required"}},
		{"enum value typed", `{"type":"object","properties":{"s":{"type":"string","enum":["x","y"]}}}`,
			"x\n", map[string]any{"s": "x"}, nil},
		{"optional skipped", `{"type":"object","properties":{"s":{"type":"string"},"n":{"type":"number","minimum":1.5}}}`,
			"\n1\n2.5\n", map[string]any{"n": 2.5}, []string{"[optional]", "must be at least 1.5"}},
		{"integer default", `{"type":"object","properties":{"n":{"type":"integer","default":3}}}`,
			"\n", map[string]any{"n": json.Number("3")}, []string{"[3]"}},
		{"boolean", `{"type":"object","properties":{"b":{"type":"boolean"}},"required":["b"]}`,
			"maybe\nno\n", map[string]any{"b": false}, []string{"y/n", "answer y or n"}},
		{"formats", `{"type":"object","properties":{"e":{"type":"string","format":"email"},"d":{"type":"string","format":"date"},"u":{"type":"string","format":"uri","maxLength":30}}}`,
			"nope\nada@example.com\n2026-13-01\n2026-12-01\n/relative\nhttps://example.com/a/very/long/path\nhttps://example.com\n",
			map[string]any{"e": "ada@example.com", "d": "2026-12-01", "u": "https://example.com"},
			[]string{`"nope" is not an email address`, "is not a date", "is not an absolute URI", "too long: at most 30 characters"}},
		{"multi-select enum with default", `{"type":"object","properties":{"m":{"type":"array","items":{"type":"string","enum":["a","b","c"]},"default":["b"],"minItems":1,"maxItems":2}}}`,
			"1,2,3\n9\n\n", map[string]any{"m": []any{"b"}}, []string{"choose at most 2", `"9" is not a choice`, "[b]"}},
		{"multi-select oneOf", `{"type":"object","properties":{"m":{"type":"array","items":{"oneOf":[{"const":"a","title":"A!"},{"const":"b","title":"B!"}]}}}}`,
			"2, 1, 2\n", map[string]any{"m": []any{"b", "a"}}, []string{"2) B!"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			con, out := scriptedConsole(tc.input)
			res, err := con.elicit(context.Background(), formParams(tc.schema))
			if err != nil {
				t.Fatal(err)
			}
			if res.Action != mcp.ActionAccept || !reflect.DeepEqual(res.Content, tc.want) {
				t.Errorf("got %s %#v, want accept %#v\n%s", res.Action, res.Content, tc.want, out)
			}
			for _, s := range tc.shown {
				if !strings.Contains(out.String(), s) {
					t.Errorf("output lacks %q:\n%s", s, out)
				}
			}
		})
	}
}

func TestFormOrderAndEscapes(t *testing.T) {
	schema := `{"type":"object","properties":{"zeta":{"type":"string"},"alpha":{"type":"string"}}}`
	con, out := scriptedConsole("z\n:cancel\n")
	res, err := con.elicit(context.Background(), formParams(schema))
	if err != nil || res.Action != mcp.ActionCancel || res.Content != nil {
		t.Fatalf("got %+v, %v", res, err)
	}
	if z, a := strings.Index(out.String(), "zeta"), strings.Index(out.String(), "alpha"); z < 0 || a < 0 || z > a {
		t.Errorf("fields not asked in the schema's order:\n%s", out)
	}
	con, _ = scriptedConsole(" :decline \n")
	if res, _ := con.elicit(context.Background(), formParams(schema)); res.Action != mcp.ActionDecline {
		t.Errorf(":decline gave %s", res.Action)
	}
}

// TestFormReadExactly: a requested schema is read as the wire is: one
// naming a property twice, or a property's member twice, is refused, not
// asked in one of its readings.
func TestFormReadExactly(t *testing.T) {
	for _, schema := range []string{
		`{"type":"object","properties":{"a":{"type":"string"},"a":{"type":"boolean"}}}`,
		`{"type":"object","properties":{"a":{"type":"string","default":"x","default":"y"}}}`,
		`{"type":"object","properties":{"a":{"type":"string"}},"properties":{}}`,
	} {
		if fields, err := parseForm(json.RawMessage(schema)); err == nil {
			t.Errorf("%s: read as %d fields", schema, len(fields))
		}
	}
	fields, err := parseForm(json.RawMessage(`{"type":"object","properties":{"b":{"type":"string"},"a":{"type":"integer","default":9007199254740993}}}`))
	if err != nil || len(fields) != 2 || fields[0].name != "b" || fields[1].name != "a" || fmt.Sprint(fields[1].def) != "9007199254740993" {
		t.Fatalf("fields %+v, %v", fields, err)
	}
}

func TestURLMode(t *testing.T) {
	p := &mcp.ElicitParams{Mode: mcp.ElicitURL, Message: "Log in", URL: "https://example.com/login", ElicitationID: "e1"}
	for input, want := range map[string]string{"x\na\n": mcp.ActionAccept, "d\n": mcp.ActionDecline, ":cancel\n": mcp.ActionCancel, "": mcp.ActionCancel} {
		con, out := scriptedConsole(input)
		res, err := con.elicit(context.Background(), p)
		if err != nil || res.Action != want || !strings.Contains(out.String(), "https://example.com/login") {
			t.Errorf("input %q: got %+v, %v, want %s\n%s", input, res, err, want, out)
		}
	}
}

// TestDeclineWhenNotTerminal: a server that asks anyway is declined, and
// told so on stderr; other requests pass through.
func TestDeclineWhenNotTerminal(t *testing.T) {
	var out strings.Builder
	con := newConsole(strings.NewReader(""), &out, func() bool { return false })
	if n := len(con.options()); n != 1 {
		t.Fatalf("%d options", n)
	}
	next := func(ctx context.Context, req *jsonrpc.Request) (any, error) { return "next", nil }
	h := con.declineMiddleware(next)
	res, err := h(context.Background(), &jsonrpc.Request{Method: mcp.MethodElicitationCreate})
	if er, ok := res.(*mcp.ElicitResult); err != nil || !ok || er.Action != mcp.ActionDecline {
		t.Fatalf("got %#v, %v", res, err)
	}
	if !strings.Contains(out.String(), "elicitation requested but stdin is not a terminal") {
		t.Errorf("stderr %q", out.String())
	}
	if res, _ := h(context.Background(), &jsonrpc.Request{Method: mcp.MethodPing}); res != "next" {
		t.Errorf("ping: %v", res)
	}
}

func TestFormatLog(t *testing.T) {
	for _, tc := range []struct {
		m    client.LogMessage
		want string
	}{
		{client.LogMessage{Level: "info", Logger: "db", Data: json.RawMessage(`{"msg":"connected","ms":3}`)}, "[info] db: connected"},
		{client.LogMessage{Level: "error", Data: json.RawMessage(`{ "a": [1, 2] }`)}, `[error] {"a":[1,2]}`},
		{client.LogMessage{Level: "debug", Logger: "x", Data: json.RawMessage(`"plain text"`)}, "[debug] x: plain text"},
		{client.LogMessage{Level: "notice", Data: json.RawMessage(`42`)}, "[notice] 42"},
		// A message naming "msg" twice, or spelling it "Msg", is shown as
		// it came, not as one of its readings.
		{client.LogMessage{Level: "info", Data: json.RawMessage(`{"msg":"ok","msg":"all clear"}`)}, `[info] {"msg":"ok","msg":"all clear"}`},
		{client.LogMessage{Level: "info", Data: json.RawMessage(`{"Msg":"all clear"}`)}, `[info] {"Msg":"all clear"}`},
	} {
		if got := formatLog(tc.m); got != tc.want {
			t.Errorf("formatLog(%s) = %q, want %q", tc.m.Data, got, tc.want)
		}
	}
}

func TestBlobFileName(t *testing.T) {
	for uri, want := range map[string]string{
		"file:///img/logo.png":   "logo.png",
		"images://logo.png":      "logo.png",
		"data://x/a%20b.bin":     "a_b.bin",
		"urn:isbn:0451450523":    "isbn_0451450523",
		"file:///":               "resource.png",
		"https://example.com/d/": "d",
	} {
		if got := blobFileName(uri, "image/png"); got != want {
			t.Errorf("blobFileName(%q) = %q, want %q", uri, got, want)
		}
	}
}
