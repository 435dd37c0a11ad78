package config

import (
	"go/parser"
	"go/token"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/toolwire/toolwire/gateway"
	"github.com/toolwire/toolwire/gateway/policy"
	"github.com/toolwire/toolwire/gateway/ratelimit"
	"github.com/toolwire/toolwire/oauth"
)

// docExample is the example in the package comment, unindented.
func docExample(t *testing.T) string {
	t.Helper()
	fs := token.NewFileSet()
	file, err := parser.ParseFile(fs, "doc.go", nil, parser.ParseComments|parser.PackageClauseOnly)
	if err != nil {
		t.Fatal(err)
	}
	doc := file.Doc.Text()
	_, rest, ok := strings.Cut(doc, "An example, with every key")
	if !ok {
		t.Fatal("no example in the package comment")
	}
	_, rest, _ = strings.Cut(rest, "\n\n")
	var b strings.Builder
	for _, line := range strings.SplitAfter(rest, "\n") {
		if !strings.HasPrefix(line, "\t") {
			break
		}
		b.WriteString(strings.TrimPrefix(line, "\t"))
	}
	if b.Len() == 0 {
		t.Fatal("empty example")
	}
	return b.String()
}

const (
	hashAlice = "sha256:2dd7f9cfae4d6d0ec15d67da3f1152b5a7c3a68a8ae7a859aac365a5322422cc"
	hashCI    = "sha256:2130b7fa35085cf73cef349f2f903d23d661a89ffe627a547384c005af1417f9"
	hashAdmin = "sha256:93be90c0069c4d320658ab9325a5e8aa69adff773ae67b8f835a376cca914104"
)

// exampleEnv is what the doc example's variables are.
var exampleEnv = env(map[string]string{"HOME": "/home/op", "CRM_CLIENT_SECRET": "s3cret", "DATABASE_URL": "postgres://tw:pw@db/tw", "REDIS_URL": "redis://:pw@cache:6379/0"})

