package mcp_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/toolwire/toolwire/mcp"
)

// TestResourceListPages: resources/list and resources/templates/list pages
// encode an empty page as [], and decoding requires the items array and
// each item's required members, naming what is missing.
func TestResourceListPages(t *testing.T) {
	type page interface {
		json.Marshaler
		json.Unmarshaler
	}
	for _, tc := range []struct {
		name   string
		page   func() page
		empty  string
		good   string
		errors map[string]string // input -> the error it must give
	}{{
		name:  "resources/list",
		page:  func() page { return new(mcp.ListResourcesResult) },
		empty: `{"resources":[]}`,
		good:  `{"resources":[{"uri":"a://x","name":"x"}],"nextCursor":"c"}`,
		errors: map[string]string{
			`{}`:                              `resources/list result: missing required field "resources"`,
			`{"resources":[null]}`:            `resources[0]: "uri" and "name" are required`,
			`{"resources":[{"uri":"a://x"}]}`: `resources[0]: "uri" and "name" are required`,
			`{"resources":[{"name":"x"}]}`:    `resources[0]: "uri" and "name" are required`,
		},
	}, {
		name:  "resources/templates/list",
		page:  func() page { return new(mcp.ListResourceTemplatesResult) },
		empty: `{"resourceTemplates":[]}`,
		good:  `{"resourceTemplates":[{"uriTemplate":"a://{x}","name":"x"}],"nextCursor":"c"}`,
		errors: map[string]string{
			`{}`: `resources/templates/list result: missing required field "resourceTemplates"`,
			`{"resourceTemplates":[{"uriTemplate":"a://{x}","name":"x"},{"name":"y"}]}`: `resourceTemplates[1]: "uriTemplate" and "name" are required`,
			`{"resourceTemplates":[{"uriTemplate":"a://{x}"}]}`:                         `resourceTemplates[0]: "uriTemplate" and "name" are required`,
		},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			if out, err := json.Marshal(tc.page()); err != nil || string(out) != tc.empty {
				t.Errorf("empty page: %s %v, want %s", out, err, tc.empty)
			}
			p := tc.page()
			if err := json.Unmarshal([]byte(tc.good), p); err != nil {
				t.Fatal(err)
			}
			out, _ := json.Marshal(p)
			assertSameJSON(t, []byte(tc.good), out)
			for in, want := range tc.errors {
				if err := json.Unmarshal([]byte(in), tc.page()); err == nil || err.Error() != want {
					t.Errorf("%s: error %v, want %s", in, err, want)
				}
			}
		})
	}
}

// TestBadElementIsNamed: a bad element of a result's array is refused with
// an error naming it by its index.
func TestBadElementIsNamed(t *testing.T) {
	for in, want := range map[string]struct {
		into   json.Unmarshaler
		prefix string
	}{
		`{"contents":[{"uri":"a://b","text":"t"},{"uri":"a://c"}]}`:                                                                  {new(mcp.ReadResourceResult), "contents[1]: "},
		`{"prompts":[{"name":"a"},{"title":"x"}]}`:                                                                                   {new(mcp.ListPromptsResult), "prompts[1]: "},
		`{"messages":[{"role":"user","content":{"type":"text","text":"a"}},{"role":"system","content":{"type":"text","text":"b"}}]}`: {new(mcp.GetPromptResult), "messages[1]: "},
	} {
		err := json.Unmarshal([]byte(in), want.into)
		if err == nil || !strings.HasPrefix(err.Error(), want.prefix) {
			t.Errorf("%s: error %v, want one starting %q", in, err, want.prefix)
		}
	}
}
