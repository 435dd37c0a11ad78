package config

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/goccy/go-yaml/ast"

	"github.com/toolwire/toolwire/gateway/enrich"
	"github.com/toolwire/toolwire/gateway/policy"
	"github.com/toolwire/toolwire/gateway/ratelimit"
	"github.com/toolwire/toolwire/internal/units"
	"github.com/toolwire/toolwire/internal/yamlsrc"
)

// Limits of the trust settings.
const (
	// MaxRate is the highest rate limit, in calls per second.
	MaxRate = 1e6
	// MinRate is the lowest rate limit, in calls per second: one a day.
	MinRate = 1.0 / (24 * 60 * 60)
	// MaxBurst is the largest burst of a rate limit.
	MaxBurst = 1_000_000
	// MaxBuckets is the largest rate_limits.max_buckets.
	MaxBuckets = 10_000_000
	// MaxPersonas is the most personas a file may configure.
	MaxPersonas = 1024
	// MaxAPIKeys is the most API keys a file may configure.
	MaxAPIKeys = 10_000
)

// trustState is what the trust settings' decoding passes on, and what
// tests look at.
type trustState struct {
	personaNames map[string]bool
	limits       *ratelimit.Config // nil: no rate_limits
	enrichRules  []enrich.Rule
}

// trust decodes the trust settings, after the listeners and upstreams,
// from the values of the top-level keys in top (an absent key: nil).
func (d *decoder) trust(top map[string]ast.Node, f *File) {
	d.publicURL(top["public_url"], f)
	d.auth(top["auth"], f)
	if n := top["personas"]; n != nil {
		f.Gateway.Policy = d.personas(n, f)
	}
	d.rateLimits(top["rate_limits"], f)
	d.audit(top["audit"], f)
	d.enrichment(top["enrichment"], f)
	d.admin(top["admin"], f)
}

// fields calls do for each entry of a mapping whose key is one of known
// and reports the others as unknown; where names the mapping in the
// unknown key's message ("audit").
func (d *decoder) fields(m *ast.MappingNode, where string, known []string, do func(key string, mv *ast.MappingValueNode)) {
	if m == nil {
		return
	}
	for _, mv := range m.Values {
		key, ok := d.Key(mv.Key)
		if !ok {
			continue
		}
		found := false
		for _, k := range known {
			found = found || k == key
		}
		if !found {
			d.Unknown(mv.Key, key, where, known...)
			continue
		}
		do(key, mv)
	}
}

// checked decodes n as a string into *to, as str does, and reports what
// check finds wrong with it ("what: error"). The value is stored even
// then, so that later checks see what the file says. It returns whether n
// was a string that check accepted.
func (d *decoder) checked(n ast.Node, what string, check func(string) error, to *string) bool {
	s, ok := d.str(n, what)
	if !ok {
		return false
	}
	*to = s
	if err := check(s); err != nil {
		d.Errorf(n, "%s: %v", what, err)
		return false
	}
	return true
}

// repeated records n in seen as where key first stands, unless key is
// there already: then it returns the line and column of that first place,
// for a message that names where a name now repeated was first given.
func repeated(seen map[string]ast.Node, key string, n ast.Node) (line, col int, dup bool) {
	if prev, ok := seen[key]; ok {
		line, col = yamlsrc.Position(prev)
		return line, col, true
	}
	seen[key] = n
	return 0, 0, false
}

// built is what build makes of a section decoded since before (the
// decoder's count of problems then) without a problem; false after a
// problem, or when build fails. The decoding checks what build does, so
// its error is a backstop, reported at n as "what: error".
func built[T any](d *decoder, before int, n ast.Node, what string, build func() (T, error)) (T, bool) {
	var zero T
	if d.Count() > before {
		return zero, false
	}
	v, err := build()
	if err != nil {
		d.Errorf(n, "%s: %v", what, err)
		return zero, false
	}
	return v, true
}

// section decodes a mapping of known keys, as fields does, where names it
// in messages; n that is no mapping is reported and reads as empty.
func (d *decoder) section(n ast.Node, where string, known []string, do func(key string, mv *ast.MappingValueNode)) {
	m, _ := d.Mapping(n, where)
	d.fields(m, where, known, do)
}

