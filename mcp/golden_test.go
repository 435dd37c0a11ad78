package mcp_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/toolwire/toolwire/internal/wirejson"
	"github.com/toolwire/toolwire/jsonrpc"
	"github.com/toolwire/toolwire/mcp"
	"github.com/toolwire/toolwire/schema"
)

// TestSeedGolden decodes every MCP JSON example of the seed documents
// (testdata/seeds, copied verbatim from them) into toolwire's types, with the
// strict decoder the wire is read with, and re-encodes it: the result must
// have the same members and values.
func TestSeedGolden(t *testing.T) {
	files, err := filepath.Glob("testdata/seeds/*.json")
	if err != nil || len(files) == 0 {
		t.Fatalf("no seed examples found: %v", err)
	}
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".json")
		t.Run(name, func(t *testing.T) {
			in, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			out := roundTrip(t, name, in)
			assertSameJSON(t, in, out)
		})
	}
}

func roundTrip(t *testing.T, name string, in []byte) []byte {
	t.Helper()
	switch {
	case strings.HasPrefix(name, "content-"):
		blocks, err := mcp.DecodeContent(in)
		if err != nil {
			t.Fatal(err)
		}
		return mustMarshal(t, blocks)
	case strings.HasPrefix(name, "result-"):
		var r mcp.CallToolResult
		if err := wirejson.Unmarshal(in, &r); err != nil {
			t.Fatal(err)
		}
		return mustMarshal(t, &r)
	case strings.HasPrefix(name, "tool-"):
		var tool mcp.Tool
		if err := wirejson.Unmarshal(in, &tool); err != nil {
			t.Fatal(err)
		}
		if _, err := schema.Compile(tool.InputSchema); err != nil {
			t.Fatalf("inputSchema does not compile: %v", err)
		}
		return mustMarshal(t, &tool)
	case strings.HasPrefix(name, "schema-"):
		s, err := schema.Compile(in)
		if err != nil {
			t.Fatal(err)
		}
		tool := mcp.Tool{Name: "x", InputSchema: json.RawMessage(`{"type":"object"}`), OutputSchema: s.Raw()}
		var back mcp.Tool
		if err := wirejson.Unmarshal(mustMarshal(t, &tool), &back); err != nil {
			t.Fatal(err)
		}
		return back.OutputSchema
	case strings.HasPrefix(name, "message-"):
		return roundTripMessage(t, in)
	}
	t.Fatalf("no decoder for %s", name)
	return nil
}

func roundTripMessage(t *testing.T, in []byte) []byte {
	t.Helper()
	msg, _, derr := jsonrpc.Decode(in)
	if derr != nil {
		t.Fatal(derr)
	}
	switch m := msg.(type) {
	case *jsonrpc.Request:
		var params any
		switch m.Method {
		case mcp.MethodCallTool:
			params = &mcp.CallToolParams{}
		case mcp.MethodListTools:
			params = &mcp.ListToolsParams{}
		default:
			t.Fatalf("unexpected method %s", m.Method)
		}
		if len(m.Params) > 0 {
			if err := wirejson.Unmarshal(m.Params, params); err != nil {
				t.Fatal(err)
			}
			m.Params = mustMarshal(t, params)
		}
	case *jsonrpc.Response:
		if m.Error == nil {
			var r mcp.CallToolResult
			if err := wirejson.Unmarshal(m.Result, &r); err != nil {
				t.Fatal(err)
			}
			m.Result = mustMarshal(t, &r)
		}
	}
	out, err := jsonrpc.Encode(msg)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func mustMarshal(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func assertSameJSON(t *testing.T, want, got []byte) {
	t.Helper()
	var w, g any
	if err := json.Unmarshal(want, &w); err != nil {
		t.Fatalf("want: %v", err)
	}
	if err := json.Unmarshal(got, &g); err != nil {
		t.Fatalf("got: %v\n%s", err, got)
	}
	if d := cmp.Diff(w, g); d != "" {
		t.Errorf("re-encoded JSON differs (-want +got):\n%s\ngot: %s", d, got)
	}
}