func TestDocExample(t *testing.T) {
	src := docExample(t)
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "secrets"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "secrets", "weather-auth"), []byte("Bearer w3ather\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := Parse([]byte(src), "gateway.yaml", exampleEnv, WithBaseDir(dir))
	if err != nil {
		t.Fatalf("the package comment's example: %v\n%s", err, src)
	}
	if err := Validate(f); err != nil {
		t.Errorf("Validate: %v", err)
	}
	// Every key the decoder knows is in the example.
	for _, keys := range [][]string{topKeys, upstreamKeys, upstreamOAuthKeys, authKeys, oauthKeys, personaKeys, rateLimitKeys, auditKeys, adminKeys, enrichKeys, linkKeys, redisKeys} {
		for _, k := range keys {
			if !strings.Contains(src, k+":") {
				t.Errorf("key %s is not in the example", k)
			}
		}
	}
	if f.PublicURL != "https://gw.example.com/mcp" {
		t.Errorf("PublicURL %q", f.PublicURL)
	}
	wantAuth := Auth{
		APIKeys: map[string]string{"alice": hashAlice, "ci-bot": hashCI},
		OAuth:   &OAuth{Issuer: "https://issuer.example.com", Audience: "https://gw.example.com/mcp", JWKSURL: "https://issuer.example.com/jwks.json", Scopes: []string{"mcp"}},
	}
	if diff := cmp.Diff(wantAuth, f.Auth); diff != "" {
		t.Errorf("Auth (-want +got):\n%s", diff)
	}
	wantAudit := Audit{Store: "postgres", Postgres: "postgres://tw:pw@db/tw", Async: true, QueueSize: 10000,
		Retention: 90 * 24 * time.Hour, Redact: []string{"password", "token", "secret", "authorization"}, MaxValueBytes: 1024,
		KeyFile: filepath.Join(dir, "secrets", "audit.key"), HeadLogInterval: time.Minute}
	if diff := cmp.Diff(wantAudit, f.Audit); diff != "" {
		t.Errorf("Audit (-want +got):\n%s", diff)
	}
	if f.Admin.KeyHash != hashAdmin {
		t.Errorf("Admin %+v", f.Admin)
	}
	ups := f.Gateway.Upstreams
	if len(ups) != 3 {
		t.Fatalf("%d upstreams", len(ups))
	}
	if want := (http.Header{"X-Tenant": {"ops"}, "Authorization": {"Bearer w3ather"}}); !cmp.Equal(want, ups[1].Header) {
		t.Errorf("weather headers %v", ups[1].Header)
	}
	if _, ok := ups[2].Auth.(*oauth.Authorizer); !ok || ups[0].Auth != nil || ups[1].Auth != nil {
		t.Errorf("Auth: %T %T %T", ups[0].Auth, ups[1].Auth, ups[2].Auth)
	}

	// The policy: personas in order.
	pol := f.Gateway.Policy
	if pol == nil {
		t.Fatal("no policy")
	}
	for _, c := range []struct {
		id   policy.Identity
		want string
	}{
		{policy.FromAPIKey("alice"), "analyst"},
		{policy.Identity{Name: "bob", Kind: policy.KindOAuth}, "analyst"},
		{policy.Identity{Name: "carol", Kind: policy.KindOAuth, Claims: map[string]any{"role": "analyst"}}, "analyst"},
		{policy.FromAPIKey("ci-bot"), "ci"},
		{policy.Identity{Name: "ci-bot", Kind: policy.KindOAuth}, ""},
		{policy.Anonymous(), "guest"},
	} {
		got, _ := pol.PersonaOf(c.id)
		if got != c.want {
			t.Errorf("PersonaOf(%v) = %q, want %q", c.id, got, c.want)
		}
	}
	ks, err := f.KeySet()
	if err != nil || ks.Len() != 2 {
		t.Errorf("KeySet: %v, %v", ks, err)
	}

	// The limits: alice 10/s (burst 10) whatever the default.
	lim, ok := f.Gateway.Limits.(*ratelimit.Limiter)
	if !ok {
		t.Fatalf("Limits is a %T", f.Gateway.Limits)
	}
	now := time.Now()
	for i := range 10 {
		if ok, _, which := lim.AllowAt(now, "api_key:alice", "", ""); !ok {
			t.Fatalf("call %d of alice refused by %s", i, which)
		}
	}
	if ok, _, which := lim.AllowAt(now, "api_key:alice", "", ""); ok || which != ratelimit.ScopeIdentity {
		t.Errorf("the 11th call of alice: %v %s", ok, which)
	}
	for range 100 { // exempt
		if ok, _, _ := lim.AllowAt(now, "api_key:ci-bot", "", ""); !ok {
			t.Fatal("ci-bot limited")
		}
	}
	if f.Gateway.Enrich == nil {
		t.Error("no enricher")
	}

	// Loading the same file again keeps the authorizer (a reload keeps
	// the upstream), and changing its secret does not.
	again, err := Parse([]byte(src), "gateway.yaml", exampleEnv, WithBaseDir(dir))
	if err != nil {
		t.Fatal(err)
	}
	if again.Gateway.Upstreams[2].Auth != ups[2].Auth {
		t.Error("a second load made another Authorizer")
	}
	other, err := Parse([]byte(src), "gateway.yaml", WithBaseDir(dir), env(map[string]string{"HOME": "/", "CRM_CLIENT_SECRET": "other", "DATABASE_URL": "x", "REDIS_URL": "redis://cache"}))
	if err != nil {
		t.Fatal(err)
	}
	if other.Gateway.Upstreams[2].Auth == ups[2].Auth {
		t.Error("another client secret kept the Authorizer")
	}
}

