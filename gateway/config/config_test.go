package config

import (
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/toolwire/toolwire/gateway"
)

func env(m map[string]string) Option {
	return WithLookupEnv(func(k string) (string, bool) { v, ok := m[k]; return v, ok })
}

var testEnv = env(map[string]string{"HOME": "/home/op", "WEATHER_TOKEN": "tok", "EMPTY": ""})

// The example from the issue, as an operator would write it.
func TestReadmeExample(t *testing.T) {
	f, err := Load("testdata/gateway.yaml", testEnv)
	if err != nil {
		t.Fatal(err)
	}
	want := &File{
		Listen:      "127.0.0.1:8090",
		AdminListen: "127.0.0.1:8091",
		DataDir:     filepath.Join("testdata", "toolwire-data"),
		LogFormat:   "text",
		PublicURL:   "http://127.0.0.1:8090/mcp",
		Audit:       defaultAudit(),
		Gateway: gateway.Config{
			Upstreams: []gateway.Upstream{
				{
					Name:    "files",
					Command: []string{"node", "server.js", "stdio"},
					Env:     map[string]string{"ROOT": "/home/op/data"},
					Dir:     "/srv/files",
				},
				{
					Name:    "weather",
					URL:     "https://weather.internal/mcp",
					Header:  http.Header{"Authorization": {"Bearer tok"}},
					Timeout: 30 * time.Second,
				},
			},
			Naming: gateway.Naming{
				Separator: "__",
				Rename:    map[string]string{"files__read_file": "read_file"},
				Hide:      []string{"files__delete_file"},
			},
		},
	}
	if diff := cmp.Diff(want, f); diff != "" {
		t.Errorf("Load (-want +got):\n%s", diff)
	}
	if err := Validate(f); err != nil {
		t.Errorf("Validate: %v", err)
	}
}

func TestDefaults(t *testing.T) {
	for _, src := range []string{"{}\n", "upstreams:\nnaming:\n", "# a comment\nupstreams: {}\n"} {
		f, err := Parse([]byte(src), "gateway.yaml")
		if err != nil {
			t.Fatalf("%q: %v", src, err)
		}
		want := &File{
			Listen:      DefaultListen,
			AdminListen: DefaultAdminListen,
			DataDir:     DefaultDataDir,
			LogFormat:   "text",
			Gateway:     gateway.Config{Naming: gateway.Naming{Separator: "__"}},
			PublicURL:   "http://127.0.0.1:8090/mcp",
			Audit:       defaultAudit(),
		}
		if diff := cmp.Diff(want, f); diff != "" {
			t.Errorf("%q (-want +got):\n%s", src, diff)
		}
	}
}

// allowed_hosts keeps its names as written: host names, host:port, IP
// literals (IPv6 in brackets with a port) and "*".
func TestAllowedHosts(t *testing.T) {
	f, err := Parse([]byte("allowed_hosts: [gw.example.com, \"10.0.0.5:8090\", \"[::1]:8090\", \"::1\", \"*\"]\n"), "gateway.yaml")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"gw.example.com", "10.0.0.5:8090", "[::1]:8090", "::1", "*"}
	if diff := cmp.Diff(want, f.AllowedHosts); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

