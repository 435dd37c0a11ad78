package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	"github.com/toolwire/toolwire/client"
	"github.com/toolwire/toolwire/mcp"
)

// errInterrupted ends a wait for a task that Ctrl-C stopped (exit 130); the
// task id and how to pick the wait up again have been printed.
var errInterrupted = errors.New("interrupted")

// cancelTimeout bounds the tasks/cancel sent after Ctrl-C.
const cancelTimeout = 10 * time.Second

// runTaskCall runs `call --task`: the call is started as a task, its status
// shown on stderr as it changes, and its result printed as `call` prints
// one.
func runTaskCall(cmd *cobra.Command, f *callFlags, c *client.Client, t target, name string, args any, bar *progressBar, opts []client.CallOption) error {
	w := f.errOut()
	start, err := c.CallToolTask(cmd.Context(), name, args, opts...)
	bar.clear()
	r := &renderer{tool: name, saveDir: f.saveDir}
	if errors.Is(err, client.ErrTasksUnsupported) {
		return fmt.Errorf("cannot run %s as a task: %w", name, err)
	}
	if start == nil {
		return err
	}
	if start.Task == nil {
		fmt.Fprintln(w, "toolwire: the server answered at once, without a task")
		return printResult(cmd, f.asJSON, r, start.Result, err)
	}
	id := start.Task.TaskID
	show := taskStatusPrinter(w, bar)
	show(*start.Task)
	res, err := awaitTask(cmd, &f.targetFlags, c, t, id, func(ctx context.Context) (*mcp.CallToolResult, error) {
		return start.Wait(ctx, append(slices.Clip(opts), client.WithTaskStatus(show))...)
	})
	bar.clear()
	return printResult(cmd, f.asJSON, r, res, err)
}

// taskStatusPrinter shows each new status (and status message) of a task
// on stderr, one line each.
func taskStatusPrinter(w io.Writer, bar *progressBar) func(mcp.Task) {
	var mu sync.Mutex
	var last string
	return func(t mcp.Task) {
		line := fmt.Sprintf("toolwire: task %s: %s", t.TaskID, statusWords(t.Status))
		if t.StatusMessage != "" {
			line += ": " + oneLine(t.StatusMessage, 200)
		}
		mu.Lock()
		defer mu.Unlock()
		if line == last {
			return
		}
		last = line
		bar.clear()
		fmt.Fprintln(w, line)
	}
}

// statusWords spells a task status for people.
func statusWords(s mcp.TaskStatus) string {
	if s == mcp.TaskInputRequired {
		return "input required"
	}
	return string(s)
}

// awaitTask waits for task id with wait, under the command's context,
// which Ctrl-C ends. Then, when stdin is a terminal, it asks whether to
// cancel the task or leave it running (left running otherwise), and says
// how to wait for it again.
func awaitTask(cmd *cobra.Command, f *targetFlags, c *client.Client, t target, id string, wait func(context.Context) (*mcp.CallToolResult, error)) (*mcp.CallToolResult, error) {
	ctx := cmd.Context()
	res, err := wait(ctx)
	if err == nil || ctx.Err() == nil {
		return res, err
	}
	w := f.errOut()
	cancel := false
	if in := f.stdin; in != nil && stdinIsTerminal(in) {
		fmt.Fprintf(w, "\ntoolwire: interrupted. Cancel task %s, or leave it running? [c]ancel / [L]eave: ", id)
		cancel = strings.HasPrefix(strings.ToLower(strings.TrimSpace(readLine(f, in))), "c")
	}
	if cancel {
		cctx, stop := context.WithTimeout(context.WithoutCancel(ctx), cancelTimeout)
		defer stop()
		if err := c.CancelTask(cctx, id); err != nil {
			fmt.Fprintf(w, "toolwire: could not cancel task %s: %v\n", id, err)
		} else {
			fmt.Fprintf(w, "toolwire: task %s cancelled\n", id)
		}
		fmt.Fprintf(w, "toolwire: show it with: %s\n", taskCommand(t, id, "", f.credFlags()...))
	} else {
		fmt.Fprintf(w, "toolwire: task %s left running; wait for its result with: %s\n", id, taskCommand(t, id, "--wait", f.credFlags()...))
	}
	return nil, errInterrupted
}