// trustDefaults are the File's trust fields when the file sets none.
func TestTrustDefaults(t *testing.T) {
	f, err := Parse([]byte("listen: 0.0.0.0:9000\n"), "g.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if f.PublicURL != "http://localhost:9000/mcp" {
		t.Errorf("PublicURL %q", f.PublicURL)
	}
	if f.Gateway.Policy != nil || f.Gateway.Limits != nil || f.Gateway.Enrich != nil {
		t.Errorf("trust objects without settings: %v %v %v", f.Gateway.Policy, f.Gateway.Limits, f.Gateway.Enrich)
	}
	if diff := cmp.Diff(defaultAudit(), f.Audit); diff != "" {
		t.Errorf("Audit (-want +got):\n%s", diff)
	}
	if ks, err := f.KeySet(); ks != nil || err != nil {
		t.Errorf("KeySet without keys: %v, %v", ks, err)
	}
	for listen, want := range map[string]string{"127.0.0.1:1": "http://127.0.0.1:1/mcp", ":2": "http://localhost:2/mcp", "[::]:3": "http://localhost:3/mcp", "[::1]:4": "http://[::1]:4/mcp", "gw.local:5": "http://gw.local:5/mcp"} {
		if got := defaultPublicURL(listen); got != want {
			t.Errorf("defaultPublicURL(%q) = %q, want %q", listen, got, want)
		}
	}
	// An empty personas: is a policy that denies everyone; rate limits
	// that are all off build no limiter.
	f, err = Parse([]byte("personas:\nrate_limits:\n  identity: off\n  tools: {a: off}\naudit:\n  redact: []\n  retention: off\n  max_value_bytes: off\n"), "g.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if f.Gateway.Policy == nil {
		t.Error("personas: with no persona: no policy")
	} else if _, ok := f.Gateway.Policy.PersonaOf(policy.FromAPIKey("x")); ok {
		t.Error("an empty policy matched")
	}
	if f.Gateway.Limits != nil {
		t.Errorf("Limits %v, want a nil interface", f.Gateway.Limits)
	}
	if f.Audit.Redact == nil || len(f.Audit.Redact) != 0 || f.Audit.Retention != 0 || f.Audit.MaxValueBytes != -1 {
		t.Errorf("Audit %+v", f.Audit)
	}
}

// trustHead is a valid start of a file for the trust error cases.
const trustHead = "upstreams:\n  files:\n    command: [srv]\nauth:\n  api_keys:\n    alice: \"" + hashAlice + "\"\n"

