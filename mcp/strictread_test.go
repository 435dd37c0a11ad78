package mcp_test

import (
	"strings"
	"testing"

	"github.com/toolwire/toolwire/mcp"
)

// TestSamplingBlockReadExactly: a sampling block's "type" is read as the
// rest of the block is, so a block naming it twice, or spelling it "Type",
// is refused with the reason, not read as whichever type a lenient reader
// would pick.
func TestSamplingBlockReadExactly(t *testing.T) {
	for in, want := range map[string]string{
		`{"type":"text","text":"hi","type":"tool_use","id":"u1","name":"x","input":{}}`: `duplicate member name "type"`,
		`[{"type":"text","text":"a"},{"type":"tool_use","type":"text","text":"b"}]`:     `content[1]`,
		`{"Type":"text","text":"hi"}`: "case-sensitive",
	} {
		_, err := mcp.DecodeSamplingContent([]byte(in))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("DecodeSamplingContent(%s) = %v, want an error saying %q", in, err, want)
		}
	}
	if _, err := mcp.DecodeSamplingContent([]byte(`{"type":"tool_use","id":"u1","name":"x","input":{"a":1}}`)); err != nil {
		t.Errorf("a valid tool_use block: %v", err)
	}
}
