package main

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"
	"github.com/toolwire/toolwire/client"
	"github.com/toolwire/toolwire/jsonrpc"
	"github.com/toolwire/toolwire/mcp"
)

func newPromptsCmd() *cobra.Command {
	return newListCmd("prompts", "List the prompts of an MCP server",
		"List the prompts of an MCP server as a table of name, title, arguments (* marks a required\n"+
			"one) and description. For example:\n\n"+
			"  toolwire prompts http://127.0.0.1:8080/mcp\n"+
			"  toolwire prompts -- node server.js stdio\n\n",
		"print the raw prompt list as JSON", runPrompts)
}

func runPrompts(cmd *cobra.Command, f *targetFlags, asJSON bool, args []string) error {
	c, _, err := f.open(cmd, args, "prompts", 0, "only the server")
	if err != nil {
		return err
	}
	defer c.Close()
	prompts := []*mcp.Prompt{}
	if c.ServerCapabilities().Prompts != nil {
		ps, err := c.ListPrompts(cmd.Context())
		if err != nil {
			return err
		}
		if ps != nil {
			prompts = ps
		}
	} else if !asJSON {
		fmt.Fprintln(cmd.ErrOrStderr(), "toolwire: the server does not offer prompts")
	}
	if asJSON {
		return printJSON(cmd.OutOrStdout(), prompts)
	}
	renderPrompts(cmd.OutOrStdout(), prompts)
	return nil
}

func renderPrompts(w io.Writer, prompts []*mcp.Prompt) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tTITLE\tARGUMENTS\tDESCRIPTION")
	for _, p := range prompts {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", p.Name, dash(p.Title), dash(promptArgs(p.Arguments)), dash(oneLine(p.Description, 60)))
	}
	tw.Flush()
}

// promptArgs lists argument names, a trailing * marking a required one.
func promptArgs(args []mcp.PromptArgument) string {
	parts := make([]string, len(args))
	for i, a := range args {
		parts[i] = a.Name
		if a.Required {
			parts[i] += "*"
		}
	}
	return strings.Join(parts, ", ")
}

type promptFlags struct {
	targetFlags
	asJSON bool
}

func newPromptCmd() *cobra.Command {
	var f promptFlags
	cmd := &cobra.Command{
		Use:   "prompt (URL NAME [key=value...] | NAME [key=value...] -- COMMAND [ARG...])",
		Short: "Get a prompt from an MCP server and print its messages",
		Long: "Get a prompt (prompts/get) with its arguments, given as key=value pairs (values are strings),\n" +
			"and print each message under its role: text as text, embedded text resources shown, images,\n" +
			"audio and other resources summarized. --json prints the raw result. For example:\n\n" +
			"  toolwire prompt http://127.0.0.1:8080/mcp code-review code='print(1)' language=python\n" +
			"  toolwire prompt greeting name=Ada -- node server.js stdio\n\n" +
			"A missing or invalid argument is the server's JSON-RPC error (status 5).\n\n" + exitHelp,
		RunE: func(cmd *cobra.Command, args []string) error {
			return finish(cmd, runPrompt(cmd, &f, args))
		},
	}
	f.register(cmd)
	cmd.Flags().BoolVar(&f.asJSON, "json", false, "print the raw result as JSON")
	return cmd
}

func runPrompt(cmd *cobra.Command, f *promptFlags, args []string) error {
	t, rest, err := splitTarget(cmd, args)
	if err != nil {
		return err
	}
	if len(rest) == 0 {
		return usageError{"no prompt given: toolwire prompt TARGET NAME [key=value ...]"}
	}
	name := rest[0]
	arguments := map[string]string{}
	for _, kv := range rest[1:] {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			return usageError{fmt.Sprintf("invalid argument %q: want key=value", kv)}
		}
		if _, dup := arguments[k]; dup {
			return usageError{fmt.Sprintf("argument %q given twice", k)}
		}
		arguments[k] = v
	}
	f.enableElicitation()
	opts, err := f.options()
	if err != nil {
		return err
	}
	c, err := f.connect(cmd.Context(), t, opts)
	if err != nil {
		return err
	}
	defer c.Close()
	res, err := c.GetPrompt(cmd.Context(), name, arguments)
	if err != nil {
		return promptError(name, err)
	}
	if f.asJSON {
		return printJSON(cmd.OutOrStdout(), res)
	}
	renderPrompt(cmd.OutOrStdout(), res)
	return nil
}

// promptError words a refusal of prompts/get: the server's -32602 (a
// missing argument, an unknown prompt) is shown as its message.
func promptError(name string, err error) error {
	var je *client.JSONRPCError
	if errors.As(err, &je) && je.Code == jsonrpc.CodeInvalidParams {
		return &promptRefusal{name: name, err: je}
	}
	return err
}

// promptRefusal keeps the error's code (for the exit status) and says
// plainly what the server refused.
type promptRefusal struct {
	name string
	err  *client.JSONRPCError
}

func (e *promptRefusal) Error() string {
	s := fmt.Sprintf("the server refused prompt %q: %s (JSON-RPC error %d; toolwire prompts lists the arguments)", e.name, e.err.Message, e.err.Code)
	if len(e.err.Data) > 0 {
		s += " (data: " + string(e.err.Data) + ")"
	}
	return s
}
func (e *promptRefusal) Unwrap() error { return e.err }

// renderPrompt prints a prompt's messages, each under its role.
func renderPrompt(w io.Writer, res *mcp.GetPromptResult) {
	if res.Description != "" {
		fmt.Fprintf(w, "# %s\n\n", res.Description)
	}
	for i, m := range res.Messages {
		if i > 0 {
			fmt.Fprintln(w)
		}
		fmt.Fprintf(w, "[%s]\n", m.Role)
		promptBlock(w, m.Content)
	}
}

func promptBlock(w io.Writer, c mcp.Content) {
	switch b := c.(type) {
	case *mcp.TextContent:
		fmt.Fprintln(w, b.Text)
	case *mcp.ImageContent:
		fmt.Fprintf(w, "[image %s, %d bytes]\n", b.MIMEType, len(b.Data))
	case *mcp.AudioContent:
		fmt.Fprintf(w, "[audio %s, %d bytes]\n", b.MIMEType, len(b.Data))
	case *mcp.ResourceLink:
		line := "[resource link] " + titled(b.Name, b.Title) + " <" + b.URI + ">" + prefixed(" ", b.MIMEType)
		if b.Description != "" {
			line += " - " + b.Description
		}
		fmt.Fprintln(w, line)
	case *mcp.EmbeddedResource:
		switch rc := b.Resource.(type) {
		case *mcp.TextResourceContents:
			fmt.Fprintf(w, "[resource %s%s]\n%s\n", rc.URI, prefixed(" ", rc.MIMEType), rc.Text)
		case *mcp.BlobResourceContents:
			fmt.Fprintf(w, "[resource %s%s, %d bytes]\n", rc.URI, prefixed(" ", rc.MIMEType), len(rc.Blob))
		}
	default:
		fmt.Fprintf(w, "[%s block]\n", c.ContentType())
	}
}
