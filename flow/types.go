package flow

import (
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
	"strings"

	"cel.dev/cel-go/cel"
	"cel.dev/cel-go/common/types"
	"cel.dev/cel-go/common/types/ref"

	"github.com/toolwire/toolwire/internal/suggest"
)

// The CEL object types of MCP results, as the MCP 2025-11-25 schema
// declares them. They exist only for the static check: a flow's programs
// are compiled against map(string, dyn) results, so what runs is what
// arrives on the wire; the check rejects a field no variant declares
// ("result.contnet", ".bogus") where it is written.
const (
	tCallResult   = "mcp.CallToolResult"
	tCallSoft     = "mcp.CallToolResult (tool_errors: result)" // with isError
	tReadResult   = "mcp.ReadResourceResult"
	tPromptResult = "mcp.GetPromptResult"
	tPromptMsg    = "mcp.PromptMessage"
	tContent      = "mcp.ContentBlock"     // the union of the five block types
	tResContents  = "mcp.ResourceContents" // text or blob contents
	tAnnotations  = "mcp.Annotations"
	tIcon         = "mcp.Icon"
	tTool         = "mcp.Tool"
	tToolAnnots   = "mcp.ToolAnnotations"
	tResource     = "mcp.Resource"
	tResTemplate  = "mcp.ResourceTemplate"
	tPrompt       = "mcp.Prompt"
	tPromptArg    = "mcp.PromptArgument"
)

// variants is a set of union members: the five content block types and
// the two kinds of resource contents.
type variants uint8

const (
	vText variants = 1 << iota
	vImage
	vAudio
	vLink
	vEmbedded
	vResText
	vResBlob

	contentAll = vText | vImage | vAudio | vLink | vEmbedded
	resAll     = vResText | vResBlob
)

// variantNames names each member as a flow writes it: a block's type, or
// the field that tells resource contents apart.
var variantNames = []struct {
	v    variants
	name string
}{
	{vText, "text"}, {vImage, "image"}, {vAudio, "audio"}, {vLink, "resource_link"}, {vEmbedded, "resource"},
	{vResText, "text"}, {vResBlob, "blob"},
}

// contentTypes maps a content block's type to its member.
var contentTypes = map[string]variants{"text": vText, "image": vImage, "audio": vAudio, "resource_link": vLink, "resource": vEmbedded}

// unionFields is, for each union type, the members that declare each
// field; a field on every member needs no narrowing.
var unionFields = map[string]map[string]variants{
	tContent: {
		"type": contentAll, "annotations": contentAll, "_meta": contentAll,
		"text":     vText,
		"data":     vImage | vAudio,
		"mimeType": vImage | vAudio | vLink,
		"uri":      vLink, "name": vLink, "title": vLink, "description": vLink, "size": vLink, "icons": vLink,
		"resource": vEmbedded,
	},
	tResContents: {"uri": resAll, "mimeType": resAll, "_meta": resAll, "text": vResText, "blob": vResBlob},
}

// requiredFields are the member-specific fields the schema requires, so
// that their absence rules those members out.
var requiredFields = map[string]map[string]bool{
	tContent:     {"text": true, "data": true, "uri": true, "name": true, "resource": true},
	tResContents: {"text": true, "blob": true},
}

// unionAll is every member of a union type; 0 for other types.
func unionAll(t *types.Type) variants {
	if t == nil || t.Kind() != types.StructKind {
		return 0
	}
	switch t.TypeName() {
	case tContent:
		return contentAll
	case tResContents:
		return resAll
	}
	return 0
}

// describeVariants lists a set's members for messages.
func describeVariants(v variants, union string) string {
	var out []string
	for _, n := range variantNames {
		if v&n.v != 0 {
			out = append(out, n.name)
		}
	}
	what := " content"
	if union == tResContents {
		what = " resource contents"
	}
	switch len(out) {
	case 0:
		return "no" + what
	case 1:
		return out[0] + what
	}
	return strings.Join(out[:len(out)-1], ", ") + " or " + out[len(out)-1] + what
}