func TestTrustErrors(t *testing.T) {
	rawKey := "twk_" + strings.Repeat("A", 43)
	for _, c := range []struct{ src, want string }{
		// public_url
		{"public_url: ftp://x/\n", `g.yaml:1:13: public_url: "ftp://x/": want an http or https URL`},
		{"public_url: https://u:p@gw/mcp\n", `g.yaml:1:13: public_url: "https://u:p@gw/mcp" has user information`},
		{"public_url: [x]\n", `g.yaml:1:13: public_url: want a string, not a list`},
		// auth
		{"auth:\n  api_key: {}\n", `g.yaml:2:3: unknown key "api_key" in auth (did you mean "api_keys"?)`},
		{"auth:\n  api_keys:\n    alice: " + rawKey + "\n", "g.yaml:3:12: auth: api_keys: alice: is an API key in clear, not its hash: configure what `toolwire gateway hash-key` prints for it, and keep the key itself out of the file"},
		{"auth:\n  api_keys:\n    alice: sha256:abc\n", `g.yaml:3:12: auth: api_keys: alice: is not a key hash: it has 3 hex digits after "sha256:", want 64`},
		{"auth:\n  api_keys:\n    alice: md5:abc\n", `g.yaml:3:12: auth: api_keys: alice: is not a key hash: it does not start with "sha256:"`},
		{"auth:\n  api_keys:\n    alice: \"" + strings.ToUpper(hashAlice) + "\"\n", `g.yaml:3:12: auth: api_keys: alice: is not a key hash: it does not start with "sha256:"`},
		{"auth:\n  api_keys:\n    Alice: \"" + hashAlice + "\"\n", `g.yaml:3:5: auth: api_keys: "Alice": a name is 1 to 64 of a-z 0-9 _ . -`},
		{"auth:\n  api_keys:\n    a: \"" + hashAlice + "\"\n    b: \"" + hashAlice + "\"\n", `g.yaml:4:8: auth: api_keys: b: the same hash as the key at 3:5 (each key is its own)`},
		{"auth:\n  api_keys: [x]\n", `g.yaml:2:13: auth: api_keys: want a mapping, not a list`},
		{"auth:\n  oauth:\n    audience: https://gw/mcp\n", `g.yaml:2:3: auth: oauth: no issuer (the authorization server whose tokens are accepted)`},
		{"auth:\n  oauth:\n    issuer: http://issuer.example\n", `g.yaml:3:13: auth: oauth: issuer: "http://issuer.example": want https (http only on a loopback host)`},
		{"auth:\n  oauth:\n    issuer: https://i\n    jwks_url: http://i/jwks\n", `g.yaml:4:15: auth: oauth: jwks_url: "http://i/jwks": want https (http only on a loopback host)`},
		{"auth:\n  oauth:\n    issuer: https://i\n    scopes: [mcp, 'a b', mcp]\n", "g.yaml:4:19: auth: oauth: scopes: \"a b\" is not a scope (printable ASCII, no space, \" or \\)\n" +
			`g.yaml:4:26: auth: oauth: scopes: "mcp" listed twice`},
		{"auth:\n  oauth:\n    issuer: https://i\n    audience: ''\n", `g.yaml:4:15: auth: oauth: audience: "": want an http or https URL`},
		{"auth:\n  oauth:\n    issuer: https://i\n    audience: api://gateway\n", `g.yaml:4:15: auth: oauth: audience: "api://gateway": want an http or https URL`},
		{"auth:\n  oauth:\n    issuer: https://i\n    isuer: x\n", `g.yaml:4:5: unknown key "isuer" in auth: oauth (did you mean "issuer"?)`},
		// personas
		{"personas:\n  Analyst:\n    anonymous: true\n", `g.yaml:2:3: persona "Analyst": a name is 1 to 64 of a-z 0-9 _ -`},
		{"personas:\n  a:\n", `g.yaml:2:3: persona "a": matches no caller (want identities, claims or anonymous: true)`},
		{"personas:\n  a:\n    anonymous: false\n    identities: []\n", `g.yaml:2:3: persona "a": matches no caller (want identities, claims or anonymous: true)`},
		{"personas:\n  a:\n    anonymous: yes\n", `g.yaml:3:16: persona "a": anonymous: "yes" is neither true nor false`},
		{"personas:\n  a:\n    anonymous: true\n    tool: {}\n", `g.yaml:4:5: unknown key "tool" in persona "a" (did you mean "tools"?)`},
		{trustHead + "personas:\n  a:\n    identities: [\"api_key:bob\"]\n", `g.yaml:9:18: persona "a": identities: "api_key:bob": no API key "bob" in auth: api_keys`},
		{"personas:\n  a:\n    identities: [\"saml:bob\", anonymous, '']\n", "g.yaml:3:18: persona \"a\": identities: \"saml:bob\": the kind \"saml\" is neither api_key nor oauth\n" +
			"g.yaml:3:30: persona \"a\": identities: anonymous is not an identity: write anonymous: true to give this persona to callers without credentials\n" +
			`g.yaml:3:41: persona "a": identities: empty identity`},
		{"personas:\n  a:\n    identities: [bob, bob]\n", `g.yaml:3:23: persona "a": identities: "bob" listed twice`},
		{"personas:\n  a:\n    identities: [\"oauth:\"]\n", `g.yaml:3:18: persona "a": identities: "oauth:": empty name after the kind`},
		{"personas:\n  a:\n    anonymous: true\n    tools:\n      allow: [\"files__[x]\"]\n", `g.yaml:5:15: persona "a": tools: allow: pattern "files__[x]": '[' at offset 7 is reserved (only * and ? are special)`},
		{"personas:\n  a:\n    anonymous: true\n    prompts: {deny: ['']}\n", `g.yaml:4:22: persona "a": prompts: deny: empty pattern`},
		{"personas:\n  a:\n    anonymous: true\n    resources: {allow: x}\n", `g.yaml:4:24: persona "a": resources: allow: want a list, not a string`},
		{"personas:\n  a:\n    anonymous: true\n    tools: {alow: [x]}\n", `g.yaml:4:13: unknown key "alow" in persona "a": tools (did you mean "allow"?)`},
		{"personas:\n  a:\n    claims: {role: {nested: x}}\n", `g.yaml:3:20: persona "a": claims: role: want a string, not a mapping`},
		{"personas:\n  a:\n    claims:\n      role:\n        - x\n", `g.yaml:5:9: persona "a": claims: role: want a string, not a list`},
		{"personas: [a]\n", `g.yaml:1:11: personas: want a mapping, not a list`},
		// rate_limits
		{"rate_limits:\n  identity: 10\n", `g.yaml:2:13: rate_limits: identity: rate "10": want calls per unit, like 10/s or 600/m`},
		{"rate_limits:\n  identity: 1/0s\n", `g.yaml:2:13: rate_limits: identity: rate "1/0s": unit "0s" is not s, m or h`},
		{"rate_limits:\n  identity: -1/s\n", `g.yaml:2:13: rate_limits: identity: rate "-1/s": "-1" is not a positive number`},
		{"rate_limits:\n  identity: 1e300/s\n", `g.yaml:2:13: rate_limits: identity: rate "1e300/s" is not from one call a day to 1e+06 a second`},
		{"rate_limits:\n  identity: 1/h\n  tool: 0.00001/s\n", `g.yaml:3:9: rate_limits: tool: rate "0.00001/s" is not from one call a day to 1e+06 a second`},
		{"rate_limits:\n  persona: {rate: 10/s, burst: -1}\n", `g.yaml:2:32: rate_limits: persona: burst: -1 is not from 1 to 1000000`},
		{"rate_limits:\n  persona: {rate: 10/s, burst: 0}\n", `g.yaml:2:32: rate_limits: persona: burst: 0 is not from 1 to 1000000`},
		{"rate_limits:\n  persona: {rate: 10/s, burst: 99999999999999999999}\n", `g.yaml:2:32: rate_limits: persona: burst: "99999999999999999999" is not a whole number`},
		{"rate_limits:\n  persona: {rate: 10/s, burst: 1.5}\n", `g.yaml:2:32: rate_limits: persona: burst: "1.5" is not a whole number`},
		{"rate_limits:\n  persona: {burst: 5}\n", `g.yaml:2:12: rate_limits: persona: no rate (like 60/m)`},
		{"rate_limits:\n  persona: {rate: off, burst: 5}\n", `g.yaml:2:19: rate_limits: persona: rate: off takes no burst (write rate_limits: persona: off)`},
		{"rate_limits:\n  persona: {rate: 1/s, brust: 5}\n", `g.yaml:2:24: unknown key "brust" in rate_limits: persona (did you mean "burst"?)`},
		{"rate_limits:\n  identy: 1/s\n", `g.yaml:2:3: unknown key "identy" in rate_limits (did you mean "identity"?)`},
		{trustHead + "rate_limits:\n  identities: {\"api_key:bob\": 1/s}\n", `g.yaml:8:16: rate_limits: identities: "api_key:bob": no API key "bob" in auth: api_keys`},
		{"rate_limits:\n  personas: {analyst: 1/s}\n", `g.yaml:2:14: rate_limits: personas: no persona "analyst"; no persona is configured`},
		{"personas:\n  b: {anonymous: true}\n  a: {anonymous: true}\nrate_limits:\n  personas: {analyst: 1/s}\n", `g.yaml:5:14: rate_limits: personas: no persona "analyst"; personas are a, b`},
		{"rate_limits:\n  tools: {\"a b\": 1/s}\n", `g.yaml:2:11: rate_limits: tools: "a b" is not a tool name (1 to 128 of A-Z a-z 0-9 _ - .)`},
		{"rate_limits:\n  max_buckets: 0\n", `g.yaml:2:16: rate_limits: max_buckets: 0 is not from 1 to 10000000`},
		{"rate_limits:\n  max_buckets: lots\n", `g.yaml:2:16: rate_limits: max_buckets: "lots" is not a whole number`},
		{"rate_limits:\n  idle_ttl: 8d\n", `g.yaml:2:13: rate_limits: idle_ttl: 192h0m0s is not more than zero and at most 7d`},
		{"rate_limits:\n  idle_ttl: soon\n", `g.yaml:2:13: rate_limits: idle_ttl: "soon" is not a duration (like 500ms, 30s, 36h or 90d)`},
		{"rate_limits: 10/s\n", `g.yaml:1:14: rate_limits: want a mapping, not a string`},
		// admin
		{"admin:\n  key_hash: " + rawKey + "\n", "g.yaml:2:13: admin: key_hash: is an API key in clear, not its hash: configure what `toolwire gateway hash-key` prints for it, and keep the key itself out of the file"},
		{trustHead + "admin:\n  key_hash: \"" + hashAlice + "\"\n", `g.yaml:8:13: admin: key_hash: the hash of API key "alice": the admin key must be a key of its own`},
		{"admin_listen: off\nadmin:\n  key_hash: \"" + hashAdmin + "\"\n", `g.yaml:3:13: admin: key_hash: the admin page is served on admin_listen, which is off`},
		{"admin:\n  keyhash: x\n", `g.yaml:2:3: unknown key "keyhash" in admin (did you mean "key_hash"?)`},
		{"adimn: {}\n", `g.yaml:1:1: unknown key "adimn" (did you mean "admin"?)`},
	} {
		if err := rejected(t, c.src, c.want); err != nil && strings.Contains(err.Error(), rawKey) {
			t.Errorf("%q: the error shows the key", c.src)
		}
	}
}

