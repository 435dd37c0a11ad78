// Package config reads the gateway's config file: the one YAML file that
// toolwire gateway --config FILE serves from. It decodes to a File, whose
// Gateway field is the gateway.Config the gateway runs with.
//
// An example, with every key:
//
//	listen: 127.0.0.1:8090          # the MCP endpoint, path /mcp, both eras
//	admin_listen: 127.0.0.1:8091    # /healthz, /readyz, /metrics
//	otc_listen: off                 # the OTC endpoint (not served by default)
//	data_dir: ./toolwire-data
//	log_format: text
//	upstreams:
//	  files:
//	    command: [node, server.js, stdio]
//	    env: {ROOT: "${HOME}/data"}
//	    cwd: /srv/files
//	  weather:
//	    url: https://weather.internal/mcp
//	    headers: {Authorization: "Bearer ${WEATHER_TOKEN}"}
//	    timeout: 30s
//	    max_message_size: 8MiB
//	naming:
//	  separator: "__"
//	  rename: {files__read_file: read_file}
//	  hide: [files__delete_file]
//
// Top-level keys, all optional:
//
//   - listen: host:port of the MCP endpoint (Streamable HTTP at path /mcp,
//     both protocol eras). Default 127.0.0.1:8090. An empty host listens on
//     every interface.
//   - admin_listen: host:port of the admin endpoint (/healthz, /readyz,
//     /metrics). Default 127.0.0.1:8091; the value off disables it
//     (File.AdminListen is then empty).
//   - otc_listen: host:port of the OTC endpoint. Default off (not served);
//     File.OTCListen is empty then.
//   - data_dir: the directory the gateway keeps state in. Default
//     ./toolwire-data. A relative path is relative to the directory holding
//     the config file (Load), or to WithBaseDir's directory (Parse), not to
//     the process's working directory.
//   - log_format: text (the default) or json.
//   - upstreams: a mapping from upstream name to upstream, kept in file
//     order. At most MaxUpstreams of them; none is allowed (the gateway then
//     serves only its own endpoints).
//   - naming: how upstream tool and prompt names appear downstream.
//
// The served ones of listen, admin_listen and otc_listen must differ from
// each other. An empty value is an error (write off to disable an
// optional listener).
//
// Keys of one upstream. The name (the mapping key) matches
// ^[a-z0-9-]{1,32}$. Exactly one of command and url is set:
//
//   - command: the child process to speak MCP to over stdio, a non-empty
//     list: the program (looked up in PATH if it has no slash) and its
//     arguments.
//   - env: a mapping of environment variables added to the gateway's own
//     for the child; names match ^[A-Za-z_][A-Za-z0-9_]*$. Command only.
//   - cwd: the child's working directory, relative ones relative to the
//     config file's directory like data_dir; default the gateway's.
//     Command only.
//   - url: a Streamable HTTP endpoint, http or https with a host, no
//     fragment.
//   - headers: a mapping of HTTP headers sent on every request to url;
//     names are HTTP tokens (RFC 9110 section 5.1), case-insensitively
//     unique, and not one the transport manages itself (Host,
//     Content-Length, Content-Type, Transfer-Encoding, Connection,
//     Mcp-Session-Id, Mcp-Protocol-Version, Last-Event-Id); values are
//     non-empty and free of control characters. URL only.
//   - timeout: a Go duration (30s, 2m) bounding each call, more than zero
//     and at most MaxTimeout (one hour). Default: the gateway's. URL only.
//   - max_message_size: the largest message the gateway reads from the
//     upstream (a result, a notification), in bytes, optionally with a
//     KiB, MiB or GiB suffix (8MiB); more than zero and at most
//     MaxMessageSize (1GiB). A larger result fails its call with an
//     isError result. Default: the gateway's, 16MiB
//     (gateway.DefaultMaxUpstreamMessage).
//
// Keys of naming:
//
//   - separator: joins an upstream's name and its tool or prompt name
//     (files + __ + read_file is files__read_file). Default __. One to 8
//     characters of A-Z a-z 0-9 _ - . (the characters MCP tool names are
//     made of); note that some clients refuse tool names with a dot.
//   - rename: a mapping from a full name (upstream name, separator, the
//     upstream's own name) to the name served instead. Each key must begin
//     with a configured upstream's name and the separator, followed by at
//     least one character: a misspelt key is an error here, because the
//     gateway would otherwise never match it. Whether the upstream really
//     has that tool or prompt is only known once it is running. Targets
//     are valid MCP tool names (1 to 128 of A-Z a-z 0-9 _ - .) and pairwise
//     distinct.
//   - hide: a list of full names (before renaming) not served at all; the
//     same prefix rule as for rename keys applies; no entry twice, and a
//     hidden name cannot also be renamed.
//
// Values are strings; a plain number or boolean where a string is expected
// is taken as written (env: {DEBUG: 1}, command: [srv, --port, 8080]).
// A key with no value (or null) is an empty mapping or list where one is
// expected, and an error where a string is.
//
// Environment variables are expanded in string values, never in keys:
// ${NAME} is the variable's value, and an unset variable is an error;
// ${NAME:-default} is the default when the variable is unset or empty (the
// default is taken literally up to the first closing brace); $$ is a
// literal $. Any other $ is an error, so a value meant literally has to
// write $$. NAME matches [A-Za-z_][A-Za-z0-9_]*. Expansion happens after
// the YAML is parsed, on each scalar, and its result is never parsed
// again: a variable cannot add keys or change the structure. Variables are
// read with os.LookupEnv, or WithLookupEnv's function. Inside a flow
// mapping or list ({...} or [...]) quote a value holding ${...}, since
// YAML reads its braces as syntax otherwise.
//
// Decoding is strict: unknown keys, duplicate keys, a mapping where a list
// is expected and the like are errors. Anchors, aliases, merge keys (<<)
// and tags are not supported, and a file holds one YAML document. A file
// bigger than DefaultMaxSize (1 MiB, see WithMaxSize) is refused.
//
// Errors name the file, line and column: gateway.yaml:7:5: unknown key
// "comand" in upstream "files" (did you mean "command"?). Every error
// found is reported, one a line (errors.Join), each an *Error.
package config

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/toolwire/toolwire/gateway"
)

