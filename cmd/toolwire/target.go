package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/toolwire/toolwire/client"
	"github.com/toolwire/toolwire/internal/units"
	"github.com/toolwire/toolwire/internal/wirejson"
	"github.com/toolwire/toolwire/mcp"
)

// targetFlags are the connection flags `tools` and `call` share.
type targetFlags struct {
	headers        []string
	era            string
	wire           string // --transport: auto, http or sse (URL targets)
	timeout        time.Duration
	maxMessageSize int
	maxPages       int
	noValidate     bool
	verbose        bool
	logLevel       string           // --log-level: "" asks for no log messages (loglevel.go)
	oauth          oauthTargetFlags // --token-dir, --client-id, --client-secret (auth_target.go)

	// Set by register's PreRunE from the running command: where log
	// messages and elicitation forms go, and where answers come from.
	stdout, stderr io.Writer
	stdin          io.Reader
	extra          []client.Option // added by a command before connecting (elicit.go)
	console        *console        // the terminal elicitation reads, once enabled (task.go asks on it too)
}

// newListCmd makes a command that lists one kind of entry of a server
// (tools, prompts, resources, tasks): the server is its one argument, the
// table is what it prints, and --json (described by jsonHelp) prints the
// list as JSON instead.
func newListCmd(name, short, long, jsonHelp string, run func(cmd *cobra.Command, f *targetFlags, asJSON bool, args []string) error) *cobra.Command {
	var f targetFlags
	var asJSON bool
	cmd := &cobra.Command{
		Use:   name + " (URL | -- COMMAND [ARG...])",
		Short: short,
		Long:  long + exitHelp,
		RunE: func(cmd *cobra.Command, args []string) error {
			return finish(cmd, run(cmd, &f, asJSON, args))
		},
	}
	f.register(cmd)
	cmd.Flags().BoolVar(&asJSON, "json", false, jsonHelp)
	return cmd
}

func (f *targetFlags) register(cmd *cobra.Command) {
	fl := cmd.Flags()
	fl.StringArrayVarP(&f.headers, "header", "H", nil, `extra HTTP header "Name: value" (repeatable)`)
	fl.StringVar(&f.era, "era", "auto", "protocol era: auto (probe 2026-07-28, fall back to initialize), modern or legacy")
	fl.StringVar(&f.wire, "transport", "auto", "HTTP transport of a URL: auto (Streamable HTTP, falling back to the 2024-11-05\n"+
		"HTTP+SSE transport when initialize is refused with 400, 404 or 405), http (Streamable HTTP only) or sse\n"+
		"(HTTP+SSE only: GET the URL's event stream, POST to its endpoint)")
	fl.Var(units.Duration(&f.timeout, client.DefaultTimeout), "timeout", "longest a request may take (0: no limit)")
	fl.Var(units.Size(&f.maxMessageSize, client.DefaultMaxMessageSize, units.MaxSize), "max-message-size", "largest message accepted from the server, in bytes")
	fl.IntVar(&f.maxPages, "max-pages", client.DefaultMaxPages, "most pages of tools/list followed before giving up (exit 4), 1 or more")
	fl.BoolVar(&f.noValidate, "no-validate", false, "do not check structuredContent against the tool's outputSchema")
	fl.BoolVarP(&f.verbose, "verbose", "v", false, "log protocol diagnostics and the server's stderr to stderr")
	fl.StringVar(&f.logLevel, "log-level", "", "ask the server for log messages at LEVEL and above (debug, info, notice, warning, error, critical,\n"+
		"alert, emergency) and show them on stderr as [level] logger: data (default: none asked for)")
	f.oauth.register(cmd)
	cmd.PreRunE = func(cmd *cobra.Command, _ []string) error {
		f.stdout, f.stderr, f.stdin = cmd.OutOrStdout(), syncWriter(cmd.ErrOrStderr()), cmd.InOrStdin()
		return f.checkLogLevel()
	}
}

// target is where the server is: an http(s) URL first, or a command after
// "--" at the end.
type target struct {
	url     string
	command []string
}

func (t target) String() string {
	if t.url != "" {
		return t.url
	}
	return strings.Join(t.command, " ")
}

// credFlags are the flags of f that carry credentials or say where they
// are (-H, --token-dir, --client-id, --client-secret given on the command
// line), shell-quoted, for a hint that prints a command to run next: it
// must reach the server as this one did.
func (f *targetFlags) credFlags() []string {
	var out []string
	for _, h := range f.headers {
		out = append(out, "-H", shellQuote(h))
	}
	for _, fl := range []struct{ name, value string }{
		{"--token-dir", f.oauth.tokenDir}, {"--client-id", f.oauth.clientID}, {"--client-secret", f.oauth.clientSecret},
	} {
		if fl.value != "" && (fl.name != "--client-secret" || os.Getenv(envClientSecret) != fl.value) {
			out = append(out, fl.name, shellQuote(fl.value))
		}
	}
	return out
}

