package daemon

import (
	"fmt"
	"strings"
	"testing"

	"github.com/toolwire/toolwire/gateway/config"
	"github.com/toolwire/toolwire/gateway/policy"
)

// configChanges names the upstreams, personas and API keys a reload adds,
// removes and changes, and never a key's hash.
func TestConfigChanges(t *testing.T) {
	k := func(s string) string { return policy.HashKey("twk_" + s) }
	parse := func(text string) *config.File {
		t.Helper()
		f, err := config.Parse([]byte(text), "g.yaml")
		if err != nil {
			t.Fatal(err)
		}
		return f
	}
	prev := parse(fmt.Sprintf(`
auth: {api_keys: {alice: %q, bob: %q, dave: %q}}
personas:
  p1: {identities: [alice], tools: {allow: [x]}}
  p2: {identities: [bob], tools: {allow: [x]}}
  p4: {anonymous: true}
upstreams:
  one: {url: "http://127.0.0.1:1/mcp"}
  two: {url: "http://127.0.0.1:2/mcp"}
  three: {url: "http://127.0.0.1:3/mcp"}
`, k("a"), k("b"), k("d")))
	next := parse(fmt.Sprintf(`
auth: {api_keys: {alice: %q, carol: %q, dave: %q}}
personas:
  p4: {anonymous: true}
  p2: {identities: [alice], tools: {allow: [x]}}
  p3: {identities: [carol]}
upstreams:
  one: {url: "http://127.0.0.1:1/mcp"}
  two: {url: "http://127.0.0.1:22/mcp"}
  four: {url: "http://127.0.0.1:4/mcp"}
`, k("a2"), k("c"), k("d")))
	got := fmt.Sprint(configChanges(prev, next))
	want := "[upstreams_added four upstreams_removed three upstreams_changed two personas_added p3 personas_removed p1 personas_changed p2 personas_order p4,p2,p3 api_keys_added carol api_keys_removed bob api_keys_changed alice]"
	if got != want {
		t.Errorf("configChanges:\n got %s\nwant %s", got, want)
	}
	for _, h := range []string{k("a"), k("a2"), k("b"), k("c")} {
		if strings.Contains(got, strings.TrimPrefix(h, "sha256:")) {
			t.Errorf("a key hash in %s", got)
		}
	}
	if got := configChanges(prev, prev); len(got) != 0 {
		t.Errorf("no change: %v", got)
	}
}