// Defaults and limits.
const (
	DefaultListen      = "127.0.0.1:8090"
	DefaultAdminListen = "127.0.0.1:8091"
	DefaultDataDir     = "./toolwire-data"
	DefaultSeparator   = "__"

	// DefaultMaxSize is the largest config file accepted (WithMaxSize).
	DefaultMaxSize = 1 << 20
	// MaxUpstreams is the most upstreams a file may configure.
	MaxUpstreams = 256
	// MaxTimeout is the longest upstream call timeout.
	MaxTimeout = time.Hour
	// MaxMessageSize is the largest max_message_size of an upstream.
	MaxMessageSize = 1 << 30
	// MaxSeparator is the longest separator, in bytes.
	MaxSeparator = 8
	// MaxToolName is the longest tool name MCP recommends.
	MaxToolName = 128
)

// File is a decoded config file.
type File struct {
	// Listen is the MCP endpoint's host:port.
	Listen string
	// AdminListen is the admin endpoint's host:port; empty: not served.
	AdminListen string
	// OTCListen is the OTC endpoint's host:port; empty: not served.
	OTCListen string
	// DataDir is the state directory, resolved against the base
	// directory (see Load and WithBaseDir).
	DataDir string
	// LogFormat is "text" or "json".
	LogFormat string
	// Gateway holds the upstreams, in file order, and the naming rules,
	// with the separator defaulted.
	Gateway gateway.Config
}

// Option changes how a file is read.
type Option func(*options)

type options struct {
	lookup  func(string) (string, bool)
	maxSize int
	baseDir string
	baseSet bool
}

// WithLookupEnv sets where ${NAME} takes its values from (default
// os.LookupEnv).
func WithLookupEnv(lookup func(string) (string, bool)) Option {
	return func(o *options) { o.lookup = lookup }
}

// WithMaxSize sets the largest file accepted, in bytes (default
// DefaultMaxSize).
func WithMaxSize(n int) Option {
	return func(o *options) { o.maxSize = n }
}

// WithBaseDir sets the directory that relative data_dir and cwd values are
// relative to. Load uses the config file's directory; Parse, without this
// option, leaves them as written (relative to the working directory).
func WithBaseDir(dir string) Option {
	return func(o *options) { o.baseDir = dir; o.baseSet = true }
}

func newOptions(opts []Option) *options {
	o := &options{lookup: os.LookupEnv, maxSize: DefaultMaxSize}
	for _, opt := range opts {
		opt(o)
	}
	return o
}

// Load reads and decodes the config file at path. Relative paths in it are
// relative to path's directory unless WithBaseDir says otherwise.
func Load(path string, opts ...Option) (*File, error) {
	o := newOptions(opts)
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	// Read one byte more than allowed to tell "too big" from "exactly at
	// the limit" without trusting Stat (the file may be a pipe).
	data, err := io.ReadAll(io.LimitReader(f, int64(o.maxSize)+1))
	if err != nil {
		return nil, err
	}
	if len(data) > o.maxSize {
		return nil, &Error{File: path, Msg: fmt.Sprintf("file is larger than %d bytes", o.maxSize)}
	}
	if !o.baseSet {
		opts = append(opts[:len(opts):len(opts)], WithBaseDir(filepath.Dir(path)))
	}
	return Parse(data, path, opts...)
}

// Parse decodes a config file's contents; name is what errors call the
// file.
func Parse(data []byte, name string, opts ...Option) (*File, error) {
	o := newOptions(opts)
	if len(data) > o.maxSize {
		return nil, &Error{File: name, Msg: fmt.Sprintf("file is larger than %d bytes", o.maxSize)}
	}
	d := &decoder{name: name, opts: o}
	f := d.decode(data)
	if err := d.err(); err != nil {
		return nil, err
	}
	return f, nil
}

// Error is one problem in a config file, at Line:Column (both 1-based; 0
// when the problem concerns the whole file).
type Error struct {
	File         string
	Line, Column int
	Msg          string
}

func (e *Error) Error() string {
	if e.Line == 0 {
		return e.File + ": " + e.Msg
	}
	return fmt.Sprintf("%s:%d:%d: %s", e.File, e.Line, e.Column, e.Msg)
}