// An empty file (whitespace, comments, null) is refused, by Parse and
// Load: it is what a reload sees of a file caught in the middle of a
// write, and loading it as the defaults would drop every upstream and
// persona.
func TestEmptyFileRefused(t *testing.T) {
	const want = `g.yaml: the file is empty (nothing but whitespace, comments or null); a config has at least one key: write "upstreams: {}" for a gateway without upstreams`
	for _, src := range []string{"", "  \n\n", "\t\n", "# nothing\n", "# a\n# b\n", "---\n", "---\n# x\n...\n", "~\n", "null\n"} {
		f, err := Parse([]byte(src), "g.yaml")
		if err == nil || err.Error() != want || f != nil {
			t.Errorf("%q: %v, %v; want the error %s", src, f, err, want)
		}
	}
	p := filepath.Join(t.TempDir(), "g.yaml")
	if err := os.WriteFile(p, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(p); err == nil || !strings.Contains(err.Error(), "the file is empty") {
		t.Errorf("Load of an empty file: %v", err)
	}
}

func TestSettings(t *testing.T) {
	src := `listen: ":9000"
admin_listen: "off"
otc_listen: "[::1]:9002"
data_dir: /var/lib/toolwire
log_format: json
upstreams:
  z-last:
    command:
      - srv
      - --port
      - 8080
      - true
    env:
      DEBUG: 1
      MOTD: |
        two
        lines
    cwd: work
    max_message_size: 1048576
  "42":
    url: http://localhost:3000/mcp?x=1
    max_message_size: 8MiB
naming:
  separator: .
  rename:
    42.a: b
`
	f, err := Parse([]byte(src), "g.yaml", WithBaseDir("/etc/tw"))
	if err != nil {
		t.Fatal(err)
	}
	want := &File{
		Listen:    ":9000",
		OTCListen: "[::1]:9002",
		DataDir:   "/var/lib/toolwire",
		LogFormat: "json",
		PublicURL: "http://localhost:9000/mcp",
		Audit:     defaultAudit(),
		Gateway: gateway.Config{
			Upstreams: []gateway.Upstream{
				{Name: "z-last", Command: []string{"srv", "--port", "8080", "true"}, Env: map[string]string{"DEBUG": "1", "MOTD": "two\nlines\n"}, Dir: "/etc/tw/work", MaxMessageSize: 1 << 20},
				{Name: "42", URL: "http://localhost:3000/mcp?x=1", MaxMessageSize: 8 << 20},
			},
			Naming: gateway.Naming{Separator: ".", Rename: map[string]string{"42.a": "b"}},
		},
	}
	if diff := cmp.Diff(want, f); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestExpand(t *testing.T) {
	lookup := func(k string) (string, bool) {
		v, ok := map[string]string{"A": "alpha", "EMPTY": "", "B_2": "${A}", "Y": "{x: 1}"}[k]
		return v, ok
	}
	for _, c := range []struct{ in, want, err string }{
		{"plain", "plain", ""},
		{"${A}", "alpha", ""},
		{"x${A}y${A}", "xalphayalpha", ""},
		{"${B_2}", "${A}", ""}, // a value is not expanded again
		{"${Y}", "{x: 1}", ""}, // nor parsed
		{"${EMPTY}", "", ""},
		{"${EMPTY:-d}", "d", ""},
		{"${UNSET:-d e}", "d e", ""},
		{"${UNSET:-}", "", ""},
		{"${A:-d}", "alpha", ""},
		{"${UNSET:-a:-b}", "a:-b", ""},
		{"$${A}", "${A}", ""},
		{"a$$b$$", "a$b$", ""},
		{"$$$$", "$$", ""},
		{"${UNSET}", "", "environment variable UNSET is not set (write ${UNSET:-default} for a default)"},
		{"${A", "", "unterminated ${ (no closing })"},
		{"${}", "", "malformed ${}: want ${NAME} or ${NAME:-default}, NAME of letters, digits and _ not starting with a digit"},
		{"${1A}", "", "malformed ${1A}: want ${NAME} or ${NAME:-default}, NAME of letters, digits and _ not starting with a digit"},
		{"${A-x}", "", "malformed ${A-x}: want ${NAME} or ${NAME:-default}, NAME of letters, digits and _ not starting with a digit"},
		{"$A", "", "a $ not starting ${NAME}: write $$ for a literal $"},
		{"cost $", "", "a $ not starting ${NAME}: write $$ for a literal $"},
	} {
		got, err := expand(c.in, lookup)
		if c.err != "" {
			if err == nil || err.Error() != c.err {
				t.Errorf("expand(%q) = %q, %v; want error %q", c.in, got, err, c.err)
			}
			continue
		}
		if err != nil || got != c.want {
			t.Errorf("expand(%q) = %q, %v; want %q", c.in, got, err, c.want)
		}
	}
}

// up is a valid head of a file for error cases about naming.
const up = "upstreams:\n  files:\n    command: [srv]\n  web:\n    url: https://h/mcp\n"

func TestErrors(t *testing.T) {
	for _, c := range []struct{ src, want string }{
		// Syntax, structure, types.
		{"listen: [\n", ""},
		{"listen: a\nlisten: b\n", `g.yaml:2:1: duplicate key "listen" (first at 1:1)`},
		{"- a\n", "g.yaml:1:1: the file: want a mapping, not a list"},
		{"a: 1\n---\nb: 2\n", "g.yaml:3:1: a second YAML document (the file holds one)"},
		{"listn: x\n", `g.yaml:1:1: unknown key "listn" (did you mean "listen"?)`},
		{"allowed_hosts: gw.example.com\n", "g.yaml:1:16: allowed_hosts: want a list, not a string"},
		{"allowed_hosts: [https://gw.example.com]\n", `g.yaml:1:17: allowed_hosts: "https://gw.example.com": want a host name or host:port, not a URL`},
		{"allowed_hosts: [\"gw.example.com:99999\"]\n", `g.yaml:1:17: allowed_hosts: "gw.example.com:99999": port "99999" is not 1-65535`},
		{"allowed_hosts: [\"\"]\n", "g.yaml:1:17: allowed_hosts: empty host"},
		{"allowed_hosts: [\"gw example\"]\n", `g.yaml:1:17: allowed_hosts: "gw example": want a host name or host:port, not a URL`},
		{"colour: x\n", `g.yaml:1:1: unknown key "colour"`},
		{"upstreams:\n  files:\n    comand: [x]\n", `g.yaml:2:3: upstream "files": neither command nor url (want exactly one)` + "\n" +
			`g.yaml:3:5: unknown key "comand" in upstream "files" (did you mean "command"?)`},
		{"upstreams:\n  files:\n    comand: [x]\n    url: http://h\n", `g.yaml:3:5: unknown key "comand" in upstream "files" (did you mean "command"?)`},
		{up + "naming:\n  seperator: x\n", `g.yaml:7:3: unknown key "seperator" in naming (did you mean "separator"?)`},
		{"listen: [a]\n", "g.yaml:1:9: listen: want a string, not a list"},
		{"listen:\n", "g.yaml:1:9: listen: no value (want a string)"},
		{"upstreams: [a]\n", "g.yaml:1:12: upstreams: want a mapping, not a list"},
		{"upstreams:\n  files:\n    command: srv\n", `g.yaml:3:14: upstream "files": command: want a list, not a string`},
		{"upstreams:\n  files:\n    env: [A]\n    command: [x]\n", `g.yaml:3:10: upstream "files": env: want a mapping, not a list`},
		{"upstreams:\n  files:\n    command: [x]\n    env:\n      A:\n        B: c\n", `g.yaml:6:9: upstream "files": env: A: want a string, not a mapping`},
		{"listen: &a x\n", "g.yaml:1:9: anchors and aliases are not supported"},
		{"listen: !!str 1\n", "g.yaml:1:9: tags are not supported"},
		{"? listen\n: x\n", "g.yaml:1:1: complex keys (?) are not supported"},
		{"<<: {listen: x}\n", "g.yaml:1:1: merge keys (<<) are not supported"},
		{"upstreams:\n  a: {command: [x]}\n  a: {url: http://h}\n", `g.yaml:3:3: duplicate key "a" (first at 2:3)`},
		{"upstreams:\n  a: {command: [x]}\n  b: *a\n", ""}, // an unknown alias: a syntax error
		{up + "naming:\n  rename:\n    web__a: r\n    web__a: s\n", `g.yaml:9:5: duplicate key "web__a" (first at 8:5)`},
		{up + "naming:\n  hide: [[web__x]]\n", `g.yaml:7:10: naming: hide: want a string, not a list`},
		{up + "naming:\n  rename: {web__a: \"${NOPE}\"}\n", `g.yaml:7:20: naming: rename: web__a: environment variable NOPE is not set (write ${NOPE:-default} for a default)`},
		{"upstreams:\n  files:\n    command: [x, \"${A\"]\n", `g.yaml:3:18: upstream "files": command: unterminated ${ (no closing })`},
		{"upstreams:\n  files:\n    command: [x]\n    cwd: ${NOPE}\n", `g.yaml:4:10: upstream "files": cwd: environment variable NOPE is not set (write ${NOPE:-default} for a default)`},
		{"upstreams:\n  files: [x]\n", `g.yaml:2:10: upstream "files": want a mapping, not a list`},
		{"upstreams:\n  files:\n    command: [x]\n    url: http://h\n    comand: y\n", "g.yaml:4:5: upstream \"files\": both command and url (want exactly one)\n" +
			`g.yaml:5:5: unknown key "comand" in upstream "files" (did you mean "command"?)`},
		{"[a]: x\n", "g.yaml:1:4: found an invalid key for this map"},
		// Listeners and top-level values.
		{"listen: off\n", "g.yaml:1:9: listen: cannot be off"},
		{"listen: localhost\n", `g.yaml:1:9: listen: "localhost" is not host:port`},
		{"listen: localhost:http\n", `g.yaml:1:9: listen: "localhost:http": port "http" is not a number from 0 to 65535`},
		{"listen: localhost:70000\n", `g.yaml:1:9: listen: "localhost:70000": port "70000" is not a number from 0 to 65535`},
		{"admin_listen: ''\n", "g.yaml:1:15: admin_listen: empty (write off to disable)"},
		{"otc_listen: 127.0.0.1:8090\n", "g.yaml:1:13: otc_listen: 127.0.0.1:8090 is also listen"},
		{"admin_listen: :1\nlisten: :1\n", "g.yaml:1:15: admin_listen: :1 is also listen"},
		{"data_dir: ''\n", "g.yaml:1:11: data_dir: empty"},
		{"log_format: xml\n", `g.yaml:1:13: log_format: "xml" is neither text nor json`},
		// Upstreams.
		{"upstreams:\n  Files:\n    command: [x]\n", `g.yaml:2:3: upstream "Files": name must be 1 to 32 of a-z 0-9 -`},
		{"upstreams:\n  " + strings.Repeat("a", 33) + ":\n    command: [x]\n", `g.yaml:2:3: upstream "` + strings.Repeat("a", 33) + `": name must be 1 to 32 of a-z 0-9 -`},
		{"upstreams:\n  files:\n", `g.yaml:2:3: upstream "files": no settings (want command or url)`},
		{"upstreams:\n  files:\n    command: [x]\n    url: http://h\n", `g.yaml:4:5: upstream "files": both command and url (want exactly one)`},
		{"upstreams:\n  files:\n    command: []\n", `g.yaml:3:14: upstream "files": command: empty (want the program and its arguments)`},
		{"upstreams:\n  files:\n    command: ['', x]\n", `g.yaml:3:15: upstream "files": command: the program is empty`},
		{"upstreams:\n  files:\n    command: [x]\n    env: {a-b: 1}\n", `g.yaml:4:11: upstream "files": env: "a-b" is not a variable name (want [A-Za-z_][A-Za-z0-9_]*)`},
		{"upstreams:\n  files:\n    command: [x]\n    headers: {A: b}\n    timeout: 1s\n", "g.yaml:4:5: upstream \"files\": headers applies to url upstreams only\n" +
			`g.yaml:5:5: upstream "files": timeout applies to url upstreams only`},
		{"upstreams:\n  web:\n    url: http://h\n    cwd: /\n", `g.yaml:4:5: upstream "web": cwd applies to command upstreams only`},
		{"upstreams:\n  web:\n    url: ftp://h/\n", `g.yaml:3:10: upstream "web": url: "ftp://h/": want an http or https URL`},
		{"upstreams:\n  web:\n    url: http:///mcp\n", `g.yaml:3:10: upstream "web": url: "http:///mcp" has no host`},
		{"upstreams:\n  web:\n    url: /mcp\n", `g.yaml:3:10: upstream "web": url: "/mcp": want an http or https URL`},
		{"upstreams:\n  web:\n    url: http://h/#x\n", `g.yaml:3:10: upstream "web": url: "http://h/#x" has a fragment`},
		{"upstreams:\n  web:\n    url: http://h\n    timeout: 30\n", `g.yaml:4:14: upstream "web": timeout: "30" is not a duration (like 500ms, 30s, 36h or 90d)`},
		{"upstreams:\n  web:\n    url: http://h\n    timeout: 0s\n", `g.yaml:4:14: upstream "web": timeout: 0s is not more than zero`},
		{"upstreams:\n  web:\n    url: http://h\n    timeout: -1s\n", `g.yaml:4:14: upstream "web": timeout: "-1s" is not a duration (like 500ms, 30s, 36h or 90d)`},
		{"upstreams:\n  web:\n    url: http://h\n    timeout: 61m\n", `g.yaml:4:14: upstream "web": timeout: 1h1m0s is more than 1h0m0s`},
		{"upstreams:\n  web:\n    url: http://h\n    max_message_size: 16MB\n", `g.yaml:4:23: upstream "web": max_message_size: "16MB" is not a size (like 16MiB, 512KiB or 1048576)`},
		{"upstreams:\n  web:\n    url: http://h\n    max_message_size: -1\n", `g.yaml:4:23: upstream "web": max_message_size: "-1" is not a size (like 16MiB, 512KiB or 1048576)`},
		{"upstreams:\n  web:\n    url: http://h\n    max_message_size: 0KiB\n", `g.yaml:4:23: upstream "web": max_message_size: 0 is not more than zero`},
		{"upstreams:\n  web:\n    url: http://h\n    max_message_size: 2GiB\n", `g.yaml:4:23: upstream "web": max_message_size: 2GiB is more than 1GiB`},
		{"upstreams:\n  web:\n    url: http://h\n    max_message_size: 99999999999999999999\n", `g.yaml:4:23: upstream "web": max_message_size: "99999999999999999999" is not a size (like 16MiB, 512KiB or 1048576)`},
		{"upstreams:\n  web:\n    url: http://h\n    headers:\n      X Y: z\n", `g.yaml:5:7: upstream "web": headers: "X Y" is not a header name (RFC 9110 token)`},
		{"upstreams:\n  web:\n    url: http://h\n    headers:\n      mcp-session-id: z\n", `g.yaml:5:7: upstream "web": headers: Mcp-Session-Id is set by the transport, not the config`},
		{"upstreams:\n  web:\n    url: http://h\n    headers:\n      A: ''\n", `g.yaml:5:10: upstream "web": headers: A: empty value`},
		{"upstreams:\n  web:\n    url: http://h\n    headers:\n      A: \"a\\nb\"\n", `g.yaml:5:10: upstream "web": headers: A: value contains a control character`},
		{"upstreams:\n  web:\n    url: http://h\n    headers:\n      X-A: a\n      x-a: b\n", `g.yaml:6:7: upstream "web": headers: "x-a" repeats a header name (first at 5:7)`},
		{"upstreams:\n  web:\n    url: http://h\n    headers:\n      A: ${EMPTY}\n", `g.yaml:5:10: upstream "web": headers: A: empty value`},
		// Expansion.
		{"upstreams:\n  web:\n    url: http://h\n    headers:\n      A: ${NOPE}\n", `g.yaml:5:10: upstream "web": headers: A: environment variable NOPE is not set (write ${NOPE:-default} for a default)`},
		{"data_dir: \"${HOME\"\n", `g.yaml:1:11: data_dir: unterminated ${ (no closing })`},
		{"data_dir: $HOME\n", `g.yaml:1:11: data_dir: a $ not starting ${NAME}: write $$ for a literal $`},
		// Naming.
		{up + "naming:\n  separator: ''\n", "g.yaml:7:14: naming: separator: empty"},
		{up + "naming:\n  separator: ---------\n", `g.yaml:7:14: naming: separator: "---------" is longer than 8 characters`},
		{up + "naming:\n  separator: ' '\n", `g.yaml:7:14: naming: separator: " ": only letters, digits, "_", "-" and "." may be used`},
		{up + "naming:\n  separator: /\n", `g.yaml:7:14: naming: separator: "/": only letters, digits, "_", "-" and "." may be used`},
		{up + "naming:\n  rename: {fils__read: r}\n", `g.yaml:7:12: naming: rename: "fils__read" is not an upstream name, "__" and a name; upstreams are files, web`},
		{up + "naming:\n  rename: {files__: r}\n", `g.yaml:7:12: naming: rename: "files__" is not an upstream name, "__" and a name; upstreams are files, web`},
		{up + "naming:\n  rename: {files__a: r/x}\n", `g.yaml:7:22: naming: rename: files__a: "r/x" is not a tool name (1 to 128 of A-Z a-z 0-9 _ - .)`},
		{up + "naming:\n  rename: {files__a: ''}\n", `g.yaml:7:22: naming: rename: files__a: "" is not a tool name (1 to 128 of A-Z a-z 0-9 _ - .)`},
		{up + "naming:\n  rename:\n    files__a: r\n    web__a: r\n", `g.yaml:9:13: naming: rename: web__a: target "r" is already a rename target (at 8:15)`},
		{up + "naming:\n  hide: [web-x]\n", `g.yaml:7:10: naming: hide: "web-x" is not an upstream name, "__" and a name; upstreams are files, web`},
		{"naming:\n  hide: [web__x]\n", `g.yaml:2:10: naming: hide: "web__x" is not an upstream name, "__" and a name; no upstream is configured`},
		{up + "naming:\n  hide: [web__x, web__x]\n", `g.yaml:7:18: naming: hide: "web__x" listed twice (first at 7:10)`},
		{up + "naming:\n  hide: [web__x, web__x, web__x]\n", "g.yaml:7:18: naming: hide: \"web__x\" listed twice (first at 7:10)\n" +
			`g.yaml:7:26: naming: hide: "web__x" listed twice (first at 7:10)`},
		{up + "naming:\n  hide: [web__x]\n  rename: {web__x: y}\n", `g.yaml:7:10: naming: hide: "web__x" is also renamed`},
		{up + "naming:\n  hide: web__x\n", `g.yaml:7:9: naming: hide: want a list, not a string`},
		{up + "naming:\n  rename: [web__x]\n", `g.yaml:7:11: naming: rename: want a mapping, not a list`},
	} {
		rejected(t, c.src, c.want)
	}
}

// rejected parses src, which must fail with an *Error saying want to the
// letter; an empty want (a YAML syntax error) asks only for a position in
// front. It returns the error, nil when there was none.
func rejected(t *testing.T, src, want string) error {
	t.Helper()
	_, err := Parse([]byte(src), "g.yaml", testEnv)
	if err == nil {
		t.Errorf("%q: no error, want %q", src, want)
		return nil
	}
	if want == "" {
		if !strings.HasPrefix(err.Error(), "g.yaml:") {
			t.Errorf("%q: error %q has no position", src, err)
		}
		return err
	}
	if err.Error() != want {
		t.Errorf("%q:\n got %s\nwant %s", src, err, want)
	}
	var e *Error
	if !errors.As(err, &e) {
		t.Errorf("%q: %T is not an *Error", src, err)
	}
	return err
}

func TestLimits(t *testing.T) {
	var b strings.Builder
	b.WriteString("upstreams:\n")
	for i := range MaxUpstreams + 1 {
		fmt.Fprintf(&b, "  u%d: {command: [x]}\n", i)
	}
	_, err := Parse([]byte(b.String()), "g.yaml")
	if want := "g.yaml:258:3: more than 256 upstreams"; err == nil || err.Error() != want {
		t.Errorf("too many upstreams: %v, want %s", err, want)
	}
	// Exactly MaxUpstreams is fine.
	lines := strings.SplitAfter(b.String(), "\n")
	if _, err := Parse([]byte(strings.Join(lines[:len(lines)-2], "")), "g.yaml"); err != nil {
		t.Errorf("%d upstreams: %v", MaxUpstreams, err)
	}

	big := []byte("upstreams: {}\n# " + strings.Repeat("x", 100) + "\n")
	if _, err := Parse(big, "g.yaml", WithReadLimits(ReadLimits{MaxFileBytes: 50})); err == nil || err.Error() != "g.yaml: file is larger than 50 bytes" {
		t.Errorf("Parse of a big file: %v", err)
	}
	if _, err := Parse(big, "g.yaml", WithReadLimits(ReadLimits{MaxFileBytes: 50}), WithReadLimits(ReadLimits{MaxFileBytes: len(big)})); err != nil {
		t.Errorf("Parse at the limit: %v", err)
	}
	if _, err := Parse(big, "g.yaml", WithReadLimits(ReadLimits{MaxFileBytes: 50}), WithReadLimits(ReadLimits{})); err == nil {
		t.Error("a zero MaxFileBytes dropped the earlier limit")
	}
	dir := t.TempDir()
	p := filepath.Join(dir, "g.yaml")
	if err := os.WriteFile(p, big, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(p, WithReadLimits(ReadLimits{MaxFileBytes: 50})); err == nil || err.Error() != p+": file is larger than 50 bytes" {
		t.Errorf("Load of a big file: %v", err)
	}
	if _, err := Load(filepath.Join(dir, "missing.yaml")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("Load of a missing file: %v", err)
	}
}

func TestLoadBaseDir(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "g.yaml")
	src := "data_dir: state\nupstreams:\n  a: {command: [x], cwd: sub}\n  b: {command: [x], cwd: /abs}\n"
	if err := os.WriteFile(p, []byte(src), 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := Load(p)
	if err != nil {
		t.Fatal(err)
	}
	got := []string{f.DataDir, f.Gateway.Upstreams[0].Dir, f.Gateway.Upstreams[1].Dir}
	want := []string{filepath.Join(dir, "state"), filepath.Join(dir, "sub"), "/abs"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	f, err = Load(p, WithBaseDir("/else"))
	if err != nil {
		t.Fatal(err)
	}
	if f.DataDir != "/else/state" {
		t.Errorf("WithBaseDir: data_dir %q", f.DataDir)
	}
	f, err = Parse([]byte(src), "g.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if f.DataDir != "state" || f.Gateway.Upstreams[0].Dir != "sub" {
		t.Errorf("Parse without a base: %q %q", f.DataDir, f.Gateway.Upstreams[0].Dir)
	}
}

func TestValidate(t *testing.T) {
	ok := &File{Listen: DefaultListen, DataDir: "d", LogFormat: "text",
		Gateway: gateway.Config{Naming: gateway.Naming{Separator: "__"}}}
	if err := Validate(ok); err != nil {
		t.Fatal(err)
	}
	bad := &File{Listen: "x", AdminListen: "x:1", OTCListen: "x:1", LogFormat: "yaml",
		Gateway: gateway.Config{
			Upstreams: []gateway.Upstream{
				{Name: "a", Command: []string{"x"}, URL: "http://h"},
				{Name: "a", MaxMessageSize: -1},
			},
			Naming: gateway.Naming{Separator: "", Rename: map[string]string{"a__b": "c"}, Hide: []string{"a__b", "a__b"}},
		}}
	want := strings.Join([]string{
		`listen: "x" is not host:port`,
		`otc_listen: x:1 is also admin_listen`,
		`data_dir: empty`,
		`log_format: "yaml" is neither text nor json`,
		`upstream "a": want exactly one of command, url and server, have 2`,
		`upstream "a": configured twice`,
		`upstream "a": want exactly one of command, url and server, have 0`,
		`upstream "a": max_message_size: -1 is not more than zero`,
		`naming: separator: empty`,
		`naming: rename: "a__b" is not an upstream name, "" and a name; upstreams are a`,
		`naming: hide: "a__b" is not an upstream name, "" and a name; upstreams are a`,
		`naming: hide: "a__b" is also renamed`,
		`naming: hide: "a__b" is not an upstream name, "" and a name; upstreams are a`,
		`naming: hide: "a__b" listed twice`,
		`naming: hide: "a__b" is also renamed`,
	}, "\n")
	if err := Validate(bad); err == nil || err.Error() != want {
		t.Errorf("Validate:\n%v\nwant\n%s", err, want)
	}
}
