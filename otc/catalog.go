package otc

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/toolwire/toolwire/mcp"
	"github.com/toolwire/toolwire/schema"
)

// entry is one OTC tool: its definition and the MCP tool behind it.
type entry struct {
	def     ToolDefinition
	mcpName string
	base    string // Toolkit.Tool
	input   *schema.Schema
	ver     semver
}

// catalog is the OTC view of a backend's tool list.
type catalog struct {
	entries []*entry            // sorted by id
	byBase  map[string][]*entry // "Toolkit.Tool" -> versions, ascending
	schemas map[string]*schema.Schema
}

// buildCatalog maps tools to OTC. prev, when not nil, lends compiled input
// schemas so that an unchanged list compiles nothing.
func buildCatalog(tools []*mcp.Tool, naming Naming, prev *catalog) (*catalog, error) {
	c := &catalog{byBase: map[string][]*entry{}, schemas: map[string]*schema.Schema{}}
	byID := map[string]*entry{}
	byName := map[string]*entry{}
	for _, t := range tools {
		if t == nil {
			continue
		}
		ref, err := naming.Map(t)
		if errors.Is(err, ErrSkipTool) {
			continue
		}
		if err != nil {
			return nil, &MappingError{Tools: []string{t.Name}, Reason: err.Error()}
		}
		ver, _ := parseSemver(ref.Version)
		e := &entry{mcpName: t.Name, base: ref.Base(), ver: ver}
		e.def = toolDefinition(t, ref)
		if other := byID[ref.ID()]; other != nil {
			return nil, &MappingError{Tools: []string{other.mcpName, t.Name}, ID: ref.ID(), Reason: "map to the same OTC id"}
		}
		for _, other := range c.byBase[ref.Base()] {
			if other.ver == ver {
				return nil, &MappingError{Tools: []string{other.mcpName, t.Name}, ID: ref.ID(),
					Reason: fmt.Sprintf("map to the same version of %s (%s and %s)", ref.Base(), other.def.Version, ref.Version)}
			}
		}
		if other := byName[ref.Name()]; other != nil && other.base != ref.Base() {
			return nil, &MappingError{Tools: []string{other.mcpName, t.Name}, ID: ref.Name(), Reason: "map to the same OTC name"}
		}
		key := string(t.InputSchema)
		if s := c.schemas[key]; s != nil {
			e.input = s
		} else if s := prev.schema(key); s != nil {
			e.input = s
		} else if e.input, err = schema.Compile(t.InputSchema); err != nil {
			return nil, &MappingError{Tools: []string{t.Name}, Reason: "inputSchema does not compile: " + err.Error()}
		}
		c.schemas[key] = e.input
		byID[ref.ID()] = e
		byName[ref.Name()] = e
		c.entries = append(c.entries, e)
		c.byBase[ref.Base()] = append(c.byBase[ref.Base()], e)
	}
	slices.SortFunc(c.entries, func(a, b *entry) int { return strings.Compare(a.def.ID, b.def.ID) })
	for _, vs := range c.byBase {
		slices.SortFunc(vs, func(a, b *entry) int {
			if a.ver.less(b.ver) {
				return -1
			}
			return 1
		})
	}
	return c, nil
}

func (c *catalog) schema(key string) *schema.Schema {
	if c == nil {
		return nil
	}
	return c.schemas[key]
}

// resolveError is a tool_id that names no tool: a 400.
type resolveError struct{ msg string }

func (e *resolveError) Error() string { return e.msg }

// resolve finds the tool a tool_id names: "Toolkit.Tool@X.Y.Z" exactly,
// "Toolkit.Tool@X" as X.0.0, "Toolkit.Tool" as the latest version.
func (c *catalog) resolve(toolID string) (*entry, error) {
	m := toolIDRe().FindStringSubmatch(toolID)
	if m == nil {
		return nil, &resolveError{fmt.Sprintf("tool_id %q is not a tool id: want Toolkit.Tool, Toolkit.Tool@X or Toolkit.Tool@X.Y.Z", toolID)}
	}
	base, v := m[1]+"."+m[2], m[3]
	versions := c.byBase[base]
	if len(versions) == 0 {
		return nil, &resolveError{fmt.Sprintf("unknown tool %q", base)}
	}
	if v == "" {
		return versions[len(versions)-1], nil
	}
	if !strings.Contains(v, ".") {
		v += ".0.0"
	}
	want, ok := parseSemver(v)
	if ok {
		for _, e := range versions {
			if e.ver == want {
				return e, nil
			}
		}
	}
	have := make([]string, len(versions))
	for i, e := range versions {
		have[i] = e.def.Version
	}
	return nil, &resolveError{fmt.Sprintf("tool %q has no version %s (available: %s)", base, v, strings.Join(have, ", "))}
}