func TestRateLimits(t *testing.T) {
	src := trustHead + `personas:
  analyst: {identities: [alice]}
rate_limits:
  identity: 60/m
  persona: {rate: 600/m, burst: 3}
  tool: 100/s
  identities: {alice: 2/s, "oauth:alice": off, anonymous: 1/h, bob: 3/h}
  personas: {analyst: off}
  tools: {slow: 1/m}
  max_buckets: 5000
  idle_ttl: 1d2h
`
	d := &decoder{name: "g.yaml", opts: newOptions(nil)}
	f := d.decode([]byte(src))
	if err := d.err(); err != nil {
		t.Fatal(err)
	}
	want := &ratelimit.Config{
		Identity: ratelimit.Limit{Rate: 1, Burst: 1},
		Persona:  ratelimit.Limit{Rate: 10, Burst: 3},
		Tool:     ratelimit.Limit{Rate: 100, Burst: 100},
		Identities: map[string]ratelimit.Limit{
			"api_key:alice": {Rate: 2, Burst: 2},
			"oauth:alice":   {},
			"anonymous":     {Rate: 1.0 / 3600, Burst: 1},
			"api_key:bob":   {Rate: 3.0 / 3600, Burst: 1},
			"oauth:bob":     {Rate: 3.0 / 3600, Burst: 1},
		},
		Personas:   map[string]ratelimit.Limit{"analyst": {}},
		Tools:      map[string]ratelimit.Limit{"slow": {Rate: 1.0 / 60, Burst: 1}},
		MaxBuckets: 5000,
		IdleTTL:    26 * time.Hour,
	}
	if diff := cmp.Diff(want, d.limits); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if _, ok := f.Gateway.Limits.(*ratelimit.Limiter); !ok {
		t.Errorf("Limits is a %T", f.Gateway.Limits)
	}
	for s, want := range map[string]int{"1/s": 1, "60/m": 1, "61/m": 2, "100/s": 100, "0.5/s": 1, "1e6/s": MaxBurst, "1/h": 1} {
		r, err := ratelimit.ParseRate(s)
		if err != nil {
			t.Fatal(err)
		}
		if got := defaultBurst(r); got != want {
			t.Errorf("defaultBurst(%s) = %d, want %d", s, got, want)
		}
	}
}