// stringMap decodes a mapping of strings (an upstream's env, an enrichment
// rule's structured): each is passed to each, with s and ok as str read
// the value, and kept when ok. Null or an empty mapping, and n that is no
// mapping, are nil.
func (d *decoder) stringMap(n ast.Node, what string, each func(k string, mv *ast.MappingValueNode, s string, ok bool)) map[string]string {
	m, ok := d.Mapping(n, what)
	if !ok || m == nil {
		return nil
	}
	out := map[string]string{}
	for _, mv := range m.Values {
		k, ok := d.Key(mv.Key)
		if !ok {
			continue
		}
		s, ok := d.str(mv.Value, what+": "+k)
		each(k, mv, s, ok)
		if ok {
			out[k] = s
		}
	}
	return out
}

// duration is a duration (units.ParseDuration) that check, when given,
// accepts; what it refuses is reported at n. With orOff the word off is
// read too, as off true.
func (d *decoder) duration(n ast.Node, what string, orOff bool, check func(time.Duration) error) (t time.Duration, off, ok bool) {
	s, ok := d.str(n, what)
	if !ok {
		return 0, false, false
	}
	if orOff && s == "off" {
		return 0, true, true
	}
	t, err := units.ParseDuration(s)
	if err == nil && check != nil {
		err = check(t)
	}
	if err != nil {
		d.Errorf(n, "%s: %v", what, err)
		return 0, false, false
	}
	return t, false, true
}

// boolean is a YAML true or false (or a string that expands to one).
func (d *decoder) boolean(n ast.Node, what string) (bool, bool) {
	if b, ok := n.(*ast.BoolNode); ok {
		return b.Value, true
	}
	s, ok := d.str(n, what)
	if !ok {
		return false, false
	}
	switch s {
	case "true":
		return true, true
	case "false":
		return false, true
	}
	d.Errorf(n, "%s: %q is neither true nor false", what, s)
	return false, false
}

// integer is a decimal integer from lo to hi.
func (d *decoder) integer(n ast.Node, what string, lo, hi int64) (int64, bool) {
	s, ok := d.str(n, what)
	if !ok {
		return 0, false
	}
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		d.Errorf(n, "%s: %q is not a whole number", what, truncate(s))
		return 0, false
	}
	if v < lo || v > hi {
		d.Errorf(n, "%s: %d is not from %d to %d", what, v, lo, hi)
		return 0, false
	}
	return v, true
}

// strList is a list of strings; null is an empty list (nil).
func (d *decoder) strList(n ast.Node, what string) ([]string, []ast.Node, bool) {
	items, ok := d.List(n, what)
	if !ok {
		return nil, nil, false
	}
	var out []string
	var nodes []ast.Node
	all := true
	for _, it := range items {
		s, ok := d.str(it, what)
		if !ok {
			all = false
			continue
		}
		out = append(out, s)
		nodes = append(nodes, it)
	}
	return out, nodes, all
}

// truncate shortens s for an error message.
func truncate(s string) string {
	if len(s) > 80 {
		return s[:80] + "..."
	}
	return s
}

// publicURL decodes public_url, or makes the default from listen.
func (d *decoder) publicURL(n ast.Node, f *File) {
	if n == nil {
		f.PublicURL = defaultPublicURL(f.Listen)
		return
	}
	s, ok := d.str(n, "public_url")
	if !ok {
		return
	}
	if err := checkPublicURL(s); err != nil {
		d.Errorf(n, "public_url: %v", err)
	}
	f.PublicURL = s
}

// defaultPublicURL is http://<listen>/mcp, with localhost for a listener
// on every interface.
func defaultPublicURL(listen string) string {
	host, port, err := net.SplitHostPort(listen)
	if err != nil {
		return ""
	}
	if ip := net.ParseIP(host); host == "" || ip != nil && ip.IsUnspecified() {
		host = "localhost"
	}
	return "http://" + net.JoinHostPort(host, port) + "/mcp"
}

func checkPublicURL(s string) error {
	if err := checkURL(s); err != nil {
		return err
	}
	if u, _ := url.Parse(s); u.User != nil {
		return fmt.Errorf("%q has user information", s)
	}
	return nil
}