// readLine reads one answer from the terminal: through the elicitation
// console when there is one (it may have read ahead), else from in.
func readLine(f *targetFlags, in io.Reader) string {
	if con := f.console; con != nil {
		con.mu.Lock()
		defer con.mu.Unlock()
		line, _ := con.in.ReadString('\n')
		return line
	}
	line, _ := bufio.NewReader(in).ReadString('\n')
	return line
}

// taskCommand is the `toolwire task` command line for task id on t, with
// the credentials flags given (credFlags).
func taskCommand(t target, id, flag string, creds ...string) string {
	parts := []string{"toolwire", "task"}
	parts = append(parts, creds...)
	if t.url != "" {
		parts = append(parts, t.url)
	}
	parts = append(parts, id)
	if flag != "" {
		parts = append(parts, flag)
	}
	if t.url == "" {
		parts = append(append(parts, "--"), t.command...)
	}
	return strings.Join(parts, " ")
}

func newTasksCmd() *cobra.Command {
	return newListCmd("tasks", "List the tasks of an MCP server (2025-11-25)",
		"List the tasks an MCP server runs for this client (tasks/list) as a table of id, status,\n"+
			"last update and status message. Only 2025-11-25 servers list tasks: 2026-07-28 has no task\n"+
			"listing (look a task up by its id with toolwire task). For example:\n\n"+
			"  toolwire tasks http://127.0.0.1:8080/mcp\n\n",
		"print the task list as JSON", runTasks)
}

func runTasks(cmd *cobra.Command, f *targetFlags, asJSON bool, args []string) error {
	t, _, err := splitTarget(cmd, args)
	if err != nil {
		return err
	}
	c, _, err := f.open(cmd, args, "tasks", 0, "only the server")
	if err != nil {
		return err
	}
	defer c.Close()
	if c.Era() == mcp.EraModern {
		msg := fmt.Sprintf("the server speaks MCP %s, which has no task listing (tasks/list is 2025-11-25 only)", c.ProtocolVersion())
		if f.era == "auto" {
			msg += fmt.Sprintf(".\nList them in 2025-11-25, which toolwire serve and the gateway speak too: %s", commandLine(t, f, "tasks", "--era", "legacy"))
		}
		return fmt.Errorf("%s.\nShow a task by its id with: %s", msg, taskCommand(t, "ID", "", f.credFlags()...))
	}
	tasks, err := c.ListTasks(cmd.Context())
	if errors.Is(err, client.ErrTasksUnsupported) {
		return fmt.Errorf("the server does not list tasks (its capabilities offer no tasks.list): %w", err)
	}
	if err != nil {
		return err
	}
	if asJSON {
		if tasks == nil {
			tasks = []mcp.Task{}
		}
		return printJSON(cmd.OutOrStdout(), tasks)
	}
	if len(tasks) == 0 {
		fmt.Fprintln(cmd.ErrOrStderr(), "toolwire: the server lists no tasks")
		return nil
	}
	tw := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tSTATUS\tUPDATED\tMESSAGE")
	for _, tk := range tasks {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", tk.TaskID, statusWords(tk.Status), tk.LastUpdatedAt.UTC().Format(time.RFC3339), oneLine(tk.StatusMessage, 60))
	}
	return tw.Flush()
}

type taskFlags struct {
	targetFlags
	cancel  bool
	wait    bool
	asJSON  bool
	saveDir string
}

