package flow

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/toolwire/toolwire/client"
	"github.com/toolwire/toolwire/internal/wirejson"
	"github.com/toolwire/toolwire/mcp"
)

// clientSet connects a flow's clients lazily, once per run, and closes the
// ones it connected when the run ends.
type clientSet struct {
	fl    *Flow
	cfg   *runConfig
	root  *scope
	mu    sync.Mutex
	conns map[string]*lazyClient
}

// lazyClient is one manifest client: connected on first use; a failed
// connection is not kept, so a retried step tries again.
type lazyClient struct {
	mu sync.Mutex
	c  *client.Client
}

func newClientSet(fl *Flow, cfg *runConfig, root *scope) *clientSet {
	return &clientSet{fl: fl, cfg: cfg, root: root, conns: map[string]*lazyClient{}}
}

// get returns the named client, connecting it on first use. Connecting is
// bounded by ctx (the step's timeout); the client then lives until the
// run ends.
func (cs *clientSet) get(ctx context.Context, name string) (*client.Client, error) {
	if c, ok := cs.cfg.clients[name]; ok && c != nil {
		return c, nil
	}
	cs.mu.Lock()
	lc := cs.conns[name]
	if lc == nil {
		lc = &lazyClient{}
		cs.conns[name] = lc
	}
	cs.mu.Unlock()
	lc.mu.Lock()
	defer lc.mu.Unlock()
	if lc.c != nil {
		return lc.c, nil
	}
	spec := cs.fl.client(name)
	if spec == nil {
		return nil, &Error{Code: string(client.CodeTransport), Message: fmt.Sprintf("no client %q", name)}
	}
	c, err := cs.connect(ctx, spec)
	if err != nil {
		return nil, err
	}
	lc.c = c
	return c, nil
}

func (fl *Flow) client(name string) *ClientSpec {
	for _, c := range fl.Clients {
		if c.Name == name {
			return c
		}
	}
	return nil
}

// connect evaluates a client's fields (inputs and env only) and connects.
func (cs *clientSet) connect(ctx context.Context, spec *ClientSpec) (*client.Client, error) {
	t, err := cs.transport(ctx, spec)
	if err != nil {
		return nil, err
	}
	opts := []client.Option{client.WithEra(spec.Era)}
	if spec.Timeout > 0 {
		opts = append(opts, client.WithTimeout(spec.Timeout))
	}
	opts = append(opts, cs.cfg.clientOpts...)
	c, err := client.Connect(ctx, t, opts...)
	if err != nil {
		return nil, fmt.Errorf("client %s: %w", spec.Name, err)
	}
	return c, nil
}

func (cs *clientSet) str(ctx context.Context, v *value) (string, error) {
	x, err := v.eval(ctx, cs.root)
	if err != nil {
		return "", err
	}
	return formatValue(x), nil
}

func (cs *clientSet) transport(ctx context.Context, spec *ClientSpec) (client.Transport, error) {
	if spec.HTTP {
		u, err := cs.str(ctx, spec.url)
		if err != nil {
			return nil, err
		}
		h := http.Header{}
		for _, x := range spec.headers {
			v, err := cs.str(ctx, x.val)
			if err != nil {
				return nil, err
			}
			h.Set(x.key, v)
		}
		return &client.HTTP{URL: u, Header: h}, nil
	}
	cmd, err := cs.str(ctx, spec.command)
	if err != nil {
		return nil, err
	}
	if strings.ContainsRune(cmd, '/') || strings.ContainsRune(cmd, filepath.Separator) {
		cmd = cs.fromManifest(cmd) // a bare name is looked up in PATH
	}
	t := &client.Command{Path: cmd}
	for _, a := range spec.args {
		s, err := cs.str(ctx, a)
		if err != nil {
			return nil, err
		}
		if strings.HasPrefix(s, "./") || strings.HasPrefix(s, "../") {
			s = cs.fromManifest(s)
		}
		t.Args = append(t.Args, s)
	}
	if len(spec.env) > 0 {
		t.Env = os.Environ()
		for _, x := range spec.env {
			v, err := cs.str(ctx, x.val)
			if err != nil {
				return nil, err
			}
			t.Env = append(t.Env, x.key+"="+v) // later entries win
		}
	}
	if spec.cwd != nil {
		dir, err := cs.str(ctx, spec.cwd)
		if err != nil {
			return nil, err
		}
		t.Dir = cs.fromManifest(dir)
	}
	return t, nil
}

// fromManifest makes a relative path absolute from the manifest's
// directory, so that a flow runs the same from any working directory (and
// a path stays right whatever cwd: the child gets).
func (cs *clientSet) fromManifest(p string) string {
	if filepath.IsAbs(p) {
		return p
	}
	p = filepath.Join(cs.fl.file.dir, p)
	if abs, err := filepath.Abs(p); err == nil {
		return abs
	}
	return p
}

// close closes the clients this run connected.
func (cs *clientSet) close() {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	for _, lc := range cs.conns {
		lc.mu.Lock()
		if lc.c != nil {
			lc.c.Close()
		}
		lc.mu.Unlock()
	}
}

