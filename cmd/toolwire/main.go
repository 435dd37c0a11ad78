// Command toolwire serves MCP tools and calls tools on MCP servers.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/toolwire/toolwire"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	root := newRootCmd()
	if err := root.ExecuteContext(ctx); err != nil {
		fmt.Fprintln(os.Stderr, "toolwire:", err)
		os.Exit(exitStatus(err))
	}
}

func newRootCmd() *cobra.Command {
	root := &cobra.Command{
		Use:   "toolwire",
		Short: "Serve MCP tools, put many MCP servers behind one gateway, and call tools on MCP servers",
		Long: `toolwire is an MCP toolkit on the command line:

  toolwire gateway    many MCP servers behind one endpoint, with personas, rate limits and an
                      audit trail (toolwire audit reads it); without --config an embedded default
  toolwire serve      the reference tools over Streamable HTTP or stdio
  toolwire tools, call, prompts, prompt, resources, read, tasks, task
                      list and use what an MCP server offers (login for OAuth)
  toolwire check, run, test
                      flows, YAML scenarios of calls and assertions: check them, run one, or run
                      them as tests (JUnit for CI)

Run toolwire COMMAND --help for a command's flags.`,
		SilenceUsage:  true,
		SilenceErrors: true,
		Version:       toolwire.Version(),
	}
	root.SetVersionTemplate("toolwire {{.Version}}\n")
	// A flag that does not parse is a usage error (exit 2), as is a bad
	// argument.
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usageError{err.Error()} })
	root.AddCommand(newVersionCmd())
	root.AddCommand(newServeCmd(), newToolsCmd(), newCallCmd())
	root.AddCommand(newResourcesCmd(), newReadCmd(), newPromptsCmd(), newPromptCmd())
	root.AddCommand(newTasksCmd(), newTaskCmd())
	root.AddCommand(newLoginCmd(), newLogoutCmd())
	root.AddCommand(newGatewayCmd(), newAuditCmd())
	root.AddCommand(newCheckCmd(), newRunCmd(), newTestCmd())
	root.AddCommand(newDocsCmd())
	return root
}

// exitStatus maps an error to the process exit status: 2 for usage errors,
// 130 for a wait for a task that Ctrl-C ended, 1 otherwise.
func exitStatus(err error) int {
	if _, ok := err.(usageError); ok {
		return 2
	}
	if err == errInterrupted {
		return 130
	}

	return 1
}

type usageError struct{ msg string }

func (e usageError) Error() string { return e.msg }
