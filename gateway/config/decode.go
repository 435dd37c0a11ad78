package config

import (
	"errors"
	"fmt"
	"iter"
	"net"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/goccy/go-yaml/ast"

	"github.com/toolwire/toolwire/gateway"
	"github.com/toolwire/toolwire/internal/units"
	"github.com/toolwire/toolwire/internal/yamlsrc"
)

// The decoder walks goccy/go-yaml's syntax tree rather than decoding into
// structs: every key and value keeps its line and column, upstreams keep
// their file order, and expansion applies to scalars only.
type decoder struct {
	yamlsrc.Reader
	name string
	opts *options
	trustState
}

// err is every problem recorded, in the order of the file, as *Errors.
func (d *decoder) err() error {
	ps := d.Problems()
	errs := make([]error, len(ps))
	for i, p := range ps {
		errs[i] = &Error{File: d.name, Line: p.Line, Column: p.Column, Msg: p.Msg}
	}
	if len(errs) == 1 {
		return errs[0]
	}
	return errors.Join(errs...)
}

// parseYAML parses data into a syntax tree (yamlsrc.Parse: nesting bounded
// by MaxNesting, a panic of the YAML library an error).
func parseYAML(data []byte) (*ast.File, error) { return yamlsrc.Parse(data, MaxNesting) }

func (d *decoder) decode(data []byte) *File {
	f := &File{
		Listen:      DefaultListen,
		AdminListen: DefaultAdminListen,
		DataDir:     DefaultDataDir,
		LogFormat:   "text",
		Gateway:     gateway.Config{Naming: gateway.Naming{Separator: DefaultSeparator}},
	}
	tree, err := parseYAML(data)
	if err != nil {
		d.SyntaxError(err)
		return nil
	}
	var body ast.Node
	for _, doc := range tree.Docs {
		if doc.Body == nil {
			continue
		}
		if body != nil {
			d.Errorf(doc.Body, "a second YAML document (the file holds one)")
			return nil
		}
		body = doc.Body
	}
	if _, null := body.(*ast.NullNode); body == nil || null {
		// Never a config meant as one: most likely a file caught in the
		// middle of a write, which must not load as no upstreams.
		d.ErrorAt(0, 0, "%s", `the file is empty (nothing but whitespace, comments or null); `+
			`a config has at least one key: write "upstreams: {}" for a gateway without upstreams`)
		return nil
	}
	top, ok := d.Mapping(body, "the file")
	if !ok || top == nil {
		d.trust(nil, f)
		d.resolve(f)
		return f
	}
	later := map[string]ast.Node{} // the sections that need the others decoded first
	d.fields(top, "", topKeys, func(key string, mv *ast.MappingValueNode) {
		v := mv.Value
		switch key {
		case "listen":
			if s, ok := d.str(v, key); ok {
				d.listen(v, key, s, false)
				f.Listen = s
			}
		case "admin_listen", "otc_listen":
			if s, ok := d.str(v, key); ok {
				if s == "off" {
					s = ""
				} else {
					d.listen(v, key, s, true)
				}
				if key == "admin_listen" {
					f.AdminListen = s
				} else {
					f.OTCListen = s
				}
			}
		case "allowed_hosts":
			f.AllowedHosts = d.allowedHosts(v)
		case "data_dir":
			if s, ok := d.str(v, key); ok {
				if s == "" {
					d.Errorf(v, "data_dir: empty")
				}
				f.DataDir = s
			}
		case "log_format":
			d.checked(v, key, checkLogFormat, &f.LogFormat)
		case "upstreams", "naming", "public_url", "auth", "personas", "rate_limits", "audit", "enrichment", "admin":
			later[key] = v
		case "store":
			d.store(v, f)
		case "limits":
			d.callerLimits(v, f)
		}
	})
	f.Gateway.Upstreams = d.upstreams(later["upstreams"])
	d.naming(later["naming"], &f.Gateway)
	d.listenersDistinct(top, f)
	d.trust(later, f)
	d.resolve(f)
	return f
}

