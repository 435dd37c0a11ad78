package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/toolwire/toolwire/internal/httpguard"
	"github.com/toolwire/toolwire/internal/suggest"
	"github.com/toolwire/toolwire/internal/wirejson"
	"github.com/toolwire/toolwire/otc"
	"github.com/toolwire/toolwire/server"
	"github.com/toolwire/toolwire/transport/streamable"
)

// otcServeFlags configure the Open Tool Calling endpoint `serve` runs next
// to MCP.
type otcServeFlags struct {
	addr          string
	apiKeys       []string
	jwtSecretFile string
	jwtAudience   string

	// Taken from serve's HTTP flags by guard.
	allowedHosts   []string
	allowedOrigins []string
	writeTimeout   time.Duration

	// authenticate, when set, wraps the whole OTC handler: the gateway's
	// own authentication of callers.
	authenticate func(http.Handler) http.Handler
	// maxConns bounds the connections held at once; 0:
	// streamable.DefaultMaxConns.
	maxConns int
}

// guard gives the OTC listener the Host and Origin policy and the write
// timeout of the MCP endpoint: --allowed-host (default: the loopback names
// plus the --otc-addr host), --allowed-origin and --write-timeout.
func (f *otcServeFlags) guard(s *serveFlags, logger *slog.Logger) {
	f.allowedHosts = s.allowedHosts
	if len(f.allowedHosts) == 0 {
		f.allowedHosts = defaultAllowedHosts(f.addr, logger)
	}
	f.allowedOrigins = s.allowedOrigins
	f.writeTimeout = s.writeTimeout
}

func (f *otcServeFlags) register(cmd *cobra.Command) {
	fl := cmd.Flags()
	fl.StringVar(&f.addr, "otc-addr", "", "also serve the tools over Open Tool Calling 1.0 at this address (e.g. 127.0.0.1:8081)")
	fl.StringSliceVar(&f.apiKeys, "otc-api-key", nil, "OTC: accept this OTC-API-Key/OXP-API-Key; repeatable (default: $TOOLWIRE_OTC_API_KEY, else no key auth)")
	fl.StringVar(&f.jwtSecretFile, "otc-jwt-secret-file", "", "OTC: accept HS256 bearer tokens signed with the secret in this file (at least 32 bytes)")
	fl.StringVar(&f.jwtAudience, "otc-jwt-audience", "", "OTC: the audience bearer tokens must name when they carry one")
}

// serveOTC serves srv's tools over OTC on f.addr until ctx ends. It returns
// once the listener is up; errors after that go to errc.
func serveOTC(ctx context.Context, srv *server.Server, f *otcServeFlags, logger *slog.Logger) (<-chan error, error) {
	opts := []otc.Option{otc.WithLogger(logger),
		otc.WithAllowedHosts(f.allowedHosts...), otc.WithAllowedOrigins(f.allowedOrigins...)}
	if f.writeTimeout > 0 {
		opts = append(opts, otc.WithLimits(otc.Limits{WriteTimeout: f.writeTimeout}))
	}
	keys := f.apiKeys
	if len(keys) == 0 {
		if k := os.Getenv("TOOLWIRE_OTC_API_KEY"); k != "" {
			keys = []string{k}
		}
	}
	if len(keys) > 0 {
		opts = append(opts, otc.WithAPIKeys(keys...))
	}
	if f.jwtSecretFile != "" {
		secret, err := os.ReadFile(f.jwtSecretFile)
		if err != nil {
			return nil, usageError{fmt.Sprintf("--otc-jwt-secret-file: %v", err)}
		}
		opts = append(opts, otc.WithJWT(bytes.TrimSpace(secret), f.jwtAudience))
	}
	h, err := otc.NewHandler(otc.NewServerBackend(srv), opts...)
	if err != nil {
		return nil, usageError{err.Error()}
	}
	if err := h.Check(ctx); err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", f.addr)
	if err != nil {
		return nil, fmt.Errorf("--otc-addr: %w", err)
	}
	var handler http.Handler = h
	if f.authenticate != nil {
		handler = f.authenticate(h)
	}
	// Calls may run as long as their tools; the connections held at once
	// are bounded like the MCP listener's.
	n := f.maxConns
	if n <= 0 {
		n = streamable.DefaultMaxConns
	}
	errc, _ := httpguard.ServeCalls(ctx, ln, handler, n)
	logger.Info("serving the tools over Open Tool Calling 1.0", "otc_endpoint", "http://"+ln.Addr().String())
	return errc, nil
}

const otcExitHelp = `With --otc, exit status:
  0  success
  2  usage error (bad flags or arguments, unknown tool id)
  3  ERR_OTC_TRANSPORT  the server could not be reached or did not answer as OTC
  5  ERR_OTC_REJECTED   the server refused the call before running it (HTTP 400, 401, 422, ...)
  6  ERR_OTC_TOOL_ERROR the tool ran and failed (success: false)`