// objectFields declares every object type's fields.
var objectFields = func() map[string]map[string]*types.Type {
	str, i, d, b := types.StringType, types.IntType, types.DoubleType, types.BoolType
	dyn := types.DynType
	meta := types.NewMapType(types.StringType, types.DynType)
	obj := types.NewObjectType
	icons := types.NewListType(obj(tIcon))
	content := map[string]*types.Type{}
	for f := range unionFields[tContent] {
		content[f] = str
	}
	content["annotations"], content["_meta"] = obj(tAnnotations), meta
	content["size"], content["icons"], content["resource"] = i, icons, obj(tResContents)
	return map[string]map[string]*types.Type{
		tCallResult: {
			"content": types.NewListType(obj(tContent)), "structuredContent": dyn, "_meta": meta,
		},
		tCallSoft: {
			"content": types.NewListType(obj(tContent)), "structuredContent": dyn, "isError": b, "_meta": meta,
		},
		tReadResult:   {"contents": types.NewListType(obj(tResContents)), "_meta": meta},
		tPromptResult: {"description": str, "messages": types.NewListType(obj(tPromptMsg)), "_meta": meta},
		tPromptMsg:    {"role": str, "content": obj(tContent)},
		tContent:      content,
		tResContents:  {"uri": str, "mimeType": str, "text": str, "blob": str, "_meta": meta},
		tAnnotations:  {"audience": types.NewListType(str), "priority": d, "lastModified": str},
		tIcon:         {"src": str, "mimeType": str, "sizes": types.NewListType(str), "theme": str},
		tTool: {
			"name": str, "title": str, "description": str, "icons": icons, "inputSchema": meta,
			"outputSchema": meta, "annotations": obj(tToolAnnots), "execution": meta, "_meta": meta,
		},
		tToolAnnots: {"title": str, "readOnlyHint": b, "destructiveHint": b, "idempotentHint": b, "openWorldHint": b},
		tResource: {
			"uri": str, "name": str, "title": str, "description": str, "mimeType": str, "size": i,
			"icons": icons, "annotations": obj(tAnnotations), "_meta": meta,
		},
		tResTemplate: {
			"uriTemplate": str, "name": str, "title": str, "description": str, "mimeType": str,
			"icons": icons, "annotations": obj(tAnnotations), "_meta": meta,
		},
		tPrompt: {
			"name": str, "title": str, "description": str, "arguments": types.NewListType(obj(tPromptArg)),
			"icons": icons, "_meta": meta,
		},
		tPromptArg: {"name": str, "title": str, "description": str, "required": b},
	}
}()

// typedResult is the checked type of steps.<name>.result for a step; nil
// when the step's result is typed as before (resultType).
func typedResult(s *Step) *types.Type {
	switch s.Kind {
	case "call":
		if s.toolErrors == "result" {
			return types.NewObjectType(tCallSoft)
		}
		return types.NewObjectType(tCallResult)
	case "read":
		return types.NewObjectType(tReadResult)
	case "prompt":
		return types.NewObjectType(tPromptResult)
	case "list":
		elem := map[string]string{"tools": tTool, "resources": tResource, "resource_templates": tResTemplate, "prompts": tPrompt}[s.what]
		if elem != "" {
			return types.NewListType(types.NewObjectType(elem))
		}
	}
	return nil
}

// resultProvider adds the MCP result types to CEL's own, and remembers
// the last field it was asked for and did not have, for "did you mean".
type resultProvider struct {
	types.Provider
	extra  map[string]map[string]*types.Type // from outputSchemas
	misses map[string]string                 // field asked for and missing: its type
}

// fields are an object type's declared fields.
func (p *resultProvider) fields(name string) (map[string]*types.Type, bool) {
	if fs, ok := p.extra[name]; ok {
		return fs, true
	}
	fs, ok := objectFields[name]
	return fs, ok
}

// FindStructType implements types.Provider.
func (p *resultProvider) FindStructType(name string) (*types.Type, bool) {
	if _, ok := p.fields(name); ok {
		return types.NewTypeTypeWithParam(types.NewObjectType(name)), true
	}
	return p.Provider.FindStructType(name)
}

// FindStructFieldNames implements types.Provider.
func (p *resultProvider) FindStructFieldNames(name string) ([]string, bool) {
	if fs, ok := p.fields(name); ok {
		return sortedFields(fs), true
	}
	return p.Provider.FindStructFieldNames(name)
}