// topKeys are the top-level keys.
var topKeys = []string{"listen", "admin_listen", "otc_listen", "allowed_hosts", "data_dir", "log_format", "upstreams", "naming",
	"public_url", "auth", "personas", "rate_limits", "audit", "enrichment", "admin", "store", "limits"}

// allowedHosts decodes allowed_hosts: host names or host:port, or "*".
func (d *decoder) allowedHosts(n ast.Node) []string {
	hosts, nodes, _ := d.strList(n, "allowed_hosts")
	for i, h := range hosts {
		if err := checkAllowedHost(h); err != nil {
			d.Errorf(nodes[i], "allowed_hosts: %v", err)
		}
	}
	return hosts
}

// checkAllowedHost accepts "*", a host name or IP address, or either
// with a port: what a Host header holds, never a URL.
func checkAllowedHost(h string) error {
	switch {
	case h == "*":
		return nil
	case h == "":
		return fmt.Errorf("empty host")
	case strings.Contains(h, "://") || strings.ContainsAny(h, "/@?# \t"):
		return fmt.Errorf("%q: want a host name or host:port, not a URL", h)
	}
	for _, r := range h {
		if r < 0x21 || r == 0x7f {
			return fmt.Errorf("%q: control character", h)
		}
	}
	host := h
	if hh, port, err := net.SplitHostPort(h); err == nil {
		if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
			return fmt.Errorf("%q: port %q is not 1-65535", h, port)
		}
		host = hh
	} else if strings.Count(h, ":") == 1 {
		return fmt.Errorf("%q: %v", h, err)
	}
	if strings.Trim(host, "[]") == "" {
		return fmt.Errorf("%q: no host", h)
	}
	return nil
}

// resolve makes relative paths relative to the base directory.
func (d *decoder) resolve(f *File) {
	if !d.opts.baseSet {
		return
	}
	rel := func(p string) string {
		if p == "" || filepath.IsAbs(p) {
			return p
		}
		return filepath.Join(d.opts.baseDir, p)
	}
	f.DataDir = rel(f.DataDir)
	for i := range f.Gateway.Upstreams {
		f.Gateway.Upstreams[i].Dir = rel(f.Gateway.Upstreams[i].Dir)
	}
}

func (d *decoder) listen(n ast.Node, key, s string, optional bool) {
	if s == "off" && !optional {
		d.Errorf(n, "%s: cannot be off", key)
		return
	}
	if err := checkListen(s); err != nil {
		if s == "" && optional {
			err = errors.New("empty (write off to disable)")
		}
		d.Errorf(n, "%s: %v", key, err)
	}
}

// listenersDistinct checks that the served listeners differ. The defaults
// differ from each other, so a clash involves at least one written value.
func (d *decoder) listenersDistinct(top *ast.MappingNode, f *File) {
	nodes := map[string]ast.Node{}
	for _, mv := range top.Values {
		if key, ok := yamlsrc.KeyText(mv.Key); ok {
			nodes[key] = mv.Value
		}
	}
	type seen struct {
		key  string
		node ast.Node
	}
	byAddr := map[string]seen{}
	for _, l := range []struct{ key, v string }{{"listen", f.Listen}, {"admin_listen", f.AdminListen}, {"otc_listen", f.OTCListen}} {
		if l.v == "" {
			continue
		}
		n := nodes[l.key]
		if prev, dup := byAddr[l.v]; dup {
			if n == nil {
				n = prev.node
			}
			d.Errorf(n, "%s: %s is also %s", l.key, l.v, prev.key)
			continue
		}
		byAddr[l.v] = seen{l.key, n}
	}
}

// upstreamKeys are the keys of one upstream.
var upstreamKeys = []string{"command", "env", "cwd", "url", "headers", "header_files", "oauth", "timeout", "max_message_size", "sessions", "max_sessions", "idle_timeout", "tools", "transport"}

func (d *decoder) upstreams(n ast.Node) []gateway.Upstream {
	m, ok := d.Mapping(n, "upstreams")
	if !ok || m == nil {
		return nil
	}
	var ups []gateway.Upstream
	for mv, name := range d.entries(m, MaxUpstreams, fmt.Sprintf("more than %d upstreams", MaxUpstreams)) {
		if err := checkUpstreamName(name); err != nil {
			d.Errorf(mv.Key, "upstream %q: %v", name, err)
		}
		ups = append(ups, d.upstream(mv, name))
	}
	return ups
}

