package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"

	"github.com/spf13/cobra"
	"github.com/toolwire/toolwire/client"
	"github.com/toolwire/toolwire/internal/suggest"
	"github.com/toolwire/toolwire/mcp"
)

type callFlags struct {
	targetFlags
	asJSON  bool
	saveDir string
	task    bool // --task: run the call as a task (task.go)

	otcURL    string // call an Open Tool Calling server instead
	otcAPIKey string
	otcToken  string
}

func newCallCmd() *cobra.Command {
	var f callFlags
	cmd := &cobra.Command{
		Use:   "call (URL TOOL [ARGS] | TOOL [ARGS] -- COMMAND [ARG...])",
		Short: "Call a tool on an MCP server and show its result",
		Long: "Call a tool and show its result: text as text, images, audio and binary resources saved to\n" +
			"files (their paths printed), resource links and embedded text resources described, annotations\n" +
			"shown, structured content pretty-printed. A tool error prints its content to stderr.\n\n" +
			"Arguments are one JSON object, or key=value pairs typed by the tool's inputSchema (so a=7 sends\n" +
			"the number 7 when a is a number); key:=JSON sends a raw JSON value. For a tool the server does not\n" +
			"list (a gateway's persona may hide it) there is no schema: a value that is JSON is sent as that\n" +
			"JSON (n=3 a number, flag=true a boolean, x=null, tags=[1,2] an array, s='\"3\"' the string \"3\"),\n" +
			"any other as a string (name=alice). Such a call is sent all the same: the server decides, and\n" +
			"its error, if any, is shown with the nearest names it does list. For example:\n\n" +
			"  toolwire call http://127.0.0.1:8080/mcp get-sum a=7 b=5\n" +
			"  toolwire call echo '{\"message\":\"hi\"}' -- node server.js stdio\n" +
			"  toolwire call --otc http://127.0.0.1:8081 toolwire_reference.get_sum a=7 b=5\n" +
			"  toolwire call --task http://127.0.0.1:8080/mcp build target=all\n\n" +
			"--task runs the call as an MCP task (a tool whose taskSupport is required always runs as one):\n" +
			"its status and status messages are shown on stderr as they change, the result printed as for any\n" +
			"call. Ctrl-C while waiting asks whether to cancel the task or leave it running (left running when\n" +
			"stdin is not a terminal); `toolwire task TARGET ID --wait` picks it up again.\n\n" + exitHelp + "\n\n" + otcExitHelp,
		RunE: func(cmd *cobra.Command, args []string) error {
			return finish(cmd, runCall(cmd, &f, args))
		},
	}
	f.register(cmd)
	cmd.Flags().BoolVar(&f.asJSON, "json", false, "print the raw result as JSON")
	cmd.Flags().BoolVar(&f.task, "task", false, "run the call as a task: show its status as it changes; Ctrl-C asks whether to cancel it or leave it running")
	cmd.Flags().StringVar(&f.saveDir, "save-dir", "", "directory for saved images, audio and blobs (default: a new temporary directory)")
	cmd.Flags().StringVar(&f.otcURL, "otc", "", "call TOOL_ID on this Open Tool Calling 1.0 server instead of an MCP server")
	cmd.Flags().StringVar(&f.otcAPIKey, "otc-api-key", "", "OTC: API key to send (default: $TOOLWIRE_OTC_API_KEY)")
	cmd.Flags().StringVar(&f.otcToken, "otc-token", "", "OTC: bearer token to send")
	return cmd
}

func runCall(cmd *cobra.Command, f *callFlags, args []string) error {
	if f.otcURL != "" {
		return runOTCCall(cmd, f, args)
	}
	t, rest, err := splitTarget(cmd, args)
	if err != nil {
		return err
	}
	if len(rest) == 0 {
		return usageError{"no tool given: toolwire call TARGET TOOL [JSON | key=value ...]"}
	}
	name, argv := rest[0], rest[1:]
	f.enableElicitation()
	ctx := cmd.Context()
	c, tools, err := f.connectAndList(ctx, t)
	if err != nil {
		return err
	}
	defer c.Close()
	var tool *mcp.Tool
	names := make([]string, 0, len(tools))
	for _, tl := range tools {
		names = append(names, tl.Name)
		if tl.Name == name {
			tool = tl
		}
	}
	// A tool this client does not see is called all the same: the server
	// decides (a gateway's persona may deny it, and audits the denial),
	// and a call it does not know fails with its own error, to which the
	// nearest listed names are added.
	var schema json.RawMessage
	if tool != nil {
		schema = tool.InputSchema
	}
	arguments, err := parseArgs(argv, schema)
	if err != nil {
		return err
	}
	err = callTool(cmd, f, c, t, tool, name, arguments)
	if tool == nil && client.CodeOf(err) == client.CodeJSONRPC {
		err = unlistedToolError{err: err, hint: unlistedHint(f, t, name, names)}
	}
	return err
}