// commandLine is a toolwire command against t, for a hint: the words,
// the credentials flags of f, then t (its URL, or -- and its command).
func commandLine(t target, f *targetFlags, words ...string) string {
	parts := append([]string{"toolwire"}, words...)
	if f != nil {
		parts = append(parts, f.credFlags()...)
	}
	if t.url != "" {
		return strings.Join(append(parts, shellQuote(t.url)), " ")
	}
	parts = append(parts, "--")
	for _, a := range t.command {
		parts = append(parts, shellQuote(a))
	}
	return strings.Join(parts, " ")
}

// listCommand is the `toolwire tools` command for t with f's credentials.
func listCommand(t target, f *targetFlags) string { return commandLine(t, f, "tools") }

// shellQuote quotes s for a POSIX shell when it holds anything but
// letters, digits and -_./:=@,+%.
func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./:=@,+%") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// splitTarget separates the server from the other arguments: a leading
// http(s):// URL, or everything after "--".
func splitTarget(cmd *cobra.Command, args []string) (target, []string, error) {
	if dash := cmd.ArgsLenAtDash(); dash >= 0 {
		if dash == len(args) {
			return target{}, nil, usageError{"nothing after --: give the server command to run, e.g. -- node server.js stdio"}
		}
		return target{command: args[dash:]}, args[:dash], nil
	}
	if len(args) > 0 && (strings.HasPrefix(args[0], "http://") || strings.HasPrefix(args[0], "https://")) {
		return target{url: args[0]}, args[1:], nil
	}
	return target{}, nil, usageError{"no server given: put an http(s):// URL first, or a command after -- at the end"}
}

func (f *targetFlags) options() ([]client.Option, error) {
	timeout := f.timeout
	if timeout == 0 {
		timeout = -1 // --timeout 0 means no limit; client.WithTimeout(0) means the default
	}
	if f.maxPages < 1 {
		return nil, usageError{fmt.Sprintf("invalid --max-pages %d: want 1 or more", f.maxPages)}
	}
	opts := []client.Option{client.WithLimits(client.Limits{MaxMessageBytes: f.maxMessageSize, MaxPages: f.maxPages}), client.WithTimeout(timeout)}
	if f.noValidate {
		opts = append(opts, client.WithOutputValidation(false))
	}
	opts = append(opts, f.logOptions()...)
	switch f.era {
	case "auto":
		opts = append(opts, client.WithEra(mcp.EraAuto))
	case "modern":
		opts = append(opts, client.WithEra(mcp.EraModern))
	case "legacy":
		opts = append(opts, client.WithEra(mcp.EraLegacy))
	default:
		return nil, usageError{fmt.Sprintf("invalid --era %q: want auto, modern or legacy", f.era)}
	}
	var w io.Writer = io.Discard
	level := slog.LevelDebug
	if f.verbose {
		w = os.Stderr
	}
	opts = append(opts, client.WithLogger(slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: level}))))
	opts = append(opts, f.extra...)
	return opts, nil
}

func (f *targetFlags) transport(t target) (client.Transport, error) {
	if t.url != "" {
		h := http.Header{}
		for _, kv := range f.headers {
			k, v, ok := strings.Cut(kv, ":")
			if !ok || strings.TrimSpace(k) == "" {
				return nil, usageError{fmt.Sprintf("invalid --header %q: want \"Name: value\"", kv)}
			}
			h.Add(strings.TrimSpace(k), strings.TrimSpace(v))
		}
		a, err := f.oauth.authFor(t.url, h, f.errOut())
		if err != nil {
			return nil, err
		}
		var auth client.HTTPAuth // nil, not a nil *cliAuth, without OAuth
		if a != nil {
			auth = a
		}
		return f.httpTransport(t.url, h, auth)
	}
	if len(f.headers) > 0 {
		return nil, usageError{"--header applies to http(s) servers only"}
	}
	if f.wire != "auto" && f.wire != "" {
		return nil, usageError{"--transport applies to http(s) servers only"}
	}
	if f.oauth.clientID != "" || f.oauth.clientSecret != "" {
		return nil, usageError{"--client-id and --client-secret apply to http(s) servers only"}
	}
	return &client.Command{Path: t.command[0], Args: t.command[1:]}, nil
}