func (d *decoder) upstream(entry *ast.MappingValueNode, name string) gateway.Upstream {
	u := gateway.Upstream{Name: name}
	p := fmt.Sprintf("upstream %q", name)
	m := d.settings(entry.Value, entry.Key, p, "no settings (want command or url)")
	if m == nil {
		return u
	}
	keys := map[string]ast.Node{}
	first := map[string]ast.Node{} // header names, canonical, across headers and header_files
	var auth *upstreamOAuth
	var headerFiles ast.Node
	d.fields(m, p, upstreamKeys, func(key string, mv *ast.MappingValueNode) {
		keys[key] = mv.Key
		v := mv.Value
		what := p + ": " + key
		switch key {
		case "command":
			items, ok := d.List(v, what)
			if !ok {
				return
			}
			if len(items) == 0 {
				d.Errorf(v, "%s: empty (want the program and its arguments)", what)
				return
			}
			u.Command = []string{}
			for i, it := range items {
				s, ok := d.str(it, what)
				if !ok {
					continue
				}
				if i == 0 && s == "" {
					d.Errorf(it, "%s: the program is empty", what)
				} else if strings.IndexByte(s, 0) >= 0 {
					d.Errorf(it, "%s: %v", what, errNUL)
				}
				u.Command = append(u.Command, s)
			}
		case "env":
			u.Env = d.stringMap(v, what, func(k string, ev *ast.MappingValueNode, s string, ok bool) {
				if !validEnvName(k) {
					d.Errorf(ev.Key, "%s: %v", what, errEnvName(k))
				}
				if ok && strings.IndexByte(s, 0) >= 0 {
					d.Errorf(ev.Value, "%s: %s: %v", what, k, errNUL)
				}
			})
		case "cwd":
			d.checked(v, what, checkNoNUL, &u.Dir)
		case "url":
			d.checked(v, what, checkURL, &u.URL)
		case "headers":
			d.headerEntries(v, what, &u, first, false, func(hv *ast.MappingValueNode, k, ck string) {
				s, ok := d.str(hv.Value, what+": "+k)
				if !ok {
					return
				}
				if err := checkHeaderValue(s); err != nil {
					d.Errorf(hv.Value, "%s: %s: %v", what, k, err)
				}
				u.Header[ck] = []string{s}
			})
		case "header_files":
			headerFiles = v
		case "oauth":
			auth = d.upstreamOAuth(mv, p)
		case "timeout":
			if t, _, ok := d.duration(v, what, false, checkTimeout); ok {
				u.Timeout = t
			}
		case "max_message_size":
			if n, ok := d.size(v, what); ok {
				u.MaxMessageSize = n
			}
		case "tools":
			d.upstreamTools(v, what, &u)
		case "transport":
			d.transport(v, what, &u)
		default:
			d.sessionKey(key, v, what, &u)
		}
	})
	d.sessionsPerClientOnly(u, keys, p)
	cmd, url := keys["command"], keys["url"]
	switch {
	case cmd != nil && url != nil:
		later := url
		if l1, c1 := yamlsrc.Position(cmd); true {
			if l2, c2 := yamlsrc.Position(url); l1 > l2 || l1 == l2 && c1 > c2 {
				later = cmd
			}
		}
		d.Errorf(later, "%s: both command and url (want exactly one)", p)
	case cmd == nil && url == nil:
		d.Errorf(entry.Key, "%s: neither command nor url (want exactly one)", p)
	case cmd != nil:
		for _, k := range []string{"headers", "header_files", "oauth", "timeout", "transport"} {
			if n := keys[k]; n != nil {
				d.Errorf(n, "%s: %s applies to url upstreams only", p, k)
			}
		}
	default:
		for _, k := range []string{"env", "cwd"} {
			if n := keys[k]; n != nil {
				d.Errorf(n, "%s: %s applies to command upstreams only", p, k)
			}
		}
		// After headers, whose names header_files must not repeat.
		d.headerFiles(headerFiles, p+": header_files", &u, first)
		d.setAuth(&u, auth, keys["oauth"], p)
	}
	return u
}

