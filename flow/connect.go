package flow

import (
	"context"
	"encoding/json"
	"errors"
	"sort"

	"github.com/toolwire/toolwire/internal/wirejson"
	"github.com/toolwire/toolwire/mcp"
)

// Check runs the checks that need the servers (toolwire check --connect):
// with WithConnect(true) it starts the clients calls use, lists their
// tools, and checks every call whose tool is a literal: the tool exists
// and literal arguments validate against its inputSchema (arguments that
// hold expressions are skipped). Without WithConnect it returns nil, as
// Load already ran the static check. The error joins *Diagnostic values.
func Check(ctx context.Context, f *File, opts ...RunOption) error {
	if f == nil {
		return errors.New("flow.Check: no file")
	}
	cfg := newRunConfig(opts)
	if !cfg.connect {
		return nil
	}
	p := &parser{file: f.Path}
	for _, fl := range f.Flows {
		root, err := fl.rootScope(cfg)
		if err != nil {
			p.errAt(fl.Pos, "%v", err)
			continue
		}
		cs := newClientSet(fl, cfg, root)
		tools := map[string]map[string]*mcp.Tool{}
		outputs := map[*Step]json.RawMessage{}
		walkSteps(fl.Steps, func(s *Step) {
			if s.Kind != "call" {
				return
			}
			name, ok := s.tool.literalString()
			if !ok {
				return
			}
			byName, seen := tools[s.client]
			if !seen {
				byName = connectTools(ctx, p, cs, fl, s.client)
				tools[s.client] = byName
			}
			if byName == nil {
				return
			}
			t := byName[name]
			if t == nil {
				p.errAt(s.tool.pos, "%s: client %s has no tool %q", s.Path, s.client, name)
				return
			}
			if msg := checkArgs(t, s.args); msg != "" {
				p.errAt(s.args.pos, "%s: arguments do not match %s's inputSchema: %s", s.Path, name, msg)
			}
			if len(t.OutputSchema) > 0 && s.Name != "" {
				outputs[s] = t.OutputSchema
			}
		})
		cs.close()
		p.recheckStructured(fl, outputs)
	}
	return p.err()
}

// connectTools connects a client and lists its tools; nil after a reported
// failure.
func connectTools(ctx context.Context, p *parser, cs *clientSet, fl *Flow, name string) map[string]*mcp.Tool {
	pos := fl.Pos
	if spec := fl.client(name); spec != nil {
		pos = spec.Pos
	}
	c, err := cs.get(ctx, name)
	if err != nil {
		p.errAt(pos, "client %s: %v", name, err)
		return nil
	}
	list, err := c.ListTools(ctx)
	if err != nil {
		p.errAt(pos, "client %s: tools/list: %v", name, err)
		return nil
	}
	out := make(map[string]*mcp.Tool, len(list))
	for _, t := range list {
		out[t.Name] = t
	}
	return out
}

// checkArgs validates a call's literal arguments against the tool's
// inputSchema. Top-level arguments that hold expressions are left out, and
// so are they from the schema's required list.
func checkArgs(t *mcp.Tool, args *value) string {
	if len(t.InputSchema) == 0 {
		return ""
	}
	var doc map[string]any
	if err := wirejson.Unmarshal(t.InputSchema, &doc); err != nil {
		return ""
	}
	given := map[string]any{}
	var skipped []string
	switch {
	case args == nil:
	case args.kind == vLit:
		if m, ok := args.lit.(map[string]any); ok {
			given = m
		}
	case args.kind == vMap:
		for i, k := range args.keys {
			if args.vals[i].dynamic() {
				skipped = append(skipped, k)
				continue
			}
			given[k] = args.vals[i].lit
		}
	default:
		return "" // one expression: nothing to check
	}
	if req, ok := doc["required"].([]any); ok && len(skipped) > 0 {
		var keep []any
		for _, r := range req {
			if s, _ := r.(string); !contains(toAny(skipped), s) {
				keep = append(keep, r)
			}
		}
		doc["required"] = keep
	}
	raw, _ := json.Marshal(doc)
	schemaDoc, err := fromJSON(raw)
	if err != nil {
		return ""
	}
	sch, err := compileSchema(schemaDoc)
	if err != nil {
		return ""
	}
	if err := sch.Validate(given); err != nil {
		return oneLine(err)
	}
	return ""
}

func toAny(ss []string) []any {
	sort.Strings(ss)
	out := make([]any, len(ss))
	for i, s := range ss {
		out[i] = s
	}
	return out
}
