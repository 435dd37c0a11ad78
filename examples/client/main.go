// Command client connects to an MCP server, lists its tools and calls one:
// a Streamable HTTP URL (either protocol era) or a command spoken to over
// stdio, after --. For example:
//
//	go run ./examples/client -tool greet -args '{"name":"Ada"}' -- go run ./examples/hello
//	go run ./examples/client -tool echo -args '{"message":"hi"}' http://127.0.0.1:8080/mcp
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"os"
	"strings"
	"time"

	"github.com/toolwire/toolwire/client"
	"github.com/toolwire/toolwire/mcp"
)

func main() {
	tool := flag.String("tool", "", "the tool to call after listing (default: none)")
	args := flag.String("args", "{}", "the call's arguments, a JSON object")
	flag.Parse()
	if flag.NArg() == 0 {
		log.Fatal("usage: client [-tool NAME [-args JSON]] (URL | -- COMMAND [ARG...])")
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := run(ctx, os.Stdout, transportFor(flag.Args()), *tool, *args); err != nil {
		log.Fatal(err)
	}
}

// transportFor is an HTTP transport for a URL, else the command to start.
func transportFor(target []string) client.Transport {
	if len(target) == 1 && (strings.HasPrefix(target[0], "http://") || strings.HasPrefix(target[0], "https://")) {
		return &client.HTTP{URL: target[0]}
	}
	return &client.Command{Path: target[0], Args: target[1:]}
}

// run connects over tr, prints the server's name and its tools, and calls
// tool (when given) with args, printing the result.
func run(ctx context.Context, w io.Writer, tr client.Transport, tool, args string) error {
	// Connect negotiates the protocol era (2026-07-28 first, then the
	// 2025 initialize handshake) and keeps what the server announced.
	c, err := client.Connect(ctx, tr)
	if err != nil {
		return err
	}
	defer c.Close()
	fmt.Fprintf(w, "connected to %s %s (MCP %s)\n", c.ServerInfo().Name, c.ServerInfo().Version, c.ProtocolVersion())

	// ListTools follows every page of tools/list.
	tools, err := c.ListTools(ctx)
	if err != nil {
		return err
	}
	for _, t := range tools {
		fmt.Fprintf(w, "tool %s: %s\n", t.Name, t.Description)
	}
	if tool == "" {
		return nil
	}

	// The arguments go as given; the client checks structuredContent
	// against the tool's outputSchema.
	res, err := c.CallTool(ctx, tool, json.RawMessage(args))
	var te *client.ToolError
	if errors.As(err, &te) {
		return fmt.Errorf("the tool failed: %s", contentText(te.Content()))
	}
	if err != nil {
		return err
	}
	if len(res.StructuredContent) > 0 {
		fmt.Fprintf(w, "%s: %s\n", tool, res.StructuredContent)
	} else {
		fmt.Fprintf(w, "%s: %s\n", tool, contentText(res.Content))
	}
	return nil
}

// contentText joins the text blocks of content.
func contentText(content []mcp.Content) string {
	var texts []string
	for _, c := range content {
		if t, ok := c.(*mcp.TextContent); ok {
			texts = append(texts, t.Text)
		}
	}
	return strings.Join(texts, " ")
}
