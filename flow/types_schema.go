package flow

import (
	"encoding/json"
	"sort"

	"cel.dev/cel-go/common/types"

	"github.com/toolwire/toolwire/internal/wirejson"
)

// recheckStructured runs the static check of a flow again with the
// structuredContent of its named calls typed from their tools'
// outputSchemas (check --connect sees them): a property the schema does
// not declare is then an error at its place, as a field of a result is.
func (p *parser) recheckStructured(fl *Flow, outputs map[*Step]json.RawMessage) {
	if len(outputs) == 0 || fl.failed || fl.cfg == nil {
		return
	}
	savedCfg := p.cfg
	p.cfg, p.structured = fl.cfg, outputs
	defer func() { p.cfg, p.structured = savedCfg, nil }()
	p.check(fl)
}

// structuredTypes declares, for each call with an outputSchema, its own
// result type (the call result with structuredContent typed) and the
// object types of the schema; it returns the result type of each step.
func structuredTypes(outputs map[*Step]json.RawMessage, extra map[string]map[string]*types.Type) map[*Step]*types.Type {
	out := map[*Step]*types.Type{}
	for s, raw := range outputs {
		var doc any
		if err := wirejson.Unmarshal(raw, &doc); err != nil {
			continue
		}
		name := tCallResult + "." + s.Name
		fields := map[string]*types.Type{}
		for k, v := range objectFields[tCallResult] {
			fields[k] = v
		}
		if s.toolErrors == "result" {
			fields["isError"] = types.BoolType
		}
		fields["structuredContent"] = schemaType(doc, "structuredContent."+s.Name, extra)
		extra[name] = fields
		out[s] = types.NewObjectType(name)
	}
	return out
}

// schemaType is the CEL type of values a JSON Schema admits: an object
// with properties is an object type of those properties (closed: another
// key is an error, unless additionalProperties allows more), an array a
// list, integer int, string and boolean their types; a number stays dyn
// (JSON gives an integral number as an int), and so does anything else.
func schemaType(doc any, name string, extra map[string]map[string]*types.Type) *types.Type {
	m, ok := doc.(map[string]any)
	if !ok {
		return types.DynType
	}
	typ, _ := m["type"].(string)
	props, hasProps := m["properties"].(map[string]any)
	switch {
	case typ == "object" || (typ == "" && hasProps):
		if ap, set := m["additionalProperties"]; !hasProps || (set && ap != false) {
			return types.NewMapType(types.StringType, types.DynType)
		}
		fields := map[string]*types.Type{}
		keys := make([]string, 0, len(props))
		for k := range props {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			fields[k] = schemaType(props[k], name+"."+k, extra)
		}
		extra[name] = fields
		return types.NewObjectType(name)
	case typ == "array":
		if items, ok := m["items"]; ok {
			return types.NewListType(schemaType(items, name+"[]", extra))
		}
		return types.NewListType(types.DynType)
	case typ == "integer":
		return types.IntType
	case typ == "string":
		return types.StringType
	case typ == "boolean":
		return types.BoolType
	}
	return types.DynType
}