func TestOptionIdiom(t *testing.T) {
	// nil options are ignored, a nil lookup is the default, a later
	// option wins.
	t.Setenv("TW_CONFIG_TEST", "from-env")
	f, err := Parse([]byte("data_dir: ${TW_CONFIG_TEST}\n"), "g.yaml", nil, WithLookupEnv(nil), nil, WithBaseDir("/a"), WithBaseDir("/b"))
	if err != nil {
		t.Fatal(err)
	}
	if f.DataDir != "/b/from-env" {
		t.Errorf("DataDir %q", f.DataDir)
	}
	if _, err := Parse([]byte("# 12345\n"), "g.yaml", WithReadLimits(ReadLimits{MaxFileBytes: 1}), nil); err == nil {
		t.Error("WithReadLimits before a nil option was lost")
	}
}

func TestValidateTrust(t *testing.T) {
	base := func() *File {
		return &File{Listen: DefaultListen, AdminListen: DefaultAdminListen, DataDir: "d", LogFormat: "text",
			Gateway: gateway.Config{Naming: gateway.Naming{Separator: "__"}}}
	}
	// The zero trust settings are valid: a File built in a program.
	if err := Validate(base()); err != nil {
		t.Fatal(err)
	}
	bad := base()
	bad.AdminListen = ""
	bad.PublicURL = "gw/mcp"
	bad.Auth = Auth{
		APIKeys: map[string]string{"a": hashAlice, "b": hashAlice, "C": "twk_" + strings.Repeat("A", 43)},
		OAuth:   &OAuth{Issuer: "http://i", JWKSURL: "ftp://j", Scopes: []string{"a b"}},
	}
	bad.Audit = Audit{Store: "mysql", Postgres: "x", QueueSize: 5, Retention: -1, Redact: []string{"a", "A", ""}, MaxValueBytes: 2 << 30}
	bad.Admin.KeyHash = hashAlice
	bad.Gateway.Upstreams = []gateway.Upstream{{Name: "s", Command: []string{"x"}, Auth: &oauth.Authorizer{}}}
	want := strings.Join([]string{
		`public_url: "gw/mcp": want an http or https URL`,
		`auth: api_keys: "C": a name is 1 to 64 of a-z 0-9 _ . -`,
		"auth: api_keys: C: is an API key in clear, not its hash: configure what `toolwire gateway hash-key` prints for it, and keep the key itself out of the file",
		`auth: api_keys: b: the same hash as a`,
		`auth: oauth: issuer: "http://i": want https (http only on a loopback host)`,
		`auth: oauth: jwks_url: "ftp://j": want an http or https URL`,
		`auth: oauth: scopes: "a b" is not a scope (printable ASCII, no space, " or \)`,
		`audit: store: "mysql" is not sqlite, postgres or off`,
		`audit: postgres applies to store: postgres only`,
		`audit: queue_size applies to delivery: async only`,
		`audit: retention: -1ns is not from 0 (forever) to 36500d`,
		`audit: redact: "A" listed twice`,
		`audit: redact: an empty name`,
		`audit: max_value_bytes: 2GiB is more than 1GiB`,
		`admin: key_hash: the hash of API key "a": the admin key must be a key of its own`,
		`admin: key_hash: the admin page is served on admin_listen, which is off`,
		`upstream "s": auth applies to url upstreams only`,
	}, "\n")
	if err := Validate(bad); err == nil || err.Error() != want {
		t.Errorf("Validate:\n%v\nwant\n%s", err, want)
	}
}

