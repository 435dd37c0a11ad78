package config

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/goccy/go-yaml/ast"

	"github.com/toolwire/toolwire/gateway"
	"github.com/toolwire/toolwire/internal/names"
	"github.com/toolwire/toolwire/internal/yamlsrc"
)

// MaxPinned is the most arguments one tool may have pinned.
const MaxPinned = 64

// toolOverrideKeys are the keys of one entry of an upstream's tools.
var toolOverrideKeys = []string{"title", "description", "pin"}

// upstreamTools decodes an upstream's tools: per tool (its upstream name),
// a title and description replacing the upstream's, and pinned arguments
// (pin: {argument: value}; a value is a string, a number or a boolean).
func (d *decoder) upstreamTools(n ast.Node, what string, u *gateway.Upstream) {
	m, ok := d.Mapping(n, what)
	if !ok || m == nil {
		return
	}
	u.Tools = map[string]gateway.ToolOverride{}
	for _, mv := range m.Values {
		name, ok := d.Key(mv.Key)
		if !ok {
			continue
		}
		w := fmt.Sprintf("%s: %q", what, name)
		if err := names.Problem(name); err != "" {
			d.Errorf(mv.Key, "%s: the tool name %s", w, err)
			continue
		}
		tm := d.settings(mv.Value, mv.Key, w, "no settings (want title, description or pin)")
		if tm == nil {
			continue
		}
		var o gateway.ToolOverride
		d.fields(tm, w, toolOverrideKeys, func(key string, kv *ast.MappingValueNode) {
			kw := w + ": " + key
			switch key {
			case "title", "description":
				if s, ok := d.str(kv.Value, kw); ok {
					if strings.TrimSpace(s) == "" {
						d.Errorf(kv.Value, "%s: empty (leave it out to keep the upstream's)", kw)
					}
					if key == "title" {
						o.Title = s
					} else {
						o.Description = s
					}
				}
			case "pin":
				o.Pin = d.pins(kv.Value, kw)
			}
		})
		u.Tools[name] = o
	}
}

// pins decodes pin: argument names to scalar values, as compact JSON.
func (d *decoder) pins(n ast.Node, what string) map[string]json.RawMessage {
	m, ok := d.Mapping(n, what)
	if !ok || m == nil {
		if ok {
			d.Errorf(n, "%s: empty (want argument: value)", what)
		}
		return nil
	}
	out := map[string]json.RawMessage{}
	for i, mv := range m.Values {
		if i == MaxPinned {
			d.Errorf(mv.Key, "%s: more than %d pinned arguments", what, MaxPinned)
			break
		}
		arg, ok := d.Key(mv.Key)
		if !ok {
			continue
		}
		w := fmt.Sprintf("%s: %q", what, arg)
		if arg == "" {
			d.Errorf(mv.Key, "%s: an argument name must not be empty", what)
			continue
		}
		if v, ok := d.pinValue(mv.Value, w); ok {
			out[arg] = v
		}
	}
	return out
}

// pinValue is a pinned argument's value as compact JSON: a YAML string
// (expanded like every string of the file), a number written as JSON
// writes it, or a boolean.
func (d *decoder) pinValue(n ast.Node, what string) (json.RawMessage, bool) {
	if n == nil {
		d.ErrorAt(0, 0, "%s: no value", what)
		return nil, false
	}
	if !d.Supported(n) {
		return nil, false
	}
	switch v := n.(type) {
	case *ast.StringNode, *ast.LiteralNode:
		s, ok := d.str(n, what)
		if !ok {
			return nil, false
		}
		var b bytes.Buffer
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(s); err != nil {
			d.Errorf(n, "%s: %v", what, err)
			return nil, false
		}
		return json.RawMessage(bytes.TrimSuffix(b.Bytes(), []byte("\n"))), true
	case *ast.BoolNode:
		if v.Value {
			return json.RawMessage("true"), true
		}
		return json.RawMessage("false"), true
	case *ast.IntegerNode, *ast.FloatNode:
		tok := n.GetToken().Value
		var c bytes.Buffer
		if json.Compact(&c, []byte(tok)) != nil || !isJSONNumber(tok) {
			d.Errorf(n, "%s: %q is not a number as JSON writes it (decimal digits, optional fraction and exponent)", what, truncate(tok))
			return nil, false
		}
		return json.RawMessage(c.Bytes()), true
	}
	d.Errorf(n, "%s: want a string, a number or a boolean, not a %s", what, yamlsrc.Kind(n))
	return nil, false
}

// isJSONNumber reports whether s is one JSON number (RFC 8259 section 6).
func isJSONNumber(s string) bool {
	i := 0
	if i < len(s) && s[i] == '-' {
		i++
	}
	switch {
	case i < len(s) && s[i] == '0':
		i++
	case i < len(s) && s[i] >= '1' && s[i] <= '9':
		i = digits(s, i)
	default:
		return false
	}
	if i < len(s) && s[i] == '.' {
		if i = digits(s, i+1); i < 0 {
			return false
		}
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		if i = digits(s, i); i < 0 {
			return false
		}
	}
	return i == len(s)
}

// digits returns the index in s past the decimal digits from i on, or -1
// when there is no digit at i: a JSON number's fraction and exponent need
// at least one.
func digits(s string, i int) int {
	j := i
	for j < len(s) && s[j] >= '0' && s[j] <= '9' {
		j++
	}
	if j == i {
		return -1
	}
	return j
}
