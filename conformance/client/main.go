// Command client is toolwire's conformance client: the official MCP
// conformance suite (`conformance client --command ...`) starts it once per
// scenario with the server URL as its last argument and the scenario in
// MCP_CONFORMANCE_SCENARIO, and it acts the scenario out with package client.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/toolwire/toolwire"
	"github.com/toolwire/toolwire/client"
	"github.com/toolwire/toolwire/internal/wirejson"
	"github.com/toolwire/toolwire/mcp"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: client <server-url> (scenario in MCP_CONFORMANCE_SCENARIO)")
		os.Exit(2)
	}
	url := os.Args[len(os.Args)-1]
	scenario := os.Getenv("MCP_CONFORMANCE_SCENARIO")
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	ctx, cancel := context.WithTimeout(context.Background(), 25*time.Second)
	defer cancel()
	if err := run(ctx, scenario, url, logger); err != nil {
		fmt.Fprintf(os.Stderr, "scenario %s: %s: %v\n", scenario, client.CodeOf(err), err)
		os.Exit(1)
	}
}

// run connects the way the scenario's protocol version asks and acts the
// scenario out.
func run(ctx context.Context, scenario, url string, logger *slog.Logger) error {
	version := os.Getenv("MCP_CONFORMANCE_PROTOCOL_VERSION")
	opts := []client.Option{
		client.WithClientInfo(mcp.Implementation{Name: "toolwire-conformance-client", Version: toolwire.Version()}),
		client.WithLogger(logger),
		client.WithTimeout(20 * time.Second),
	}
	switch {
	case version == "":
		opts = append(opts, client.WithEra(mcp.EraAuto))
	case mcp.EraOf(version) == mcp.EraModern:
		opts = append(opts, client.WithEra(mcp.EraModern), client.WithProtocolVersion(version))
	default:
		opts = append(opts, client.WithEra(mcp.EraLegacy), client.WithProtocolVersion(version))
	}
	var c *client.Client
	var mrtr mrtrState
	elicitation := client.WithCapabilities(mcp.ClientCapabilities{Elicitation: json.RawMessage(`{}`)})
	switch scenario {
	case "elicitation-sep1034-client-defaults":
		opts = append(opts, elicitation, client.WithRequestHandler(elicitWithDefaults))
	case "sep-2322-client-request-state":
		opts = append(opts, elicitation, client.WithRequestHandler(func(ctx context.Context, method string, params json.RawMessage) (any, error) {
			return mrtr.answer(ctx, c, method, params)
		}))
	}
	auth, err := authFor(scenario, url, logger)
	if err != nil {
		return err
	}
	c, err = client.Connect(ctx, &client.HTTP{URL: url, Auth: auth}, opts...)
	if err != nil {
		return err
	}
	defer c.Close()

	switch scenario {
	case "initialize":
		tools, err := c.ListTools(ctx)
		if err != nil {
			return err
		}
		if len(tools) > 0 {
			_, err = c.CallTool(ctx, tools[0].Name, placeholderArgs(tools[0].InputSchema))
		}
		return ignoreToolError(err)
	case "tools_call":
		return listThenCall(ctx, c, "add_numbers", map[string]any{"a": 5, "b": 3})
	case "sse-retry":
		return listThenCall(ctx, c, "test_reconnection", map[string]any{})
	case "elicitation-sep1034-client-defaults":
		return ignoreToolError(listThenCall(ctx, c, "test_client_elicitation_defaults", map[string]any{}))
	case "request-metadata", "json-schema-ref-no-deref":
		_, err := c.ListTools(ctx)
		return err
	case "http-custom-headers":
		return customHeaders(ctx, c)
	case "http-standard-headers":
		return everyMethod(ctx, c)
	case "http-invalid-tool-headers":
		return callEveryTool(ctx, c)
	case "json-schema-2020-12-preservation":
		return echoSchema(ctx, c)
	case "sep-2322-client-request-state":
		return mrtr.run(ctx, c)
	default:
		// Scenarios this client has no special part for (auth/*, and the
		// skills extension, which it does not implement): connect, list
		// and call a tool, as a plain client would.
		t, err := listedTool(ctx, c, "test-tool")
		if err != nil || t == nil {
			return err
		}
		_, err = c.CallTool(ctx, t.Name, map[string]any{})
		return ignoreToolError(err)
	}
}

