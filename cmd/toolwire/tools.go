package main

import (
	"encoding/json"
	"fmt"

	"github.com/spf13/cobra"
	"github.com/toolwire/toolwire/mcp"
)

func newToolsCmd() *cobra.Command {
	var f targetFlags
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "tools (URL | -- COMMAND [ARG...])",
		Short: "List the tools of an MCP server",
		Long: "List the tools of an MCP server as a table of name, title, description and parameters\n" +
			"(* marks a required parameter). The server is an http(s):// URL (Streamable HTTP) or a\n" +
			"command after -- that speaks MCP on stdio, for example:\n\n" +
			"  toolwire tools http://127.0.0.1:8080/mcp\n" +
			"  toolwire tools -- node server.js stdio\n\n" + exitHelp,
		RunE: func(cmd *cobra.Command, args []string) error {
			return finish(cmd, runTools(cmd, &f, asJSON, args))
		},
	}
	f.register(cmd)
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the raw tool list as JSON")
	return cmd
}

func runTools(cmd *cobra.Command, f *targetFlags, asJSON bool, args []string) error {
	t, rest, err := splitTarget(cmd, args)
	if err != nil {
		return err
	}
	if len(rest) > 0 {
		return usageError{fmt.Sprintf("unexpected arguments %q: tools takes only the server", rest)}
	}
	c, tools, err := f.connectAndList(cmd.Context(), t)
	if err != nil {
		return err
	}
	defer c.Close()
	if asJSON {
		if tools == nil {
			tools = []*mcp.Tool{}
		}
		b, err := json.MarshalIndent(tools, "", "  ")
		if err != nil {
			return err
		}
		fmt.Fprintln(cmd.OutOrStdout(), string(b))
		return nil
	}
	renderTools(cmd.OutOrStdout(), tools)
	return nil
}