// Deep nesting is refused before the parser, whose time is quadratic in
// it, sees it.
func TestNesting(t *testing.T) {
	ok := "personas:\n  a:\n    identities: [x]\n    claims: {r: x}\n    tools: {allow: [\"*\"]}\n"
	if _, err := Parse([]byte(ok), "g.yaml"); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ src, want string }{
		{"personas:\n  a:\n    claims:\n      x: " + strings.Repeat("[", 100000) + "\n", "g.yaml:4:74: nested deeper than 64 levels"},
		{"personas:\n  a:\n    claims: " + strings.Repeat("{a: ", 65) + "\n", "g.yaml:3:269: nested deeper than 64 levels"},
		{"x: " + strings.Repeat("[", 64) + strings.Repeat("]", 64) + "\n", `g.yaml:1:1: unknown key "x"`},
	} {
		start := time.Now()
		_, err := Parse([]byte(c.src), "g.yaml")
		if err == nil || err.Error() != c.want {
			t.Errorf("%.40q...: %v, want %s", c.src, err, c.want)
		}
		if d := time.Since(start); d > 5*time.Second {
			t.Errorf("%.40q...: %v", c.src, d)
		}
	}
}

// File.Personas keeps the personas as decoded, in file order, for a
// reload to say which changed; nil without the key.
func TestPersonasKept(t *testing.T) {
	f, err := Parse([]byte("personas:\n  b:\n    anonymous: true\n    tools: {allow: [x]}\n  a:\n    identities: [alice, \"oauth:u:1\"]\n"), "g.yaml")
	if err != nil {
		t.Fatal(err)
	}
	want := []policy.Persona{
		{Name: "b", Match: policy.Match{Anonymous: true}, Tools: policy.Rules{Allow: []string{"x"}}},
		{Name: "a", Match: policy.Match{Identities: []string{"alice", "oauth:u:1"}}},
	}
	if diff := cmp.Diff(want, f.Personas); diff != "" {
		t.Errorf("Personas (-want +got):\n%s", diff)
	}
	if f, err := Parse([]byte("upstreams: {}\n"), "g.yaml"); err != nil || f.Personas != nil {
		t.Errorf("without personas: %v, %v", f.Personas, err)
	}
}