// listThenCall lists the tools, as a client does before it calls one,
// and calls name with args.
func listThenCall(ctx context.Context, c *client.Client, name string, args any) error {
	if _, err := c.ListTools(ctx); err != nil {
		return err
	}
	_, err := c.CallTool(ctx, name, args)
	return err
}

// listedTool lists the tools and returns the one named name, nil when the
// server does not list it.
func listedTool(ctx context.Context, c *client.Client, name string) (*mcp.Tool, error) {
	tools, err := c.ListTools(ctx)
	if err != nil {
		return nil, err
	}
	for _, t := range tools {
		if t.Name == name {
			return t, nil
		}
	}
	return nil, nil
}

// ignoreToolError: a tool that reports failure still counts as called.
func ignoreToolError(err error) error {
	if client.CodeOf(err) == client.CodeToolError {
		return nil
	}
	return err
}

// placeholderArgs fills every required property with a value of its type.
func placeholderArgs(inputSchema json.RawMessage) map[string]any {
	var s struct {
		Properties map[string]struct {
			Type any   `json:"type"`
			Enum []any `json:"enum"`
		} `json:"properties"`
		Required []string `json:"required"`
	}
	if wirejson.Unmarshal(inputSchema, &s) != nil {
		s.Properties, s.Required = nil, nil
	}
	args := map[string]any{}
	for _, name := range s.Required {
		p := s.Properties[name]
		if len(p.Enum) > 0 {
			args[name] = p.Enum[0]
			continue
		}
		switch p.Type {
		case "integer", "number":
			args[name] = 1
		case "boolean":
			args[name] = true
		case "object":
			args[name] = map[string]any{}
		case "array":
			args[name] = []any{}
		default:
			args[name] = "test"
		}
	}
	return args
}

// callEveryTool lists tools and calls each one the client kept.
func callEveryTool(ctx context.Context, c *client.Client) error {
	tools, err := c.ListTools(ctx)
	if err != nil {
		return err
	}
	for _, t := range tools {
		if _, err := c.CallTool(ctx, t.Name, placeholderArgs(t.InputSchema)); ignoreToolError(err) != nil {
			return err
		}
	}
	return nil
}

// everyMethod exercises every method that carries standard headers: tools,
// resources and prompts, listed and used.
func everyMethod(ctx context.Context, c *client.Client) error {
	if err := callEveryTool(ctx, c); err != nil {
		return err
	}
	raw, err := c.Call(ctx, "resources/list", nil)
	if err != nil {
		return err
	}
	var rl struct {
		Resources []struct {
			URI string `json:"uri"`
		} `json:"resources"`
	}
	if err := wirejson.Unmarshal(raw, &rl); err != nil {
		return err
	}
	for _, r := range rl.Resources {
		if _, err := c.Call(ctx, "resources/read", map[string]string{"uri": r.URI}); err != nil {
			return err
		}
	}
	raw, err = c.Call(ctx, "prompts/list", nil)
	if err != nil {
		return err
	}
	var pl struct {
		Prompts []struct {
			Name      string `json:"name"`
			Arguments []struct {
				Name     string `json:"name"`
				Required bool   `json:"required"`
			} `json:"arguments"`
		} `json:"prompts"`
	}
	if err := wirejson.Unmarshal(raw, &pl); err != nil {
		return err
	}
	for _, p := range pl.Prompts {
		args := map[string]string{}
		for _, a := range p.Arguments {
			if a.Required {
				args[a.Name] = "test"
			}
		}
		if _, err := c.Call(ctx, "prompts/get", map[string]any{"name": p.Name, "arguments": args}); err != nil {
			return err
		}
	}
	return nil
}