// runOTCCall is `toolwire call --otc URL TOOL_ID [ARGS]`: it reads the tool's
// input schema from GET /tools to type key=value arguments, calls it and
// shows the value, or the error with its retry guidance.
func runOTCCall(cmd *cobra.Command, f *callFlags, args []string) error {
	if len(args) == 0 {
		return usageError{"no tool id given: toolwire call --otc URL TOOL_ID [JSON | key=value ...]"}
	}
	toolID, argv := args[0], args[1:]
	var copts []otc.ClientOption
	key := f.otcAPIKey
	if key == "" {
		key = os.Getenv("TOOLWIRE_OTC_API_KEY")
	}
	if key != "" {
		copts = append(copts, otc.WithAPIKey(key))
	}
	if f.otcToken != "" {
		copts = append(copts, otc.WithBearerToken(f.otcToken))
	}
	// --timeout bounds each request (0: no limit); the client follows
	// redirects only within the server's origin whatever the HTTP client.
	copts = append(copts, otc.WithHTTPClient(&http.Client{Timeout: f.timeout}))
	c, err := otc.NewClient(f.otcURL, copts...)
	if err != nil {
		return usageError{err.Error()}
	}
	ctx := cmd.Context()
	defs, err := c.ListTools(ctx)
	if err != nil {
		return otcFail(cmd, err)
	}
	def, ids := findOTCTool(defs, toolID)
	if def == nil {
		msg := fmt.Sprintf("unknown tool %q", toolID)
		if near := suggest.Closest(toolID, ids, 3); len(near) > 0 {
			msg += "; did you mean " + strings.Join(near, ", ") + "?"
		}
		return usageError{msg}
	}
	input, err := parseArgs(argv, def.InputSchema)
	if err != nil {
		return err
	}
	resp, err := c.Call(ctx, toolID, input)
	if err != nil {
		return otcFail(cmd, err)
	}
	out := cmd.OutOrStdout()
	if f.asJSON {
		b, err := json.MarshalIndent(resp, "", "  ")
		if err != nil {
			return err
		}
		fmt.Fprintln(out, string(b))
	} else if resp.Success {
		printOTCValue(cmd, resp.Value)
	}
	if !resp.Success {
		e := resp.Error
		if e == nil {
			e = &otc.ToolError{Message: "the tool call failed"}
		}
		w := cmd.ErrOrStderr()
		fmt.Fprintln(w, e.Message)
		if e.DeveloperMessage != "" {
			fmt.Fprintln(w, "developer message:", e.DeveloperMessage)
		}
		if e.CanRetry {
			after := ""
			if e.RetryAfterMs != nil {
				after = fmt.Sprintf(" after %d ms", *e.RetryAfterMs)
			}
			fmt.Fprintf(w, "can retry%s\n", after)
		}
		if e.AdditionalPromptContent != "" {
			fmt.Fprintln(w, "additional prompt content:", e.AdditionalPromptContent)
		}
		fmt.Fprintln(w, "toolwire: ERR_OTC_TOOL_ERROR")
		exit(6)
	}
	return nil
}

// findOTCTool finds a definition by id, with or without its @version; it
// also returns every id for suggestions.
func findOTCTool(defs []otc.ToolDefinition, id string) (*otc.ToolDefinition, []string) {
	base, _, _ := strings.Cut(id, "@")
	var found *otc.ToolDefinition
	ids := make([]string, 0, len(defs))
	for i := range defs {
		d := &defs[i]
		ids = append(ids, d.ID)
		if d.ID == id {
			return d, ids
		}
		if b, _, _ := strings.Cut(d.ID, "@"); b == base && found == nil {
			found = d
		}
	}
	return found, ids
}

// printOTCValue prints a string value as text, null as nothing, and any
// other value as indented JSON.
func printOTCValue(cmd *cobra.Command, v json.RawMessage) {
	out := cmd.OutOrStdout()
	var s string
	if err := wirejson.Unmarshal(v, &s); err == nil {
		fmt.Fprintln(out, s)
		return
	}
	if len(v) == 0 || string(v) == "null" {
		return
	}
	var buf bytes.Buffer
	if err := json.Indent(&buf, v, "", "  "); err != nil {
		fmt.Fprintln(out, string(v))
		return
	}
	fmt.Fprintln(out, buf.String())
}

// otcFail reports a failed request under its error name and exit status.
func otcFail(cmd *cobra.Command, err error) error {
	var he *otc.HTTPError
	name, status := "ERR_OTC_TRANSPORT", 3
	if errors.As(err, &he) && he.Status >= 400 && he.Status < 500 {
		name, status = "ERR_OTC_REJECTED", 5
	}
	fmt.Fprintf(cmd.ErrOrStderr(), "toolwire: %s: %v\n", name, err)
	exit(status)
	return nil
}