// unlistedToolError is the server's error for a call of a tool the client
// did not see listed, with a hint of what it does list.
type unlistedToolError struct {
	err  error
	hint string
}

func (e unlistedToolError) Error() string { return e.err.Error() + "\n" + e.hint }
func (e unlistedToolError) Unwrap() error { return e.err }

// unlistedHint names the listed tools nearest to name, or how many the
// server lists and how to see them, as a command with the credentials
// given to this one.
func unlistedHint(f *callFlags, t target, name string, names []string) string {
	msg := fmt.Sprintf("toolwire: %q is not among the tools the server lists to this caller", name)
	switch near := suggest.Closest(name, names, 3); {
	case len(near) > 0:
		return msg + "; did you mean " + strings.Join(near, ", ") + "?"
	case len(names) > 0:
		return msg + fmt.Sprintf("; it lists %d: %s", len(names), listCommand(t, &f.targetFlags))
	}
	return msg + "; " + errNoTools.Error()
}

// callTool sends the call (as a task when asked or required) and prints
// its result; tool is nil for a tool the server did not list.
func callTool(cmd *cobra.Command, f *callFlags, c *client.Client, t target, tool *mcp.Tool, name string, arguments json.RawMessage) error {
	ctx := cmd.Context()
	var callOpts []client.CallOption
	bar := &progressBar{w: cmd.ErrOrStderr()}
	if fd, ok := cmd.ErrOrStderr().(*os.File); ok && isTerminal(fd) {
		callOpts = append(callOpts, client.WithProgress(bar.update))
	}
	if !f.task && tool != nil && tool.Execution != nil && tool.Execution.TaskSupport == mcp.TaskRequired {
		fmt.Fprintf(cmd.ErrOrStderr(), "toolwire: %s must run as a task (its execution.taskSupport is required): running it as one\n", name)
		f.task = true
	}
	if f.task {
		return runTaskCall(cmd, f, c, t, name, arguments, bar, callOpts)
	}
	res, err := c.CallTool(ctx, name, arguments, callOpts...)
	bar.clear()
	if client.IsTaskRequired(err) {
		// A 2026-07-28 server may show taskSupport only to clients that
		// declare the tasks extension; it refuses the plain call then.
		fmt.Fprintf(cmd.ErrOrStderr(), "toolwire: %s runs only as a task (the server refused a plain call): running it as one\n", name)
		return runTaskCall(cmd, f, c, t, name, arguments, bar, callOpts)
	}
	return printResult(cmd, f.asJSON, &renderer{tool: name, saveDir: f.saveDir}, res, err)
}

// printResult prints a tools/call result as `call` does: on stdout, or for
// a tool error (returned as it is) on stderr.
func printResult(cmd *cobra.Command, asJSON bool, r *renderer, res *mcp.CallToolResult, err error) error {
	var te *client.ToolError
	if errors.As(err, &te) && res != nil {
		if asJSON {
			printJSON(cmd.ErrOrStderr(), res)
		} else if rerr := r.render(cmd.ErrOrStderr(), res); rerr != nil {
			return rerr
		}
		if len(res.Content) == 0 {
			return err
		}
		return shownToolError{te}
	}
	if err != nil {
		return err
	}
	if asJSON {
		return printJSON(cmd.OutOrStdout(), res)
	}
	return r.render(cmd.OutOrStdout(), res)
}

// shownToolError is a tool error whose content was printed already: its
// last line names the tool without repeating the message.
type shownToolError struct{ *client.ToolError }

func (e shownToolError) Error() string {
	return fmt.Sprintf("tool %q failed (its error is above)", e.Tool)
}

func (e shownToolError) Unwrap() error { return e.ToolError }

func printJSON(w io.Writer, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	_, err = fmt.Fprintln(w, string(b))
	return err
}

// progressBar draws call progress on one terminal line.
type progressBar struct {
	mu    sync.Mutex
	w     io.Writer
	drawn bool
}

func (b *progressBar) update(p client.Progress) {
	b.mu.Lock()
	defer b.mu.Unlock()
	const width = 30
	line := ""
	if p.Total > 0 {
		frac := min(max(p.Progress/p.Total, 0), 1)
		n := int(frac * width)
		line = fmt.Sprintf("[%s%s] %3.0f%%", strings.Repeat("#", n), strings.Repeat(".", width-n), frac*100)
	} else {
		line = fmt.Sprintf("[progress %g]", p.Progress)
	}
	if p.Message != "" {
		line += " " + oneLine(p.Message, 40)
	}
	fmt.Fprintf(b.w, "\r\033[K%s", line)
	b.drawn = true
}

func (b *progressBar) clear() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.drawn {
		fmt.Fprint(b.w, "\r\033[K")
		b.drawn = false
	}
}
