package config

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/toolwire/toolwire/internal/units"
)

// Validate checks a File built in a program (or decoded and then changed)
// against the rules Parse applies, without positions. An upstream may set
// Server instead of Command or URL here; a config file cannot. The zero
// trust settings (PublicURL, Auth, Audit, Admin) are valid; Gateway.Policy,
// Limits and Enrich are not checked again (their constructors did).
func Validate(f *File) error {
	var errs []error
	add := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	if err := checkListen(f.Listen); err != nil {
		add("listen: %v", err)
	}
	listeners := map[string]string{f.Listen: "listen"}
	for _, l := range []struct{ key, v string }{{"admin_listen", f.AdminListen}, {"otc_listen", f.OTCListen}} {
		if l.v == "" {
			continue
		}
		if err := checkListen(l.v); err != nil {
			add("%s: %v", l.key, err)
		} else if other, dup := listeners[l.v]; dup {
			add("%s: %s is also %s", l.key, l.v, other)
		}
		listeners[l.v] = l.key
	}
	if f.DataDir == "" {
		add("data_dir: empty")
	}
	if err := checkLogFormat(f.LogFormat); err != nil {
		add("log_format: %v", err)
	}
	g := &f.Gateway
	if len(g.Upstreams) > MaxUpstreams {
		add("more than %d upstreams", MaxUpstreams)
	}
	names := map[string]bool{}
	for _, u := range g.Upstreams {
		p := fmt.Sprintf("upstream %q", u.Name)
		if err := checkUpstreamName(u.Name); err != nil {
			add("%s: %v", p, err)
		}
		if names[u.Name] {
			add("%s: configured twice", p)
		}
		names[u.Name] = true
		n := 0
		if len(u.Command) > 0 {
			n++
		}
		if u.URL != "" {
			n++
		}
		if u.Server != nil {
			n++
		}
		if n != 1 {
			add("%s: want exactly one of command, url and server, have %d", p, n)
		}
		if len(u.Command) > 0 {
			if err := checkCommand(u.Command); err != nil {
				add("%s: command: %v", p, err)
			}
		}
		for k, v := range u.Env {
			if !validEnvName(k) {
				add("%s: env: %v", p, errEnvName(k))
			}
			if strings.IndexByte(v, 0) >= 0 {
				add("%s: env: %s: %v", p, k, errNUL)
			}
		}
		if strings.IndexByte(u.Dir, 0) >= 0 {
			add("%s: cwd: %v", p, errNUL)
		}
		if len(u.Command) == 0 && (len(u.Env) > 0 || u.Dir != "") {
			add("%s: env and cwd apply to command upstreams only", p)
		}
		if u.URL != "" {
			if err := checkURL(u.URL); err != nil {
				add("%s: url: %v", p, err)
			}
		} else if len(u.Header) > 0 || u.Timeout != 0 {
			add("%s: headers and timeout apply to url upstreams only", p)
		}
		for k, vs := range u.Header {
			if err := checkHeaderName(k); err != nil {
				add("%s: headers: %v", p, err)
			}
			for _, v := range vs {
				if err := checkHeaderValue(v); err != nil {
					add("%s: headers: %s: %v", p, k, err)
				}
			}
		}
		if u.Timeout != 0 {
			if err := checkTimeout(u.Timeout); err != nil {
				add("%s: timeout: %v", p, err)
			}
		}
		if u.MaxMessageSize != 0 {
			if err := checkMessageSize(u.MaxMessageSize); err != nil {
				add("%s: max_message_size: %v", p, err)
			}
		}
		checkUpstreamSessions(u, add, p)
		checkUpstreamTransport(u, add, p)
	}
	nm := &g.Naming
	if err := checkSeparator(nm.Separator); err != nil {
		add("naming: separator: %v", err)
	}
	targets := map[string]string{}
	for _, k := range sortedKeys(nm.Rename) {
		t := nm.Rename[k]
		if err := checkPrefix(k, names, nm.Separator); err != nil {
			add("naming: rename: %v", err)
		}
		if err := checkToolName(t); err != nil {
			add("naming: rename: %s: %v", k, err)
		}
		if other, dup := targets[t]; dup {
			add("naming: rename: %s and %s both become %q", other, k, t)
		}
		targets[t] = k
	}
	hidden := map[string]bool{}
	for _, h := range nm.Hide {
		if err := checkPrefix(h, names, nm.Separator); err != nil {
			add("naming: hide: %v", err)
		}
		if hidden[h] {
			add("naming: hide: %q listed twice", h)
		}
		hidden[h] = true
		if _, ok := nm.Rename[h]; ok {
			add("naming: hide: %q is also renamed", h)
		}
	}
	validateTrust(f, add)
	return errors.Join(errs...)
}

func sortedKeys(m map[string]string) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

var errNUL = errors.New("contains a NUL byte")

// checkNoNUL refuses a string with a NUL byte, which no file name,
// argument or environment value can hold.
func checkNoNUL(s string) error {
	if strings.IndexByte(s, 0) >= 0 {
		return errNUL
	}
	return nil
}

func errEnvName(k string) error {
	return fmt.Errorf("%q is not a variable name (want [A-Za-z_][A-Za-z0-9_]*)", k)
}

// checkListen accepts host:port with a decimal port; the host may be
// empty (every interface).
func checkListen(s string) error {
	if s == "" {
		return errors.New("empty")
	}
	_, port, err := net.SplitHostPort(s)
	if err != nil {
		return fmt.Errorf("%q is not host:port", s)
	}
	if n, err := strconv.ParseUint(port, 10, 16); err != nil || strconv.FormatUint(n, 10) != port {
		return fmt.Errorf("%q: port %q is not a number from 0 to 65535", s, port)
	}
	return nil
}