// namingKeys are the keys of the naming section.
var namingKeys = []string{"separator", "rename", "hide"}

func (d *decoder) naming(n ast.Node, g *gateway.Config) {
	m, ok := d.Mapping(n, "naming")
	if !ok || m == nil {
		return
	}
	nm := &g.Naming
	var rename *ast.MappingNode
	var hide []ast.Node
	sepOK := true
	d.fields(m, "naming", namingKeys, func(key string, mv *ast.MappingValueNode) {
		v := mv.Value
		switch key {
		case "separator":
			sepOK = d.checked(v, "naming: separator", checkSeparator, &nm.Separator)
		case "rename":
			rename, _ = d.Mapping(v, "naming: rename")
		case "hide":
			hide, _ = d.List(v, "naming: hide")
		}
	})
	names := map[string]bool{}
	for _, u := range g.Upstreams {
		names[u.Name] = true
	}
	renamed := map[string]bool{}
	if rename != nil {
		nm.Rename = map[string]string{}
		targets := map[string]ast.Node{}
		for _, mv := range rename.Values {
			k, ok := d.Key(mv.Key)
			if !ok {
				continue
			}
			renamed[k] = true
			if sepOK {
				if err := checkPrefix(k, names, nm.Separator); err != nil {
					d.Errorf(mv.Key, "naming: rename: %v", err)
				}
			}
			t, ok := d.str(mv.Value, "naming: rename: "+k)
			if !ok {
				continue
			}
			if err := checkToolName(t); err != nil {
				d.Errorf(mv.Value, "naming: rename: %s: %v", k, err)
			} else if l, c, dup := repeated(targets, t, mv.Value); dup {
				d.Errorf(mv.Value, "naming: rename: %s: target %q is already a rename target (at %d:%d)", k, t, l, c)
			}
			nm.Rename[k] = t
		}
	}
	first := map[string]ast.Node{}
	for _, it := range hide {
		h, ok := d.str(it, "naming: hide")
		if !ok {
			continue
		}
		if sepOK {
			if err := checkPrefix(h, names, nm.Separator); err != nil {
				d.Errorf(it, "naming: hide: %v", err)
			}
		}
		if l, c, dup := repeated(first, h, it); dup {
			d.Errorf(it, "naming: hide: %q listed twice (first at %d:%d)", h, l, c)
		} else if renamed[h] {
			d.Errorf(it, "naming: hide: %q is also renamed", h)
		}
		nm.Hide = append(nm.Hide, h)
	}
}

// str is a scalar value as a string, expanded. Numbers and booleans are
// taken as written.
func (d *decoder) str(n ast.Node, what string) (string, bool) {
	s, ok := d.Scalar(n, what)
	if !ok {
		return "", false
	}
	v, err := expand(s, d.opts.lookup)
	if err != nil {
		d.Errorf(n, "%s: %v", what, err)
		return "", false
	}
	return v, true
}

// size is a byte count (units.ParseSize) from 1 to MaxMessageSize,
// reported at n when it is not.
func (d *decoder) size(n ast.Node, what string) (int, bool) {
	s, ok := d.str(n, what)
	if !ok {
		return 0, false
	}
	v, err := units.ParseSize(s, MaxMessageSize)
	if err == nil {
		err = checkMessageSize(int(v))
	}
	if err != nil {
		d.Errorf(n, "%s: %v", what, err)
		return 0, false
	}
	return int(v), true
}

// entries yields the members of a mapping of named entries (upstreams,
// personas, API keys) with their names, at most max of them: one more is
// the error tooMany and ends the walk; a key that is not a name is
// reported by key and skipped.
func (d *decoder) entries(m *ast.MappingNode, max int, tooMany string) iter.Seq2[*ast.MappingValueNode, string] {
	return func(yield func(*ast.MappingValueNode, string) bool) {
		for i, mv := range m.Values {
			if i == max {
				d.Errorf(mv.Key, "%s", tooMany)
				return
			}
			name, ok := d.Key(mv.Key)
			if !ok {
				continue
			}
			if !yield(mv, name) {
				return
			}
		}
	}
}