// checkSecureURL accepts https URLs, and http ones on a loopback host.
func checkSecureURL(s string) error {
	if err := checkURL(s); err != nil {
		return err
	}
	u, _ := url.Parse(s)
	if u.Scheme == "http" && !isLoopback(u.Hostname()) {
		return fmt.Errorf("%q: want https (http only on a loopback host)", s)
	}
	return nil
}

func isLoopback(host string) bool {
	if strings.EqualFold(host, "localhost") || strings.HasSuffix(strings.ToLower(host), ".localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

var authKeys = []string{"api_keys", "oauth"}

func (d *decoder) auth(n ast.Node, f *File) {
	d.section(n, "auth", authKeys, func(key string, mv *ast.MappingValueNode) {
		switch key {
		case "api_keys":
			f.Auth.APIKeys = d.apiKeys(mv.Value)
		case "oauth":
			f.Auth.OAuth = d.oauth(mv, f.PublicURL)
		}
	})
}

// checkKeyName: API key names appear in personas, rate limits and the
// audit trail.
func checkKeyName(s string) error {
	ok := len(s) >= 1 && len(s) <= 64
	for i := 0; ok && i < len(s); i++ {
		c := s[i]
		ok = 'a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '_' || c == '.' || c == '-'
	}
	if !ok {
		return fmt.Errorf("%q: a name is 1 to 64 of a-z 0-9 _ . -", truncate(s))
	}
	return nil
}

// checkKeyHash checks a configured hash without ever echoing it: it may
// be a key pasted by mistake.
func checkKeyHash(h string) error {
	if policy.IsKeyFormat(h) || strings.HasPrefix(h, policy.KeyPrefix) {
		return errors.New("is an API key in clear, not its hash: configure what `toolwire gateway hash-key` prints for it, and keep the key itself out of the file")
	}
	if _, err := policy.NewKeySet(map[string]string{"k": h}); err != nil {
		_, msg, _ := strings.Cut(err.Error(), ": hash ")
		return fmt.Errorf("is not a key hash: it %s", msg)
	}
	return nil
}

func (d *decoder) apiKeys(n ast.Node) map[string]string {
	m, ok := d.Mapping(n, "auth: api_keys")
	if !ok || m == nil {
		return nil
	}
	keys := map[string]string{}
	byHash := map[string]ast.Node{}
	for mv, name := range d.entries(m, MaxAPIKeys, fmt.Sprintf("auth: api_keys: more than %d keys", MaxAPIKeys)) {
		if err := checkKeyName(name); err != nil {
			d.Errorf(mv.Key, "auth: api_keys: %v", err)
		}
		h, ok := d.str(mv.Value, "auth: api_keys: "+name)
		if !ok {
			continue
		}
		if err := checkKeyHash(h); err != nil {
			d.Errorf(mv.Value, "auth: api_keys: %s: %v", name, err)
			continue
		}
		if prev, dup := byHash[h]; dup {
			l, c := yamlsrc.Position(prev)
			d.Errorf(mv.Value, "auth: api_keys: %s: the same hash as the key at %d:%d (each key is its own)", name, l, c)
		}
		byHash[h] = mv.Key
		keys[name] = h
	}
	return keys
}

var oauthKeys = []string{"issuer", "audience", "jwks_url", "scopes"}

func (d *decoder) oauth(entry *ast.MappingValueNode, publicURL string) *OAuth {
	m, ok := d.Mapping(entry.Value, "auth: oauth")
	if !ok {
		return nil
	}
	o := &OAuth{Audience: publicURL}
	d.fields(m, "auth: oauth", oauthKeys, func(key string, mv *ast.MappingValueNode) {
		what := "auth: oauth: " + key
		v := mv.Value
		switch key {
		case "issuer", "jwks_url":
			s, ok := d.str(v, what)
			if !ok {
				return
			}
			if err := checkSecureURL(s); err != nil {
				d.Errorf(v, "%s: %v", what, err)
			}
			if key == "issuer" {
				o.Issuer = s
			} else {
				o.JWKSURL = s
			}
		case "audience":
			// The resource's canonical URL (RFC 8707, MCP authorization),
			// also what the Protected Resource Metadata names.
			d.checked(v, what, checkPublicURL, &o.Audience)
		case "scopes":
			o.Scopes = d.scopes(v, what)
		}
	})
	if o.Issuer == "" && !d.has(m, "issuer") {
		d.Errorf(entry.Key, "auth: oauth: no issuer (the authorization server whose tokens are accepted)")
	}
	return o
}

// settings is n as the mapping of one entry's settings (an upstream, a
// rule): nil when it is no mapping, reported by Mapping, or when it is
// empty, reported at key as "what: empty" (empty saying what it should
// hold).
func (d *decoder) settings(n, key ast.Node, what, empty string) *ast.MappingNode {
	m, ok := d.Mapping(n, what)
	if ok && m == nil {
		d.Errorf(key, "%s: %s", what, empty)
	}
	return m
}

// has reports whether m has key (written, valid or not).
func (d *decoder) has(m *ast.MappingNode, key string) bool {
	if m == nil {
		return false
	}
	for _, mv := range m.Values {
		if k, ok := yamlsrc.KeyText(mv.Key); ok && k == key {
			return true
		}
	}
	return false
}

// scopes are OAuth scope tokens (RFC 6749 section 3.3), each once.
func (d *decoder) scopes(n ast.Node, what string) []string {
	list, nodes, _ := d.strList(n, what)
	seen := map[string]bool{}
	var out []string
	for i, s := range list {
		if err := checkScope(s); err != nil {
			d.Errorf(nodes[i], "%s: %v", what, err)
			continue
		}
		if seen[s] {
			d.Errorf(nodes[i], "%s: %q listed twice", what, s)
			continue
		}
		seen[s] = true
		out = append(out, s)
	}
	return out
}

func checkScope(s string) error {
	ok := s != ""
	for i := 0; ok && i < len(s); i++ {
		c := s[i]
		ok = c == 0x21 || 0x23 <= c && c <= 0x5b || 0x5d <= c && c <= 0x7e
	}
	if !ok {
		return fmt.Errorf("%q is not a scope (printable ASCII, no space, \" or \\)", truncate(s))
	}
	return nil
}

// checkPersonaName: persona names appear in rate limits and the audit
// trail.
func checkPersonaName(s string) error {
	ok := len(s) >= 1 && len(s) <= 64
	for i := 0; ok && i < len(s); i++ {
		c := s[i]
		ok = 'a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '_' || c == '-'
	}
	if !ok {
		return fmt.Errorf("%q: a name is 1 to 64 of a-z 0-9 _ -", truncate(s))
	}
	return nil
}

var personaKeys = []string{"identities", "claims", "anonymous", "tools", "prompts", "resources"}

// personas decodes the personas, in file order, and builds the policy;
// nil after an error.
func (d *decoder) personas(n ast.Node, f *File) *policy.Policy {
	before := d.Count()
	m, ok := d.Mapping(n, "personas")
	if !ok {
		return nil
	}
	var list []policy.Persona
	if m != nil {
		for mv, name := range d.entries(m, MaxPersonas, fmt.Sprintf("more than %d personas", MaxPersonas)) {
			if err := checkPersonaName(name); err != nil {
				d.Errorf(mv.Key, "persona %v", err)
			}
			list = append(list, d.persona(mv, name, f.Auth.APIKeys))
		}
	}
	d.personaNames = map[string]bool{}
	for _, p := range list {
		d.personaNames[p.Name] = true
	}
	p, ok := built(d, before, n, "personas", func() (*policy.Policy, error) { return policy.New(list) })
	if !ok {
		return nil
	}
	f.Personas = list
	return p
}

func (d *decoder) persona(entry *ast.MappingValueNode, name string, apiKeys map[string]string) policy.Persona {
	p := policy.Persona{Name: name}
	what := fmt.Sprintf("persona %q", name)
	before := d.Count()
	m, ok := d.Mapping(entry.Value, what)
	if !ok {
		return p
	}
	d.fields(m, what, personaKeys, func(key string, mv *ast.MappingValueNode) {
		v := mv.Value
		w := what + ": " + key
		switch key {
		case "identities":
			list, nodes, _ := d.strList(v, w)
			seen := map[string]bool{}
			for i, id := range list {
				if err := checkIdentity(id, apiKeys); err != nil {
					d.Errorf(nodes[i], "%s: %v", w, err)
					continue
				}
				if seen[id] {
					d.Errorf(nodes[i], "%s: %q listed twice", w, id)
				}
				seen[id] = true
				p.Match.Identities = append(p.Match.Identities, id)
			}
		case "claims":
			cm, ok := d.Mapping(v, w)
			if !ok || cm == nil {
				return
			}
			p.Match.Claims = map[string]string{}
			for _, cv := range cm.Values {
				k, ok := d.Key(cv.Key)
				if !ok {
					continue
				}
				if k == "" {
					d.Errorf(cv.Key, "%s: empty claim name", w)
				}
				s, ok := d.str(cv.Value, w+": "+k)
				if ok {
					p.Match.Claims[k] = s
				}
			}
		case "anonymous":
			p.Match.Anonymous, _ = d.boolean(v, w)
		case "tools":
			p.Tools = d.rules(v, w)
		case "prompts":
			p.Prompts = d.rules(v, w)
		case "resources":
			p.Resources = d.rules(v, w)
		}
	})
	if len(p.Match.Identities) == 0 && len(p.Match.Claims) == 0 && !p.Match.Anonymous && d.Count() == before {
		d.Errorf(entry.Key, "%s: matches no caller (want identities, claims or anonymous: true)", what)
	}
	return p
}

// checkIdentity accepts a name, "api_key:NAME" with a configured key's
// NAME, or "oauth:SUBJECT".
func checkIdentity(id string, apiKeys map[string]string) error {
	kind, name, qualified := strings.Cut(id, ":")
	switch {
	case strings.TrimSpace(id) == "":
		return errors.New("empty identity")
	case id == string(policy.KindAnonymous):
		return errors.New("anonymous is not an identity: write anonymous: true to give this persona to callers without credentials")
	case !qualified:
		return nil
	case kind != string(policy.KindAPIKey) && kind != string(policy.KindOAuth):
		return fmt.Errorf("%q: the kind %q is neither api_key nor oauth", truncate(id), truncate(kind))
	case name == "":
		return fmt.Errorf("%q: empty name after the kind", id)
	case kind == string(policy.KindAPIKey):
		if _, ok := apiKeys[name]; !ok {
			return fmt.Errorf("%q: no API key %q in auth: api_keys", truncate(id), truncate(name))
		}
	}
	return nil
}

// rules decodes {allow: [globs], deny: [globs]}.
func (d *decoder) rules(n ast.Node, what string) policy.Rules {
	var r policy.Rules
	m, ok := d.Mapping(n, what)
	if !ok {
		return r
	}
	d.fields(m, what, []string{"allow", "deny"}, func(key string, mv *ast.MappingValueNode) {
		w := what + ": " + key
		list, nodes, _ := d.strList(mv.Value, w)
		var globs []string
		for i, pat := range list {
			if _, err := policy.CompileGlob(pat); err != nil {
				d.Errorf(nodes[i], "%s: %v", w, err)
				continue
			}
			globs = append(globs, pat)
		}
		if key == "allow" {
			r.Allow = globs
		} else {
			r.Deny = globs
		}
	})
	return r
}

var adminKeys = []string{"key_hash"}

func (d *decoder) admin(n ast.Node, f *File) {
	d.section(n, "admin", adminKeys, func(key string, mv *ast.MappingValueNode) {
		v := mv.Value
		h, ok := d.str(v, "admin: key_hash")
		if !ok {
			return
		}
		if err := checkKeyHash(h); err != nil {
			d.Errorf(v, "admin: key_hash: %v", err)
			return
		}
		for _, name := range sortedKeys(f.Auth.APIKeys) {
			if f.Auth.APIKeys[name] == h {
				d.Errorf(v, "admin: key_hash: the hash of API key %q: the admin key must be a key of its own", name)
				return
			}
		}
		if f.AdminListen == "" {
			d.Errorf(v, "admin: key_hash: the admin page is served on admin_listen, which is off")
		}
		f.Admin.KeyHash = h
	})
}