// FindStructFieldType implements types.Provider.
func (p *resultProvider) FindStructFieldType(name, field string) (*types.FieldType, bool) {
	fs, ok := p.fields(name)
	if !ok {
		return p.Provider.FindStructFieldType(name, field)
	}
	t, ok := fs[field]
	if !ok {
		if p.misses == nil {
			p.misses = map[string]string{}
		}
		p.misses[field] = name
		return nil, false
	}
	return &types.FieldType{Type: t}, true
}

// NewValue implements types.Provider: the result types are never built
// by an expression.
func (p *resultProvider) NewValue(name string, fields map[string]ref.Val) ref.Val {
	if _, ok := p.fields(name); ok {
		return types.NewErr("%s cannot be constructed", name)
	}
	return p.Provider.NewValue(name, fields)
}

func sortedFields(fs map[string]*types.Type) []string {
	out := make([]string, 0, len(fs))
	for f := range fs {
		out = append(out, f)
	}
	sort.Strings(out)
	return out
}

// undefinedField matches CEL's message for a field a type lacks.
var undefinedField = regexp.MustCompile(`undefined field '([^']*)'`)

// fieldMessage rewrites CEL's "undefined field" for the result types: the
// type in protocol terms, its fields, and the nearest one.
func (p *resultProvider) fieldMessage(msg string) string {
	m := undefinedField.FindStringSubmatch(msg)
	if m == nil || p.misses[m[1]] == "" {
		return msg
	}
	missType := p.misses[m[1]]
	fs, _ := p.fields(missType)
	fields := sortedFields(fs)
	what := strings.TrimPrefix(missType, "mcp.")
	if strings.HasPrefix(missType, "structuredContent.") {
		what = "the structuredContent of " + strings.TrimPrefix(missType, "structuredContent.") + " (its tool's outputSchema)"
	}
	if missType == tContent {
		what = "content block (text, image, audio, resource_link or resource)"
	}
	out := fmt.Sprintf("unknown field %q on %s", m[1], what)
	if m[1] == "isError" && missType == tCallResult {
		return out + " (a call that throws tool errors never sees isError: set tool_errors: result, or catch ERR_MCP_TOOL_ERROR)"
	}
	if best, ok := suggest.Nearest(m[1], fields); ok {
		return out + fmt.Sprintf(" (did you mean %q?)", best)
	}
	return out + " (fields: " + strings.Join(fields, ", ") + ")"
}

// typedEnv is a flow's CEL environment with results typed, for the check
// only.
type typedEnv struct {
	base *cel.Env
	prov *resultProvider
	envs map[string]*cel.Env
}

// newTypedEnv declares the flow's inputs, env and step results as
// newExprEnv does, with call, list, read and prompt results typed.
func newTypedEnv(fl *Flow, named map[string]*Step, outputs map[*Step]json.RawMessage) (*typedEnv, error) {
	b, err := baseEnv()
	if err != nil {
		return nil, err
	}
	prov := &resultProvider{Provider: b.CELTypeProvider(), extra: map[string]map[string]*types.Type{}}
	structured := structuredTypes(outputs, prov.extra)
	stepTypes := make(map[string]*cel.Type, len(named))
	for n, s := range named {
		t := structured[s]
		if t == nil {
			t = typedResult(s)
		}
		if t == nil {
			t = resultType(s)
		}
		stepTypes[n] = t
	}
	decls := append([]cel.EnvOption{cel.CustomTypeProvider(prov)}, flowDecls(fl, stepTypes)...)
	env, err := b.Extend(decls...)
	if err != nil {
		return nil, err
	}
	return &typedEnv{base: env, prov: prov, envs: map[string]*cel.Env{}}, nil
}

// envFor is the environment with a scope's extra variables.
func (t *typedEnv) envFor(sc *scopeCtx, items map[string]item) (*cel.Env, error) {
	if len(sc.extra) == 0 {
		return t.base, nil
	}
	seen := map[string]*cel.Type{}
	for _, v := range sc.extra {
		seen[v.name] = v.typ
		if it, ok := items[v.name]; ok {
			seen[v.name] = it.typ
		}
	}
	return extendCached(t.base, t.envs, seen)
}
