package flow

import (
	"github.com/goccy/go-yaml/ast"

	"github.com/toolwire/toolwire/internal/yamlsrc"
	"github.com/toolwire/toolwire/mcp"
)

// The declarations of a flow: its inputs and its clients.

// inputKeys are the keys of an input's declaration.
var inputKeys = []string{"type", "default", "description", "secret"}

// clientKeys are the keys of a client's declaration.
var clientKeys = []string{"command", "args", "env", "cwd", "url", "headers", "era", "timeout"}

var inputTypes = map[string]bool{"string": true, "integer": true, "number": true, "boolean": true, "object": true, "array": true}

func (p *parser) inputs(fl *Flow, n ast.Node) {
	entries, _ := p.mapping(n, "inputs")
	for _, e := range entries {
		in := &Input{Name: e.key, Type: "string", Required: true, Pos: posOf(e.k)}
		if !identRE.MatchString(e.key) {
			p.Errorf(e.k, "input name %q: want letters, digits and _", e.key)
		}
		fields, _ := p.mapping(e.v, "input "+e.key)
		var def *entry
		for i, f := range fields {
			switch f.key {
			case "type":
				if s, ok := p.Scalar(f.v, "type"); ok {
					if !inputTypes[s] {
						p.Errorf(f.v, "input %s: unknown type %q (want string, integer, number, boolean, object or array)", e.key, s)
					}
					in.Type = s
				}
			case "description":
				in.Description, _ = p.Scalar(f.v, "description")
			case "default":
				def = &fields[i]
			case "secret":
				if b, ok := f.v.(*ast.BoolNode); ok {
					in.Secret = b.Value
				} else {
					p.Errorf(f.v, "input %s: secret: want true or false, not a %s", e.key, yamlsrc.Kind(f.v))
				}
			default:
				p.unknown(f, "input "+e.key, inputKeys...)
			}
		}
		if in.Secret && in.Type != "string" {
			p.errAt(in.Pos, "input %s: secret: true is for string inputs (its type is %s)", e.key, in.Type)
		}
		if def != nil {
			v := p.value(def.v, 2)
			if v.dynamic() {
				p.Errorf(def.v, "input %s: a default cannot hold expressions", e.key)
			} else if x, err := convertInput(v.lit, in.Type); err != nil {
				p.Errorf(def.v, "input %s: default: %v", e.key, err)
			} else {
				in.Default, in.Required = x, false
			}
		}
		fl.Inputs = append(fl.Inputs, in)
	}
}

func (p *parser) clients(fl *Flow, n ast.Node) {
	entries, _ := p.mapping(n, "clients")
	fl.inherit = n == nil
	for _, e := range entries {
		c := &ClientSpec{Name: e.key, Pos: posOf(e.k)}
		fields, _ := p.mapping(e.v, "client "+e.key)
		for _, f := range fields {
			switch f.key {
			case "command":
				c.command = p.value(f.v, 2)
			case "args":
				items, _ := p.List(f.v, "args")
				for _, it := range items {
					c.args = append(c.args, p.value(it, 3))
				}
			case "env":
				kvs, _ := p.mapping(f.v, "env")
				for _, x := range kvs {
					c.env = append(c.env, kv{x.key, p.value(x.v, 3)})
				}
			case "cwd":
				c.cwd = p.value(f.v, 2)
			case "url":
				c.url, c.HTTP = p.value(f.v, 2), true
			case "headers":
				kvs, _ := p.mapping(f.v, "headers")
				for _, x := range kvs {
					c.headers = append(c.headers, kv{x.key, p.value(x.v, 3)})
				}
			case "era":
				if s, ok := p.Scalar(f.v, "era"); ok {
					switch s {
					case "auto":
						c.Era = mcp.EraAuto
					case "legacy":
						c.Era = mcp.EraLegacy
					case "modern":
						c.Era = mcp.EraModern
					default:
						p.Errorf(f.v, "client %s: era %q: want auto, legacy or modern", e.key, s)
					}
				}
			case "timeout":
				c.Timeout, _ = p.duration(f.v, "timeout")
			default:
				p.unknown(f, "client "+e.key, clientKeys...)
			}
		}
		switch {
		case c.command != nil && c.url != nil:
			p.errAt(c.Pos, "client %s: give command (stdio) or url (HTTP), not both", e.key)
		case c.command == nil && c.url == nil:
			p.errAt(c.Pos, "client %s: needs command (stdio) or url (HTTP)", e.key)
		case c.url != nil && (c.args != nil || c.env != nil || c.cwd != nil):
			p.errAt(c.Pos, "client %s: args, env and cwd are for stdio clients (command)", e.key)
		case c.command != nil && c.headers != nil:
			p.errAt(c.Pos, "client %s: headers are for HTTP clients (url)", e.key)
		}
		fl.Clients = append(fl.Clients, c)
	}
}
