// Package config reads the gateway's config file: the one YAML file that
// toolwire gateway --config FILE serves from. It decodes to a File, whose
// Gateway field is the gateway.Config the gateway runs with.
//
// An example, with every key (fsync, for store sqlite, is in a comment):
//
//	listen: 127.0.0.1:8090          # the MCP endpoint, path /mcp, both eras
//	admin_listen: 127.0.0.1:8091    # /healthz, /readyz, /metrics, /admin/
//	otc_listen: off                 # the OTC endpoint (not served by default)
//	allowed_hosts: [gw.internal]    # Host names accepted besides loopback
//	data_dir: ./toolwire-data
//	log_format: text
//	public_url: https://gw.example.com/mcp
//	upstreams:
//	  files:
//	    command: [node, server.js, stdio]
//	    env: {ROOT: "${HOME}/data"}
//	    cwd: /srv/files
//	    sessions: per_client        # a child process per caller
//	    max_sessions: 16
//	    idle_timeout: 5m
//	  weather:
//	    url: https://weather.internal/mcp
//	    headers: {X-Tenant: ops}
//	    header_files: {Authorization: secrets/weather-auth}
//	    timeout: 30s
//	    max_message_size: 8MiB
//	    transport: http             # or sse (2024-11-05 HTTP+SSE); default: detected
//	  crm:
//	    url: https://crm.example.com/mcp
//	    oauth:
//	      client_id: toolwire-gateway
//	      client_secret: "${CRM_CLIENT_SECRET}"
//	      scopes: [crm.read]
//	      token_endpoint_auth_method: client_secret_basic
//	      allow_private_networks: false
//	      token_exchange:           # calls go as each caller (RFC 8693)
//	        issuer: https://issuer.example.com
//	        client_id: toolwire-gateway
//	        client_secret: "${CRM_CLIENT_SECRET}"
//	        audience: https://crm.example.com/mcp
//	        scopes: [crm.write]
//	        on_api_key: static      # API-key callers: the gateway's token
//	    tools:
//	      create_note:
//	        title: Add a note to the ACME account
//	        description: Adds a note to the ACME account.
//	        pin: {account: acme}    # out of the schema, forced on every call
//	naming:
//	  separator: "__"
//	  rename: {files__read_file: read_file}
//	  hide: [files__delete_file]
//	auth:
//	  api_keys:                     # what toolwire gateway hash-key prints
//	    alice: "sha256:2dd7f9cfae4d6d0ec15d67da3f1152b5a7c3a68a8ae7a859aac365a5322422cc"
//	    ci-bot: "sha256:2130b7fa35085cf73cef349f2f903d23d661a89ffe627a547384c005af1417f9"
//	  oauth:
//	    issuer: https://issuer.example.com
//	    audience: https://gw.example.com/mcp
//	    jwks_url: https://issuer.example.com/jwks.json
//	    scopes: [mcp]
//	personas:                       # the first that matches the caller decides
//	  analyst:
//	    identities: [alice, "oauth:bob"]
//	    claims: {role: analyst}
//	    anonymous: false
//	    tools: {allow: ["files__*", "weather__*"], deny: ["files__delete*"]}
//	    prompts: {allow: ["*"]}
//	    resources: {allow: ["file:///srv/*"], deny: ["file:///srv/private/*"]}
//	  ci:
//	    identities: ["api_key:ci-bot"]
//	    tools: {allow: [weather__forecast]}
//	  guest:
//	    anonymous: true
//	    tools: {allow: [weather__forecast]}
//	rate_limits:
//	  identity: 60/m
//	  persona: {rate: 600/m, burst: 50}
//	  tool: off
//	  identities: {alice: 10/s, "api_key:ci-bot": off}
//	  personas: {analyst: 100/m}
//	  tools: {weather__forecast: 1/s}
//	  max_buckets: 100000
//	  idle_ttl: 10m
//	audit:
//	  store: postgres               # default sqlite, <data_dir>/audit.db
//	  postgres: "${DATABASE_URL}"
//	  delivery: async
//	  queue_size: 10000
//	  # fsync: false                # store sqlite only
//	  retention: 90d
//	  redact: [password, token, secret, authorization]
//	  max_value_bytes: 1KiB
//	  key_file: secrets/audit.key   # default <data_dir>/audit.key (sqlite)
//	  head_log_interval: 1m
//	enrichment:
//	  - name: owners
//	    tools: ["files__*"]
//	    when: 'args.path.startsWith("/srv")'
//	    text: ["Owner of {{.args.path}}: data team"]
//	    links: [{uri: "https://wiki.example.com/{{.tool}}", name: docs, title: Docs, description: "The tool's page", mime_type: text/html}]
//	    structured: {owner: '"data-team"'}
//	    overwrite: false
//	admin:
//	  key_hash: "sha256:93be90c0069c4d320658ab9325a5e8aa69adff773ae67b8f835a376cca914104"
//	store:                          # default: this process's memory (one replica)
//	  redis:
//	    url: "${REDIS_URL}"
//	    prefix: "toolwire:"
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
//     File.OTCListen is empty then. With auth it authenticates callers as
//     the MCP endpoint does (a key or token as Authorization: Bearer; none:
//     401 unless a persona says anonymous: true), but its calls reach the
//     personas as anonymous ones.
//   - allowed_hosts: the Host header values the MCP and OTC endpoints
//     accept besides the loopback names, the listener's own host and
//     public_url's host: each a host name (any port), host:port, or "*" for
//     any. Default none. A gateway listening on every interface (behind a
//     Kubernetes Service or a load balancer) needs the names its callers
//     use; any other Host gets 403 (DNS rebinding protection).
//   - data_dir: the directory the gateway keeps state in. Default
//     ./toolwire-data. A relative path is relative to the directory holding
//     the config file (Load), or to WithBaseDir's directory (Parse), not to
//     the process's working directory.
//   - log_format: text (the default) or json.
//   - upstreams: a mapping from upstream name to upstream, kept in file
//     order. At most MaxUpstreams of them; none is allowed (the gateway then
//     serves only its own endpoints).
//   - naming: how upstream tool and prompt names appear downstream.
//   - public_url: the gateway's canonical MCP URL as its callers reach it
//     (behind a proxy, the proxy's URL): the audience OAuth access tokens
//     must be issued for. An http or https URL with a host and no
//     fragment or user information. Default http://<listen>/mcp, with
//     localhost for a listen address on every interface (File.PublicURL).
//   - auth: how callers authenticate (File.Auth). Without it every caller
//     is anonymous. With it (API keys or OAuth), a request without a
//     credential is refused with 401 and a WWW-Authenticate challenge,
//     unless a persona says anonymous: true.
//   - personas: who may see and use which tools, prompts and resources
//     (File.Gateway.Policy, built with policy.New). Without the key every
//     caller the gateway lets in may use everything: with auth, every
//     authenticated caller (callers without credentials are refused);
//     without auth, everyone. With it, a caller no persona matches may
//     use nothing (so an empty personas: denies everyone).
//   - rate_limits: token buckets on tools/call per identity, persona and
//     tool (File.Gateway.Limits, a *ratelimit.Limiter; nil when nothing is
//     limited).
//   - audit: where the audit trail is kept (File.Audit).
//   - enrichment: rules adding context to tool results
//     (File.Gateway.Enrich, built with enrich.New; nil without rules).
//   - admin: the admin page (File.Admin).
//   - store: where replicas of this gateway share what any of them may need
//     to serve a request (File.Store): memory (the default: one replica) or
//     redis, with url (redis:// or rediss://, required; write
//     "${REDIS_URL}", since it may hold a password) and prefix (default
//     toolwire:, 1 to 64 bytes). With redis, every replica serves every
//     2025-era session, resumes every stream and sees every task, and the
//     rate limits are one budget for all (SCALING.md).
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
//   - url: an MCP endpoint (Streamable HTTP, or see transport), http or
//     https with a host, no fragment.
//   - transport: how url is spoken to: http (Streamable HTTP) or sse (the
//     2024-11-05 HTTP+SSE transport: url is its event stream, whose first
//     event, endpoint, names where messages are POSTed; an endpoint on
//     another origin than url's is refused). Left out, it is detected as
//     the specification's backwards-compatibility guidance says:
//     Streamable HTTP, and HTTP+SSE at the same url when the server
//     refuses initialize with 400, 404 or 405 and a GET of url opens an
//     event stream with an endpoint event. An sse upstream's session is
//     its stream: when the stream ends, the calls waiting on it fail
//     (none is sent again) and a new stream is opened and initialized;
//     it serves both downstream eras, as any 2025-era upstream does, and
//     is shown with transport sse in /readyz and the metrics. URL only.
//   - headers: a mapping of HTTP headers sent on every request to url;
//     names are HTTP tokens (RFC 9110 section 5.1), case-insensitively
//     unique, and not one the transport manages itself (Host,
//     Content-Length, Content-Type, Transfer-Encoding, Connection,
//     Mcp-Session-Id, Mcp-Protocol-Version, Last-Event-Id); values are
//     non-empty and free of control characters. URL only.
//   - timeout: a duration (30s, 2m) bounding each call, more than zero
//     and at most MaxTimeout (one hour). Default: the gateway's. URL only.
//   - header_files: a mapping of HTTP headers whose values are read from
//     files when the file is loaded (and reloaded), which keeps a
//     credential out of the config: header_files: {Authorization:
//     /run/secrets/weather-auth}. Relative paths are relative to the
//     config file's directory like data_dir. Each file is a regular file
//     of at most 64 KiB (MaxHeaderFile); trailing newlines (CR, LF) are
//     removed, and what is left is checked like a headers value. A file's
//     content never appears in an error. Names follow the rules of
//     headers, and a name may not be in both. URL only.
//   - oauth: the gateway authenticates to the upstream with an OAuth
//     access token it obtains with the client credentials grant
//     (Upstream.Auth, an *oauth.Authorizer; the url must then be https, or
//     http on a loopback host). Keys: client_id and client_secret
//     (required), scopes (a list, requested in addition to those the
//     upstream asks for), token_endpoint_auth_method (client_secret_basic
//     or client_secret_post; default: one the authorization server
//     supports), allow_private_networks (true lets discovery and the
//     token request reach private addresses, RFC 1918 and the like;
//     default false). The Authorization header is then the token's, so
//     headers and header_files cannot set it. Loading a file again gives
//     the same Authorizer for an unchanged url and oauth, so a reload
//     keeps the upstream and its token. URL only.
//     oauth: token_exchange makes calls go as their caller
//     (Upstream.TokenExchange): for each request forwarded, the caller's
//     validated OAuth access token is exchanged at the authorization
//     server (RFC 8693, subject_token_type access_token) for a token of
//     the upstream's audience, which alone is sent upstream; the caller's
//     token never is. Exchanged tokens are cached per caller until 30 s
//     before they expire (at most limits: max_exchanged_tokens per
//     upstream). A failed exchange is an isError result naming the
//     upstream, audited as upstream_error. Keys: token_endpoint or issuer
//     (exactly one; https, or http on a loopback host; an issuer's RFC
//     8414 metadata names its token endpoint), client_id (required: the
//     gateway's client at that server), client_secret or
//     client_secret_file (a file read like header_files; never echoed),
//     token_endpoint_auth_method (client_secret_basic, the default with a
//     secret, client_secret_post or none), audience and resource (sent as
//     given; with neither, resource is the upstream's url), scopes,
//     on_api_key: refuse (the default: a caller with no OAuth token, an
//     API key or no credentials, gets an isError result) or static (it is
//     served with the upstream's own credentials: oauth client_id and
//     client_secret, or headers, one of which is then required). With
//     token_exchange, client_id and client_secret of oauth itself are
//     optional, and headers may set Authorization (used for the gateway's
//     own requests: listing, API-key callers under static). The upstream
//     must take each request on its own authority: a 2026-07-28 upstream
//     does; a 2025-11-25 one that binds its session to whoever opened it
//     refuses the callers' tokens in the gateway's session.
//   - tools: per tool, by its upstream name, what the catalog says of it
//     instead of the upstream (Upstream.Tools): title and description
//     (non-empty; left out keeps the upstream's) and pin, arguments pinned
//     to a value (a string, a number written as JSON writes it, or a
//     boolean; at most 64). A pinned argument is removed from the tool's
//     advertised inputSchema (properties and required) and added to the
//     arguments of every call forwarded; a call that gives it with another
//     value (as compact JSON), or whose argument names cannot be read
//     plainly, is refused with an isError result naming it, audited as
//     denied, and never reaches the upstream.
//   - max_message_size: the largest message the gateway reads from the
//     upstream (a result, a notification), in bytes, optionally with a
//     KiB, MiB or GiB suffix (8MiB); more than zero and at most
//     MaxMessageSize (1GiB). A larger result fails its call with an
//     isError result. Default: the gateway's, 16MiB
//     (gateway.DefaultMaxUpstreamMessage).
//   - sessions: shared (the default) or per_client. Shared: one session
//     to the upstream (for a command, one child process) serves every
//     caller, so a server that keeps state per session (roots, log level,
//     subscriptions, resources it makes) shows each caller the others'.
//     per_client: each downstream session (2025-11-25) or caller identity
//     (2026-07-28: the API key's name or the OAuth subject; anonymous
//     callers share one) gets its own upstream session, for a command its
//     own child process, started on its first call, declaring that
//     caller's capabilities; the upstream's roots/list is answered with
//     that caller's roots, logging/setLevel reaches that caller's session
//     only, the caller's resources/subscribe reaches its session only, and
//     that session's log messages, resource updates and list changes reach
//     that caller only. A resource the caller's session makes (one the
//     catalog does not list) is read from that session: another caller
//     reading its URI finds nothing. The catalog is what a session of the
//     gateway's own lists at start (it is closed once it has listed).
//     Closing a downstream session closes its upstream session; one
//     holding subscriptions is not idle.
//   - max_sessions: how many per-client sessions the upstream may have
//     open at once, from 1 to MaxMaxSessions (4096); default 16
//     (gateway.DefaultMaxSessions). When all are open, the least recently
//     used idle one is closed for a new caller; when none is idle, the new
//     caller's call gets an isError result naming the limit
//     (per-client session limit (max_sessions 2) reached). per_client
//     only.
//   - idle_timeout: a duration (90s, 5m) after which a per-client session
//     nobody used is closed (its child stopped and reaped), more than zero
//     and at most MaxIdleTimeout (24h); default 5m
//     (gateway.DefaultIdleTimeout). per_client only.
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
// Keys of auth:
//
//   - api_keys: a mapping from an API key's name (1 to 64 of a-z, 0-9,
//     _, . and -) to its hash, "sha256:" and 64 lowercase hex digits, as
//     toolwire gateway hash-key prints it (policy.HashKey). The key
//     itself never goes in the file: a value that looks like a key
//     (policy.IsKeyFormat) is an error, and so are two names with the
//     same hash. File.KeySet builds the set the gateway checks keys
//     against. A caller presenting a key is the identity api_key:NAME.
//   - oauth: accepts OAuth 2.1 access tokens (JWTs, RFC 9068); a caller
//     presenting one is the identity oauth:SUBJECT. Keys: issuer (required:
//     https, or http on a loopback host), audience (the URL tokens must be
//     issued for, like public_url; default public_url), jwks_url (same rule as issuer; default: from the issuer's
//     metadata), scopes (a list every request's token must carry).
//
// Keys of a persona, whose name (the mapping key) is 1 to 64 of a-z 0-9 _
// -. Personas are tried in file order, and the first that matches a
// caller decides its rights. A persona must be able to match someone:
//
//   - identities: a list of identities: a bare name, without a colon (an
//     API key's name or a token subject), api_key:NAME (NAME must be in
//     auth.api_keys) or oauth:SUBJECT. A qualified one matches only a
//     caller of that kind with exactly that name: oauth:urn:x is the
//     subject urn:x, and a token whose subject reads api_key:NAME is not
//     the API key NAME.
//   - claims: a mapping of claim name to value: a token carrying every one
//     of them matches (a list claim matches when it holds the value).
//   - anonymous: true gives the persona to callers without credentials;
//     with auth configured, no other way lets them in.
//   - tools, prompts, resources: {allow: [globs], deny: [globs]} over the
//     names the gateway serves (after renaming) and resource URIs; deny is
//     checked first, then allow, and a name neither matches is refused. In
//     a glob * matches any run of characters and ? one; [ ] { } \ are
//     reserved (policy.CompileGlob).
//
// Keys of rate_limits, limiting tools/call. A limit is off (none), a rate
// like 10/s, 600/m or 1000/h (units s, m, h, or second, minute, hour), or
// a mapping {rate: 600/m, burst: 50}. A burst is how many calls may come
// at once (1 to MaxBurst); a rate alone has a burst of its rate per
// second rounded up, at least 1 (60/m: 1; 100/s: 100). A rate is from one
// call a day (MinRate) to MaxRate a second.
//
//   - identity, persona, tool: the limit of every identity, persona or
//     tool, each its own bucket. Default off.
//   - identities: a mapping from identity to its limit, instead of the
//     identity one: a bare name applies to the API key and the token
//     subject of that name, api_key:NAME (a configured key) or
//     oauth:SUBJECT to one of them (and wins over the bare name), and
//     anonymous to callers without credentials. off exempts one.
//   - personas: a mapping from a persona (one that personas defines) to
//     its limit, instead of the persona one.
//   - tools: a mapping from a served tool name to its limit, instead of
//     the tool one.
//   - max_buckets: how many buckets are kept, 1 to MaxBuckets (default
//     100000); the least recently used goes when it is full.
//   - idle_ttl: a bucket unused this long is dropped (a duration up to 7d;
//     default 10m).
//
// Keys of audit:
//
//   - store: sqlite (the default: <data_dir>/audit.db), postgres or off.
//   - postgres: the connection string with store postgres, where it is
//     required (write "${DATABASE_URL}": it holds a password, and is never
//     printed in an error).
//   - delivery: sync (the default: a call's answer leaves once its record
//     is written) or async (through a queue, audit.NewAsync).
//   - queue_size: the async queue's length, 1 to MaxAuditQueue (default
//     10000). Async only.
//   - fsync: false (the default): a record is written (to a journal beside
//     the database) before the answer leaves, so it survives a crash or
//     SIGKILL of the gateway, but not a power loss or an operating system
//     crash; true syncs every commit to disk, which survives those too and
//     costs about a millisecond per call (BENCHMARKS.md). Store sqlite only.
//   - retention: how long records are kept, a duration that may use d for
//     days (90d, 36h, 1d12h); default 90d; off keeps them forever.
//   - redact: argument names whose values the trail does not keep, at any
//     depth, case-insensitively; default [password, token, secret,
//     authorization] (DefaultAuditRedact); [] redacts nothing.
//   - max_value_bytes: the longest string argument kept whole, a size like
//     max_message_size's (1024, 4KiB); default 1024; off: no limit.
//   - key_file: the file holding the key of the trail's chain (32 random
//     bytes, as 64 hex digits; toolwire audit keygen makes one), so that
//     write access to the database is not enough to forge records
//     (audit.WithKey). Relative to the config file. With store sqlite the
//     default is <data_dir>/audit.key, made (mode 0600) at the first start;
//     a file named here must exist. With store postgres every replica must
//     name the same key: without key_file the trail stays keyless (SHA-256,
//     as before keys) and the gateway warns at every start.
//   - head_log_interval: how often the chain's head (the last record's Seq
//     and hash) is logged when it moved, besides at start and shutdown, for
//     a log store to anchor it (toolwire audit verify --head); a duration
//     of at least 1s, default 1m; off logs it only at start and shutdown.
//
// enrichment is a list of rules (see package gateway/enrich), each a
// mapping with the keys name (required, unique), tools (a list of globs
// over served tool names, at least one), when (a CEL condition), text (a
// list of templates, each a text block), links (a list of mappings of
// uri, name, title, description and mime_type, each a template; uri
// required), structured (a mapping of structuredContent key to template)
// and overwrite (true lets structured replace keys the result has). A
// rule that does not compile is an error at the field concerned. Like
// every string value, templates and conditions are expanded, so write $$
// for a $ ({{$$x := .args}}).
//
// Keys of admin:
//
//   - key_hash: the hash of the key the admin page (on admin_listen,
//     under /admin/) asks for, written like an API key's; the page is
//     served only when it is set, which requires admin_listen. It must not
//     be an API key's hash: the admin key is a key of its own.
//
// Values are strings; a plain number or boolean where a string is expected
// is taken as written (env: {DEBUG: 1}, command: [srv, --port, 8080]).
// Where a boolean is expected (anonymous, fsync, overwrite,
// allow_private_networks) it is true or false, and where a whole number is
// (max_buckets, queue_size, burst) decimal digits; either may also come
// from a variable ("${AUDIT_FSYNC}").
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
// is expected and the like are errors, and so is nesting [...] or {...}
// more than MaxNesting (64) deep. Anchors, aliases, merge keys (<<)
// and tags are not supported, and a file holds one YAML document. A file
// bigger than DefaultMaxSize (1 MiB, see WithReadLimits) is refused, and so
// is an empty one (nothing but whitespace, comments or null: what a
// reload may read of a file being written); write upstreams: {} for a
// gateway without upstreams.
//
// Errors name the file, line and column: gateway.yaml:7:5: unknown key
// "comand" in upstream "files" (did you mean "command"?). Every error
// found is reported, one a line (errors.Join), each an *Error.
package config