func newTaskCmd() *cobra.Command {
	var f taskFlags
	cmd := &cobra.Command{
		Use:   "task (URL ID | ID -- COMMAND [ARG...])",
		Short: "Show, wait for or cancel one task of an MCP server",
		Long: "Show a task of an MCP server (tasks/get): its status, status message, times and, for a\n" +
			"2026-07-28 task, the input it waits for or the error it failed with. --wait waits for its\n" +
			"result and prints it as toolwire call does (status changes on stderr; a tool error or a failed\n" +
			"or cancelled task exits non-zero); --cancel cancels it (tasks/cancel). For example:\n\n" +
			"  toolwire task http://127.0.0.1:8080/mcp 786512e2 --wait\n\n" + exitHelp,
		RunE: func(cmd *cobra.Command, args []string) error {
			return finish(cmd, runTask(cmd, &f, args))
		},
	}
	f.register(cmd)
	fl := cmd.Flags()
	fl.BoolVar(&f.wait, "wait", false, "wait for the task's result and print it")
	fl.BoolVar(&f.cancel, "cancel", false, "cancel the task")
	fl.BoolVar(&f.asJSON, "json", false, "print the task (or with --wait its result) as JSON")
	fl.StringVar(&f.saveDir, "save-dir", "", "--wait: directory for saved images, audio and blobs (default: a new temporary directory)")
	return cmd
}

func runTask(cmd *cobra.Command, f *taskFlags, args []string) error {
	if f.wait && f.cancel {
		return usageError{"--wait and --cancel exclude each other"}
	}
	t, _, err := splitTarget(cmd, args)
	if err != nil {
		return err
	}
	if f.wait {
		f.enableElicitation() // a task may ask for input while it is waited for
	}
	c, rest, err := f.open(cmd, args, "task", 1, "the server and a task id")
	if err != nil {
		return err
	}
	defer c.Close()
	id := rest[0]
	ctx := cmd.Context()
	switch {
	case f.cancel:
		if err := c.CancelTask(ctx, id); err != nil {
			return err
		}
		fmt.Fprintf(cmd.OutOrStdout(), "task %s cancelled\n", id)
		return nil
	case f.wait:
		bar := &progressBar{w: f.errOut()}
		show := taskStatusPrinter(f.errOut(), bar)
		res, err := awaitTask(cmd, &f.targetFlags, c, t, id, func(ctx context.Context) (*mcp.CallToolResult, error) {
			return c.WaitTask(ctx, id, client.WithTaskStatus(show))
		})
		return printResult(cmd, f.asJSON, &renderer{tool: "task-" + id, saveDir: f.saveDir}, res, err)
	}
	d, err := c.GetTask(ctx, id)
	if err != nil {
		return err
	}
	if f.asJSON {
		raw, err := d.AppendEra(nil, c.Era())
		if err != nil {
			return err
		}
		return printJSON(cmd.OutOrStdout(), rawJSON(raw))
	}
	printTask(cmd.OutOrStdout(), d)
	return nil
}

// rawJSON prints as the JSON it holds.
type rawJSON []byte

func (r rawJSON) MarshalJSON() ([]byte, error) { return r, nil }

// printTask writes a task as aligned "name: value" lines.
func printTask(w io.Writer, d *mcp.DetailedTask) {
	tw := tabwriter.NewWriter(w, 0, 4, 1, ' ', 0)
	line := func(name, value string) { fmt.Fprintf(tw, "%s:\t%s\n", name, value) }
	line("id", d.TaskID)
	line("status", statusWords(d.Status))
	if d.StatusMessage != "" {
		line("message", oneLine(d.StatusMessage, 200))
	}
	line("created", d.CreatedAt.UTC().Format(time.RFC3339))
	line("updated", d.LastUpdatedAt.UTC().Format(time.RFC3339))
	if d.TTL != nil {
		line("ttl", d.TTL.String())
	} else {
		line("ttl", "none (kept until the server drops it)")
	}
	if d.PollInterval != nil {
		line("poll interval", d.PollInterval.String())
	}
	if d.Error != nil {
		line("error", fmt.Sprintf("%d %s", d.Error.Code, d.Error.Message))
	}
	if len(d.InputRequests) > 0 {
		keys := make([]string, 0, len(d.InputRequests))
		for k := range d.InputRequests {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			line("waits for", fmt.Sprintf("%s (%s)", k, d.InputRequests[k].Method))
		}
	}
	if d.Result != nil {
		line("result", "ready (--wait prints it)")
	}
	tw.Flush()
}
