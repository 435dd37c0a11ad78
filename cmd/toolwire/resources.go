package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/spf13/cobra"
	"github.com/toolwire/toolwire/client"
	"github.com/toolwire/toolwire/jsonrpc"
	"github.com/toolwire/toolwire/mcp"
)

func newResourcesCmd() *cobra.Command {
	return newListCmd("resources", "List the resources and resource templates of an MCP server",
		"List the resources of an MCP server as a table of URI, name, media type and description,\n"+
			"then its resource templates. --json prints both lists as they came. For example:\n\n"+
			"  toolwire resources http://127.0.0.1:8080/mcp\n"+
			"  toolwire resources -- node server.js stdio\n\n",
		`print {"resources": [...], "resourceTemplates": [...]} as JSON`, runResources)
}

// open connects to the command's server, which is all of args but want
// more arguments (named by what, for the usage error).
func (f *targetFlags) open(cmd *cobra.Command, args []string, name string, want int, what string) (*client.Client, []string, error) {
	t, rest, err := splitTarget(cmd, args)
	if err != nil {
		return nil, nil, err
	}
	switch {
	case want >= 0 && len(rest) > want:
		return nil, nil, usageError{fmt.Sprintf("unexpected arguments %q: %s takes %s", rest[want:], name, what)}
	case want > 0 && len(rest) < want, want < 0 && len(rest) < -want:
		return nil, nil, usageError{fmt.Sprintf("missing arguments: %s takes %s", name, what)}
	}
	opts, err := f.options()
	if err != nil {
		return nil, nil, err
	}
	c, err := f.connect(cmd.Context(), t, opts)
	if err != nil {
		return nil, nil, err
	}
	return c, rest, nil
}

// resourceLists is what `resources --json` prints.
type resourceLists struct {
	Resources         []*mcp.Resource         `json:"resources"`
	ResourceTemplates []*mcp.ResourceTemplate `json:"resourceTemplates"`
}

func runResources(cmd *cobra.Command, f *targetFlags, asJSON bool, args []string) error {
	c, _, err := f.open(cmd, args, "resources", 0, "only the server")
	if err != nil {
		return err
	}
	defer c.Close()
	lists, err := listResources(cmd.Context(), c)
	if err != nil {
		return err
	}
	if asJSON {
		return printJSON(cmd.OutOrStdout(), lists)
	}
	if c.ServerCapabilities().Resources == nil {
		fmt.Fprintln(cmd.ErrOrStderr(), "toolwire: the server does not offer resources")
	}
	renderResources(cmd.OutOrStdout(), lists)
	return nil
}

// listResources lists resources and templates; a server without the
// resources capability, or without templates/list, has none.
func listResources(ctx context.Context, c *client.Client) (*resourceLists, error) {
	out := &resourceLists{Resources: []*mcp.Resource{}, ResourceTemplates: []*mcp.ResourceTemplate{}}
	if c.ServerCapabilities().Resources == nil {
		return out, nil
	}
	rs, err := c.ListResources(ctx)
	if err != nil {
		return nil, err
	}
	if rs != nil {
		out.Resources = rs
	}
	ts, err := c.ListResourceTemplates(ctx)
	if err != nil && !isMethodNotFound(err) {
		return nil, err
	}
	if ts != nil {
		out.ResourceTemplates = ts
	}
	return out, nil
}

func isMethodNotFound(err error) bool {
	var je *client.JSONRPCError
	return errors.As(err, &je) && je.Code == jsonrpc.CodeMethodNotFound
}

// renderResources prints the resource table and then the template table.
func renderResources(w io.Writer, l *resourceLists) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "URI\tNAME\tMIME\tDESCRIPTION")
	for _, r := range l.Resources {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", r.URI, dash(titled(r.Name, r.Title)), dash(r.MIMEType), dash(oneLine(r.Description, 60)))
	}
	tw.Flush()
	if len(l.ResourceTemplates) == 0 {
		return
	}
	fmt.Fprintln(w)
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "TEMPLATE\tNAME\tMIME\tDESCRIPTION")
	for _, t := range l.ResourceTemplates {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", t.URITemplate, dash(titled(t.Name, t.Title)), dash(t.MIMEType), dash(oneLine(t.Description, 60)))
	}
	tw.Flush()
}

// titled is a name with its title, when it has a different one.
func titled(name, title string) string {
	if title == "" || title == name {
		return name
	}
	return name + " (" + oneLine(title, 30) + ")"
}