// connect opens a client to the target.
func (f *targetFlags) connect(ctx context.Context, t target, opts []client.Option) (*client.Client, error) {
	tr, err := f.transport(t)
	if err != nil {
		return nil, err
	}
	c, err := client.Connect(ctx, tr, opts...)
	if err != nil {
		return nil, err
	}
	f.applyLogLevel(ctx, c)
	return c, nil
}

// Exit statuses of `tools` and `call`; 2 is a usage error, as everywhere.
var exitStatuses = map[client.Code]int{
	client.CodeTransport:      3,
	client.CodeProtocol:       4,
	client.CodeJSONRPC:        5,
	client.CodeToolError:      6,
	client.CodeSessionInvalid: 7,
}

// connectAndList connects to the target and lists its tools; on success the
// caller closes the client.
func (f *targetFlags) connectAndList(ctx context.Context, t target) (*client.Client, []*mcp.Tool, error) {
	opts, err := f.options()
	if err != nil {
		return nil, nil, err
	}
	c, err := f.connect(ctx, t, opts)
	if err != nil {
		return nil, nil, err
	}
	tools, err := c.ListTools(ctx)
	if err != nil {
		c.Close()
		return nil, nil, err
	}
	return c, tools, nil
}

const exitHelp = `Exit status:
  0  success
  1  any other failure
  2  usage error (bad flags or arguments)
  3  ERR_MCP_TRANSPORT        the server could not be reached, stopped answering, or refused the request
                              (401/403; "authorization required: run toolwire login URL" when a login would help)
  4  ERR_MCP_PROTOCOL         the server's answer broke MCP (malformed JSON/SSE, bad content, outputSchema
                              mismatch), asked for input the CLI cannot give (sampling; elicitation when
                              stdin is not a terminal), or its tool list ran past --max-pages pages
  5  ERR_MCP_JSON_RPC_ERROR   the server answered with a JSON-RPC error (an unknown tool, for one), or
                              (--era modern) does not speak 2026-07-28
  6  ERR_MCP_TOOL_ERROR       the tool ran and reported failure (isError)
  7  ERR_MCP_SESSION_INVALID  the server rejected the HTTP session again after re-initializing`

// finish turns a client error into its name on stderr and its own exit
// status. Other errors go back to main (exit 1, or 2 for usage errors).
func finish(cmd *cobra.Command, err error) error {
	if err == nil {
		return nil
	}
	code := client.CodeOf(err)
	status, ok := exitStatuses[code]
	if !ok {
		return err
	}
	fmt.Fprintf(cmd.ErrOrStderr(), "toolwire: %s: %s\n", code, describe(cmd, err))
	exit(status)
	return nil
}

// describe says what went wrong in the CLI's terms: a cause the user can
// change with a flag names the flag.
func describe(cmd *cobra.Command, err error) string {
	var lr *loginRequiredError
	if errors.As(err, &lr) {
		return lr.Error()
	}
	var ee *client.EraError
	if errors.As(err, &ee) {
		return fmt.Sprintf("the server does not speak protocol version %s (%v); use --era auto (the default) or --era legacy", ee.Version, ee.Err)
	}
	var nf *client.ResourceNotFoundError
	if errors.As(err, &nf) {
		return fmt.Sprintf("resource %q not found: the server answered %d %q (toolwire resources lists what it has)", nf.URI, nf.Err.Code, nf.Err.Message)
	}
	if msg := forbiddenMessage(err); msg != "" {
		return "the server refuses this caller (HTTP 403): " + msg
	}
	var pe *client.ProtocolError
	if errors.As(err, &pe) && pe.Op == mcp.MethodListTools && strings.Contains(pe.Reason, " pages") {
		n, _ := cmd.Flags().GetInt("max-pages")
		return fmt.Sprintf("protocol: tools/list: the server's tool list has more than %d pages; raise the limit with --max-pages", n)
	}
	return err.Error()
}

// forbiddenMessage is the JSON-RPC error message of a 403 answer (a
// gateway's "no persona admits CALLER", say), "" for any other error.
func forbiddenMessage(err error) string {
	var te *client.TransportError
	if !errors.As(err, &te) || te.StatusCode != http.StatusForbidden || te.Err == nil {
		return ""
	}
	text := te.Err.Error()
	i := strings.IndexByte(text, '{')
	if i < 0 {
		return ""
	}
	var body struct {
		Error struct {
			Message string `json:"message"`
		} `json:"error"`
	}
	if wirejson.Unmarshal([]byte(text[i:]), &body) != nil {
		return ""
	}
	return body.Error.Message
}

// exit ends the process; a variable so a test can replace it.
var exit = os.Exit

// isTerminal reports whether f is a character device (a terminal).
func isTerminal(f *os.File) bool {
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

var errNoTools = errors.New("the server lists no tools")