// customHeaders makes the calls MCP_CONFORMANCE_CONTEXT lists, with exactly
// its arguments.
func customHeaders(ctx context.Context, c *client.Client) error {
	var cx struct {
		ToolCalls []struct {
			Name      string          `json:"name"`
			Arguments json.RawMessage `json:"arguments"`
		} `json:"toolCalls"`
	}
	if err := wirejson.Unmarshal([]byte(os.Getenv("MCP_CONFORMANCE_CONTEXT")), &cx); err != nil {
		return fmt.Errorf("MCP_CONFORMANCE_CONTEXT: %w", err)
	}
	if _, err := c.ListTools(ctx); err != nil {
		return err
	}
	for _, tc := range cx.ToolCalls {
		if _, err := c.CallTool(ctx, tc.Name, tc.Arguments); ignoreToolError(err) != nil {
			return err
		}
	}
	return nil
}

// echoSchema sends json_schema_2020_12_tool's inputSchema, exactly as
// listed, back through json_schema_echo.
func echoSchema(ctx context.Context, c *client.Client) error {
	t, err := listedTool(ctx, c, "json_schema_2020_12_tool")
	if err != nil {
		return err
	}
	if t == nil {
		return errors.New("json_schema_2020_12_tool is not listed")
	}
	args := json.RawMessage(`{"schema":` + string(t.InputSchema) + `}`)
	_, err = c.CallTool(ctx, "json_schema_echo", args)
	return ignoreToolError(err)
}

// elicitWithDefaults accepts an elicitation, filling every field from its
// schema default (SEP-1034).
func elicitWithDefaults(_ context.Context, method string, params json.RawMessage) (any, error) {
	if method != "elicitation/create" {
		return nil, fmt.Errorf("unsupported request %s", method)
	}
	var p struct {
		RequestedSchema struct {
			Properties map[string]struct {
				Default json.RawMessage `json:"default"`
			} `json:"properties"`
		} `json:"requestedSchema"`
	}
	if err := wirejson.Unmarshal(params, &p); err != nil {
		return nil, err
	}
	content := map[string]json.RawMessage{}
	names := make([]string, 0, len(p.RequestedSchema.Properties))
	for name := range p.RequestedSchema.Properties {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		if d := p.RequestedSchema.Properties[name].Default; len(d) > 0 {
			content[name] = d
		}
	}
	return map[string]any{"action": "accept", "content": content}, nil
}

// mrtrState acts out sep-2322: between the first input_required round of
// test_mrtr_echo_state and its retry, an unrelated call must carry neither
// inputResponses nor requestState.
type mrtrState struct {
	once sync.Once
	err  error
}

func (m *mrtrState) answer(ctx context.Context, c *client.Client, method string, params json.RawMessage) (any, error) {
	if method != "elicitation/create" {
		return nil, fmt.Errorf("unsupported input request %s", method)
	}
	m.once.Do(func() {
		_, m.err = c.CallTool(ctx, "test_mrtr_unrelated", map[string]any{})
	})
	if m.err != nil {
		return nil, m.err
	}
	return map[string]any{"action": "accept", "content": map[string]any{"confirmed": true}}, nil
}

func (m *mrtrState) run(ctx context.Context, c *client.Client) error {
	if _, err := c.ListTools(ctx); err != nil {
		return err
	}
	for _, name := range []string{"test_mrtr_echo_state", "test_mrtr_no_state", "test_mrtr_no_result_type"} {
		res, err := c.CallTool(ctx, name, map[string]any{})
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		var texts []string
		for _, b := range res.Content {
			if t, ok := b.(*mcp.TextContent); ok {
				texts = append(texts, t.Text)
			}
		}
		slog.Debug("mrtr result", "tool", name, "text", strings.Join(texts, " "))
	}
	return nil
}
