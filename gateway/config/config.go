package config

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/toolwire/toolwire/gateway"
	"github.com/toolwire/toolwire/gateway/policy"
	"github.com/toolwire/toolwire/gateway/ratelimit"
	"github.com/toolwire/toolwire/internal/limits"
)

// Defaults and limits.
const (
	DefaultListen      = "127.0.0.1:8090"
	DefaultAdminListen = "127.0.0.1:8091"
	DefaultDataDir     = "./toolwire-data"
	DefaultSeparator   = "__"

	// DefaultMaxSize is the largest config file accepted
	// (ReadLimits.MaxFileBytes).
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
	// MaxNesting is the deepest nesting of collections a file may have
	// (flow collections by their brackets, block ones by indentation). The
	// YAML parser takes time quadratic in it (100000 levels, in a file well
	// under DefaultMaxSize, take minutes), while a config file needs a
	// handful; the lexer, linear, finds it first.
	MaxNesting = 64
)

// File is a decoded config file.
type File struct {
	// Listen is the MCP endpoint's host:port.
	Listen string
	// AdminListen is the admin endpoint's host:port; empty: not served.
	AdminListen string
	// OTCListen is the OTC endpoint's host:port; empty: not served.
	OTCListen string
	// AllowedHosts are the Host header values the MCP and OTC endpoints
	// accept besides the loopback names, the listener's own host and
	// public_url's host (allowed_hosts): the names callers use to reach a
	// gateway bound to every interface, each a host name (any port),
	// host:port, or "*" for any. Others get 403 (DNS rebinding).
	AllowedHosts []string
	// DataDir is the state directory, resolved against the base
	// directory (see Load and WithBaseDir).
	DataDir string
	// LogFormat is "text" or "json".
	LogFormat string
	// Gateway holds the upstreams, in file order, the naming rules, with
	// the separator defaulted, and the trust layer built from personas
	// (Policy), rate_limits (Limits) and enrichment (Enrich), each nil
	// when the file does not configure it.
	Gateway gateway.Config

	// PublicURL is the gateway's canonical MCP URL, the audience of OAuth
	// access tokens (public_url; default http://<listen>/mcp).
	PublicURL string
	// Auth is how callers authenticate (auth).
	Auth Auth
	// Audit is where and how the audit trail is kept (audit).
	Audit Audit
	// Admin configures the admin page (admin).
	Admin Admin
	// Store is where replicas share state (store); zero: this process.
	Store Store
	// Limits bounds what callers may hold (limits); zero fields: the
	// defaults.
	Limits Limits
	// Personas are the personas as decoded, in file order, that
	// Gateway.Policy was built from (nil when the file has none): what a
	// reload compares to say which personas changed.
	Personas []policy.Persona
	// RateLimits is rate_limits as decoded, nil when the file has none:
	// Gateway.Limits is the in-process limiter built from it, and a
	// replica sharing its buckets builds its own (redisstore.Limiter).
	RateLimits *ratelimit.Config
}

// Auth is the auth section: the callers the gateway recognizes. With
// neither API keys nor OAuth every caller is anonymous.
type Auth struct {
	// APIKeys maps an API key's name to its hash, "sha256:" and 64
	// lowercase hex digits (policy.HashKey); nil when none.
	APIKeys map[string]string
	// OAuth accepts OAuth 2.1 access tokens; nil: not accepted.
	OAuth *OAuth
}

// OAuth is auth.oauth: access tokens (JWTs, RFC 9068) from one issuer.
type OAuth struct {
	Issuer   string
	Audience string // default: File.PublicURL
	JWKSURL  string // "": discovered from the issuer's metadata
	Scopes   []string
}

// Audit is the audit section. Parse fills in the defaults; in a File
// built in a program the zero values mean: Store "" is sqlite, Retention
// 0 keeps records forever, MaxValueBytes 0 is the gateway's default.
type Audit struct {
	// Store is "sqlite" (<data_dir>/audit.db), "postgres" or "off".
	Store string
	// Postgres is the connection string (DSN) of store postgres. It may
	// hold a password: never log it.
	Postgres string
	// Async delivers records through a queue of QueueSize records
	// (audit.NewAsync) instead of writing each before its answer leaves.
	Async     bool
	QueueSize int
	// Fsync syncs every SQLite commit to disk (audit.WithFsync).
	Fsync bool
	// Retention is how long records are kept; 0: forever.
	Retention time.Duration
	// Redact are the argument names whose values are not kept
	// (gateway.WithAuditRedaction), MaxValueBytes the longest string
	// value kept whole (negative: no limit).
	Redact        []string
	MaxValueBytes int
	// KeyFile is the chain's key file (audit.key_file), resolved against
	// the base directory; "": <data_dir>/audit.key, made at the first
	// start, for store sqlite, and a keyless chain for store postgres.
	KeyFile string
	// HeadLogInterval is how often the chain's head is logged when it
	// moved, besides at start and shutdown; 0: only then.
	HeadLogInterval time.Duration
}

// Admin is the admin section.
type Admin struct {
	// KeyHash is the hash of the admin page's key, as for API keys; ""
	// serves no admin page.
	KeyHash string
}

// KeySet builds the set of configured API keys; nil (and no error) when
// there are none.
func (f *File) KeySet() (*policy.KeySet, error) {
	if len(f.Auth.APIKeys) == 0 {
		return nil, nil
	}
	return policy.NewKeySet(f.Auth.APIKeys)
}

// Option changes how a file is read. Options apply in order (a later one
// wins) and nil options are ignored, as everywhere in the project.
type Option interface{ applyConfig(*options) }

type option func(*options)

func (f option) applyConfig(o *options) { f(o) }

type options struct {
	lookup  func(string) (string, bool)
	maxSize int
	baseDir string
	baseSet bool
}

// WithLookupEnv sets where ${NAME} takes its values from (default
// os.LookupEnv; nil: the default).
func WithLookupEnv(lookup func(string) (string, bool)) Option {
	return option(func(o *options) {
		o.lookup = lookup
		if lookup == nil {
			o.lookup = os.LookupEnv
		}
	})
}

// ReadLimits are the numbers that bound what Load and Parse read, so that
// a hostile or broken file costs bounded time and memory. (Limits is the
// file's own limits: section.) A zero or negative field means the default
// named beside it (or, after an earlier WithReadLimits, leaves what that
// one set). A size in bytes ends in Bytes.
type ReadLimits struct {
	// MaxFileBytes bounds the bytes of a config file (DefaultMaxSize,
	// 1 MiB); a larger one is refused with an *Error.
	MaxFileBytes int
}

// WithReadLimits sets what Load and Parse read. Its zero fields leave the
// value an earlier WithReadLimits set, or the default, so limits may be
// given in several options.
func WithReadLimits(l ReadLimits) Option {
	return option(func(o *options) { limits.SetPositive(&o.maxSize, l.MaxFileBytes) })
}

// WithBaseDir sets the directory that relative data_dir, cwd and
// header_files paths are relative to. Load uses the config file's
// directory; Parse, without this option, leaves them as written (relative
// to the working directory).
func WithBaseDir(dir string) Option {
	return option(func(o *options) { o.baseDir = dir; o.baseSet = true })
}

func newOptions(opts []Option) *options {
	o := &options{lookup: os.LookupEnv, maxSize: DefaultMaxSize}
	for _, opt := range opts {
		if opt != nil {
			opt.applyConfig(o)
		}
	}
	return o
}

// Load reads and decodes the config file at path. Relative paths in it are
// relative to path's directory unless WithBaseDir says otherwise. Files
// named by header_files are read now, so a reload (Load again) picks up a
// rotated credential.
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