// mcpOther runs list, read and prompt; results are the wire objects.
func (r *run) mcpOther(ctx context.Context, c *client.Client, s *Step, sc *scope) (any, error) {
	switch s.Kind {
	case "list":
		var v any
		var err error
		switch s.what {
		case "tools":
			v, err = c.ListTools(ctx)
		case "resources":
			v, err = c.ListResources(ctx)
		case "resource_templates":
			v, err = c.ListResourceTemplates(ctx)
		case "prompts":
			v, err = c.ListPrompts(ctx)
		}
		if err != nil {
			return nil, err
		}
		out, err := toValue(v)
		if out == nil && err == nil {
			out = []any{}
		}
		return out, err
	case "read":
		u, err := s.uri.eval(ctx, sc)
		if err != nil {
			return nil, err
		}
		res, err := c.ReadResource(ctx, formatValue(u))
		if err != nil {
			return nil, err
		}
		return toValue(res)
	case "prompt":
		n, err := s.prompt.eval(ctx, sc)
		if err != nil {
			return nil, err
		}
		args := map[string]string{}
		if s.args != nil {
			a, err := s.args.eval(ctx, sc)
			if err != nil {
				return nil, err
			}
			if m, ok := a.(map[string]any); ok {
				for k, v := range m {
					args[k] = formatValue(v)
				}
			}
		}
		res, err := c.GetPrompt(ctx, formatValue(n), args)
		if err != nil {
			return nil, err
		}
		m, err := toValue(res)
		if mm, ok := m.(map[string]any); ok {
			if _, has := mm["description"]; !has {
				mm["description"] = ""
			}
		}
		return m, err
	}
	return nil, fmt.Errorf("not an MCP step: %s", s.Kind)
}

// callValue is a tools/call result as flows see it: {content,
// structuredContent, _meta}, and isError when soft (tool_errors: result,
// where a tool error is a result): on the success path of a call that
// throws tool errors, isError would always be false, so it is left out (it
// is in ERR_MCP_TOOL_ERROR's data). Text blocks are converted directly,
// without a JSON round trip.
func callValue(res *mcp.CallToolResult, soft bool) map[string]any {
	m := map[string]any{"content": contentValue(res.Content), "structuredContent": nil, "_meta": nil}
	if soft {
		m["isError"] = res.IsError
	}
	if len(res.StructuredContent) > 0 {
		if v, err := fromJSON(res.StructuredContent); err == nil {
			m["structuredContent"] = v
		}
	}
	if res.Meta != nil {
		m["_meta"] = jsonLike(map[string]any(res.Meta))
	}
	return m
}

// contentValue converts content blocks to their wire objects.
func contentValue(blocks []mcp.Content) []any {
	out := make([]any, 0, len(blocks))
	for _, b := range blocks {
		if t, ok := b.(*mcp.TextContent); ok && t.Annotations == nil && t.Meta == nil {
			out = append(out, map[string]any{"type": "text", "text": t.Text})
			continue
		}
		v, err := toValue(b)
		if err != nil {
			v = map[string]any{"type": b.ContentType()}
		}
		out = append(out, v)
	}
	return out
}

// toValue converts a Go value to JSON-like values through its JSON form.
func toValue(x any) (any, error) {
	b, err := json.Marshal(x)
	if err != nil {
		return nil, err
	}
	return fromJSON(b)
}

// fromJSON decodes JSON to JSON-like values: integers as int64 (when they
// fit), other numbers as float64. It reads as the wire is read (exact, no
// member name twice, valid UTF-8, nothing after the value): what a flow
// sees of a server's result is what any other reader of it sees.
func fromJSON(b []byte) (any, error) {
	var v any
	if err := wirejson.UnmarshalUseNumber(b, &v); err != nil {
		return nil, err
	}
	return numbers(v), nil
}

// numbers replaces json.Number by int64 or float64, in place.
func numbers(v any) any {
	switch x := v.(type) {
	case json.Number:
		if i, err := x.Int64(); err == nil {
			return i
		}
		f, _ := x.Float64()
		return f
	case []any:
		for i := range x {
			x[i] = numbers(x[i])
		}
	case map[string]any:
		for k, e := range x {
			x[k] = numbers(e)
		}
	}
	return v
}

// jsonLike copies a value decoded from JSON into flow values without a
// JSON round trip when it holds only JSON types; anything else goes
// through its JSON form.
func jsonLike(v any) any {
	switch x := v.(type) {
	case nil, bool, string, int64:
		return x
	case float64:
		if x == float64(int64(x)) && x >= -1<<53 && x <= 1<<53 {
			return int64(x)
		}
		return x
	case json.Number:
		return numbers(x)
	case json.RawMessage:
		out, err := fromJSON(x)
		if err != nil {
			return string(x)
		}
		return out
	case []any, map[string]any:
		out, _ := mapElems(x, jsonLike)
		return out
	}
	out, err := toValue(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return out
}
