package main

import (
	"github.com/spf13/cobra"
	"github.com/toolwire/toolwire/mcp"
)

func newToolsCmd() *cobra.Command {
	return newListCmd("tools", "List the tools of an MCP server",
		"List the tools of an MCP server as a table of name, title, description and parameters\n"+
			"(* marks a required parameter). The server is an http(s):// URL (Streamable HTTP) or a\n"+
			"command after -- that speaks MCP on stdio, for example:\n\n"+
			"  toolwire tools http://127.0.0.1:8080/mcp\n"+
			"  toolwire tools -- node server.js stdio\n\n",
		"print the raw tool list as JSON", runTools)
}

func runTools(cmd *cobra.Command, f *targetFlags, asJSON bool, args []string) error {
	c, _, err := f.open(cmd, args, "tools", 0, "only the server")
	if err != nil {
		return err
	}
	defer c.Close()
	tools, err := c.ListTools(cmd.Context())
	if err != nil {
		return err
	}
	if asJSON {
		if tools == nil {
			tools = []*mcp.Tool{}
		}
		return printJSON(cmd.OutOrStdout(), tools)
	}
	renderTools(cmd.OutOrStdout(), tools)
	return nil
}