func checkLogFormat(s string) error {
	if s != "text" && s != "json" {
		return fmt.Errorf("%q is neither text nor json", s)
	}
	return nil
}

func checkUpstreamName(s string) error {
	ok := len(s) >= 1 && len(s) <= 32
	for i := 0; ok && i < len(s); i++ {
		c := s[i]
		ok = 'a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '-'
	}
	if !ok {
		return errors.New("name must be 1 to 32 of a-z 0-9 -")
	}
	return nil
}

func checkCommand(cmd []string) error {
	if len(cmd) == 0 {
		return errors.New("empty (want the program and its arguments)")
	}
	if cmd[0] == "" {
		return errors.New("the program is empty")
	}
	for _, a := range cmd {
		if strings.IndexByte(a, 0) >= 0 {
			return errNUL
		}
	}
	return nil
}

func checkURL(s string) error {
	u, err := url.Parse(s)
	if err != nil {
		return fmt.Errorf("%q is not a URL", s)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return fmt.Errorf("%q: want an http or https URL", s)
	}
	if u.Host == "" || u.Opaque != "" {
		return fmt.Errorf("%q has no host", s)
	}
	if u.Fragment != "" || strings.Contains(s, "#") {
		return fmt.Errorf("%q has a fragment", s)
	}
	return nil
}

// checkTimeout refuses an upstream timeout outside (0, MaxTimeout].
func checkTimeout(d time.Duration) error { return checkDurationUpTo(d, MaxTimeout) }

// checkDurationUpTo refuses a duration outside (0, hi].
func checkDurationUpTo(d, hi time.Duration) error {
	if d <= 0 {
		return fmt.Errorf("%v is not more than zero", d)
	}
	if d > hi {
		return fmt.Errorf("%v is more than %v", d, hi)
	}
	return nil
}

// checkMessageSize refuses a max_message_size outside 1 byte to
// MaxMessageSize.
func checkMessageSize(n int) error {
	if n <= 0 {
		return fmt.Errorf("%d is not more than zero", n)
	}
	if n > MaxMessageSize {
		return fmt.Errorf("%s is more than %s", units.FormatSize(int64(n)), units.FormatSize(MaxMessageSize))
	}
	return nil
}

// managedHeaders are set by the Streamable HTTP transport itself.
var managedHeaders = map[string]bool{
	"Host": true, "Content-Length": true, "Content-Type": true,
	"Transfer-Encoding": true, "Connection": true,
	"Mcp-Session-Id": true, "Mcp-Protocol-Version": true, "Last-Event-Id": true,
}

// checkHeaderName accepts an RFC 9110 token not in managedHeaders.
func checkHeaderName(s string) error {
	ok := s != ""
	for i := 0; ok && i < len(s); i++ {
		c := s[i]
		ok = 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' ||
			strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0
	}
	if !ok {
		return fmt.Errorf("%q is not a header name (RFC 9110 token)", s)
	}
	if managedHeaders[http.CanonicalHeaderKey(s)] {
		return fmt.Errorf("%s is set by the transport, not the config", http.CanonicalHeaderKey(s))
	}
	return nil
}

func checkHeaderValue(s string) error {
	if s == "" {
		return errors.New("empty value")
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 && c != '\t' || c == 0x7f {
			return errors.New("value contains a control character")
		}
	}
	return nil
}

// checkSeparator: the separator becomes part of every served tool name,
// so it is made of tool-name characters (see checkToolName).
func checkSeparator(s string) error {
	if s == "" {
		return errors.New("empty")
	}
	if len(s) > MaxSeparator {
		return fmt.Errorf("%q is longer than %d characters", s, MaxSeparator)
	}
	if !toolNameChars(s) {
		return fmt.Errorf("%q: only letters, digits, \"_\", \"-\" and \".\" may be used", s)
	}
	return nil
}

// checkToolName follows MCP 2025-11-25, server/tools.mdx: "Tool names
// SHOULD be between 1 and 128 characters in length (inclusive)", made of
// "uppercase and lowercase ASCII letters (A-Z, a-z), digits (0-9),
// underscore (_), hyphen (-), and dot (.)", case-sensitive, unique per
// server (/work/shared/spec/mcp-2025-11-25.md, Tool table). The gateway
// serves names it chooses, so it holds them to the SHOULD.
func checkToolName(s string) error {
	if s == "" || len(s) > MaxToolName || !toolNameChars(s) {
		return fmt.Errorf("%q is not a tool name (1 to %d of A-Z a-z 0-9 _ - .)", s, MaxToolName)
	}
	return nil
}

func toolNameChars(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '-' || c == '.') {
			return false
		}
	}
	return true
}

// checkPrefix reports whether full begins with a configured upstream's
// name and the separator and has something after them. Whether that
// upstream has such a tool or prompt is only known at run time.
func checkPrefix(full string, names map[string]bool, sep string) error {
	if sep != "" {
		for i := 0; ; {
			j := strings.Index(full[i:], sep)
			if j < 0 {
				break
			}
			j += i
			if names[full[:j]] && j+len(sep) < len(full) {
				return nil
			}
			i = j + 1
		}
	}
	list := make([]string, 0, len(names))
	for n := range names {
		list = append(list, n)
	}
	sort.Strings(list)
	have := "no upstream is configured"
	if len(list) > 8 {
		have = fmt.Sprintf("upstreams are %s and %d more", strings.Join(list[:8], ", "), len(list)-8)
	} else if len(list) > 0 {
		have = "upstreams are " + strings.Join(list, ", ")
	}
	return fmt.Errorf("%q is not an upstream name, %q and a name; %s", full, sep, have)
}
