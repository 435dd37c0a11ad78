package config

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/toolwire/toolwire/gateway/enrich"
	"github.com/toolwire/toolwire/gateway/policy"
	"github.com/toolwire/toolwire/gateway/ratelimit"
	"github.com/toolwire/toolwire/oauth"
)

// builtOpts compare the objects Parse builds, which hide their state: two
// parses of a file build equivalent ones (or both none), and the same
// Authorizer (it is cached).
var builtOpts = cmp.Options{
	cmp.Comparer(func(a, b *policy.Policy) bool { return (a == nil) == (b == nil) }),
	cmp.Comparer(func(a, b *ratelimit.Limiter) bool { return (a == nil) == (b == nil) }),
	cmp.Comparer(func(a, b *enrich.Enricher) bool { return (a == nil) == (b == nil) }),
	cmp.Comparer(func(a, b *oauth.Authorizer) bool { return a == b }),
}

// fuzzSeeds cover the trust keys, hostile values included.
var fuzzSeeds = []string{
	"public_url: https://gw.example.com/mcp\nauth:\n  api_keys: {alice: \"" + hashAlice + "\"}\n  oauth: {issuer: https://i, scopes: [mcp]}\n",
	"auth:\n  api_keys: {alice: twk_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA}\n",
	"personas:\n  a:\n    identities: [alice, \"oauth:bob\", \"api_key:x\"]\n    claims: {role: x}\n    anonymous: true\n    tools: {allow: [\"*\"], deny: [\"a[\"]}\n",
	"personas:\n  a:\n    claims:\n      x: " + strings.Repeat("[", 200) + "\n",
	"personas:\n  a:\n    claims: " + strings.Repeat("{a: ", 200) + "\n",
	"personas:\n  a:\n    tools: {allow: [\"\xff\xfe\"]}\n    anonymous: true\n",
	"personas:\n  \xc3\x28: {anonymous: true}\n",
	"rate_limits:\n  identity: 1e308/s\n  persona: {rate: 10/s, burst: -5}\n  tool: 1/0s\n",
	"rate_limits:\n  identity: 99999999999999999999999/h\n  tools: {a: {rate: 1/s, burst: 99999999999999999999}}\n  max_buckets: -1\n",
	"rate_limits:\n  identity: 60/m\n  identities: {alice: 10/s, \"oauth:alice\": off, anonymous: 1/h}\n  idle_ttl: 1d\n",
	"audit:\n  store: postgres\n  postgres: \"${TOKEN}\"\n  delivery: async\n  queue_size: 99999999999\n  retention: 999999999d\n",
	"audit:\n  retention: 1d-5h\n  redact: [a, A, '']\n  max_value_bytes: off\n  fsync: false\n",
	"enrichment:\n  - name: a\n    tools: [\"*\"]\n    when: 'args.x ==== 1'\n    text: ['{{.args']\n",
	"enrichment:\n  - name: a\n    tools: [x]\n    links: [{uri: '{{.tool}}'}]\n    structured: {k: v}\n",
	"admin:\n  key_hash: \"" + hashAdmin + "\"\nadmin_listen: off\n",
	"upstreams:\n  w:\n    url: https://h/mcp\n    oauth: {client_id: a, client_secret: b, scopes: [x]}\n    header_files: {X-A: missing}\n",
	"upstreams:\n  w:\n    url: http://h/mcp\n    oauth: {client_id: a, client_secret: b}\n",
	"limits:\n  max_conns: 99999999999\n  memory: 1MiB\n  max_body: 2MiB\n  min_body_rate: off\n  body_grace: 1s\n",
	"limits:\n  sessions: {max: 1, per_caller: 2, idle_timeout: 1m, unused_timeout: 1h}\n  inputs: {pending: 0, timeout: 1d}\n  upstream_lists: {max_bytes: 1GiB, max_items: -1}\n",
}

// FuzzParse: Parse never panics, is deterministic, reports errors against
// the file's name, and what it accepts passes Validate.
func FuzzParse(f *testing.F) {
	lookup := WithLookupEnv(func(k string) (string, bool) {
		v, ok := map[string]string{"HOME": "/home/op", "EMPTY": "", "TOKEN": "t0k"}[k]
		return v, ok
	})
	for _, s := range fuzzSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		got, err := Parse(data, "f.yaml", lookup, WithBaseDir("/base"))
		again, err2 := Parse(data, "f.yaml", lookup, WithBaseDir("/base"))
		if (err == nil) != (err2 == nil) || err != nil && err.Error() != err2.Error() {
			t.Fatalf("not deterministic: %v / %v", err, err2)
		}
		if err != nil {
			if got != nil {
				t.Fatalf("a File with an error: %v", err)
			}
			if !strings.HasPrefix(err.Error(), "f.yaml:") {
				t.Fatalf("error without the file name: %v", err)
			}
			return
		}
		if diff := cmp.Diff(got, again, builtOpts); diff != "" {
			t.Fatalf("not deterministic:\n%s", diff)
		}
		if err := Validate(got); err != nil {
			t.Fatalf("Parse accepted what Validate refuses: %v\n%q", err, data)
		}
	})
}
