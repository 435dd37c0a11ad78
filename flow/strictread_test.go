package flow

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/toolwire/toolwire/mcp"
)

// TestFromJSONReadsExactly: what a server sent reaches a flow as the strict
// reader sees it: a member name twice, invalid UTF-8 or data after the
// value is refused, not resolved by taking one of the readings.
func TestFromJSONReadsExactly(t *testing.T) {
	v, err := fromJSON([]byte(` {"n": 9007199254740993, "f": 1.5, "s": ["a"]} `))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[string]any{"n": int64(9007199254740993), "f": 1.5, "s": []any{"a"}}, v); diff != "" {
		t.Fatal(diff)
	}
	for in, want := range map[string]string{
		`{"n":1,"n":2}`:       `duplicate member name "n"`,
		`{"a":{"b":1,"b":2}}`: `duplicate member name "b"`,
		"{\"s\":\"\xff\"}":    "invalid UTF-8",
		`{"n":1} {"n":2}`:     "after top-level value",
		`{"n":1`:              "unexpected end of input",
	} {
		if _, err := fromJSON([]byte(in)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("fromJSON(%q) = %v, want an error saying %q", in, err, want)
		}
	}
	// A result whose structuredContent names a member twice gives the flow
	// no structuredContent rather than one of its readings.
	m := callValue(&mcp.CallToolResult{StructuredContent: json.RawMessage(`{"ok":false,"ok":true}`)}, false)
	if m["structuredContent"] != nil {
		t.Errorf("structuredContent %v, want nil", m["structuredContent"])
	}
}
