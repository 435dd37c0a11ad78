package config

import (
	"errors"
	"fmt"

	"github.com/goccy/go-yaml/ast"

	"github.com/toolwire/toolwire/gateway/enrich"
	"github.com/toolwire/toolwire/gateway/policy"
	"github.com/toolwire/toolwire/internal/yamlsrc"
)

// MaxEnrichRules is the most enrichment rules a file may configure.
const MaxEnrichRules = 1024

var (
	enrichKeys = []string{"name", "tools", "when", "text", "links", "structured", "overwrite"}
	linkKeys   = []string{"uri", "name", "title", "description", "mime_type"}
)

// ruleFields are where a rule's fields are, by enrich.RuleError.Field,
// with the name the file gives them.
type ruleFields map[string]struct {
	node ast.Node
	name string
}

func (rf ruleFields) add(field, name string, n ast.Node) {
	rf[field] = struct {
		node ast.Node
		name string
	}{n, name}
}

// enrichment decodes the enrichment rules and compiles them; Enrich stays
// a nil interface without rules.
func (d *decoder) enrichment(n ast.Node, f *File) {
	if n == nil {
		return
	}
	items, ok := d.List(n, "enrichment")
	if !ok || len(items) == 0 {
		return
	}
	before := d.Count()
	var rules []enrich.Rule
	names := map[string]ast.Node{}
	for i, it := range items {
		if i == MaxEnrichRules {
			d.Errorf(it, "enrichment: more than %d rules", MaxEnrichRules)
			break
		}
		r, fields, ok := d.enrichRule(it, i, names)
		if !ok {
			continue
		}
		// Each rule alone, so that every rule's first error is reported.
		if _, err := enrich.New([]enrich.Rule{r}); err != nil {
			d.ruleError(it, i, r.Name, fields, err)
			continue
		}
		rules = append(rules, r)
	}
	d.enrichRules = rules
	// Each rule compiled above.
	if e, ok := built(d, before, n, "enrichment", func() (*enrich.Enricher, error) { return enrich.New(rules) }); ok {
		f.Gateway.Enrich = e
	}
}

// ruleError reports an error of enrich.New at the field it concerns.
func (d *decoder) ruleError(item ast.Node, i int, name string, fields ruleFields, err error) {
	what := fmt.Sprintf("enrichment: rule %d %q", i, name)
	var re *enrich.RuleError
	if !errors.As(err, &re) {
		d.Errorf(item, "%s: %v", what, err)
		return
	}
	if fl, ok := fields[re.Field]; ok && fl.node != nil {
		d.Errorf(fl.node, "%s: %s: %v", what, fl.name, re.Err)
		return
	}
	d.Errorf(item, "%s: %v", what, re.Err)
}

func (d *decoder) enrichRule(item ast.Node, i int, names map[string]ast.Node) (enrich.Rule, ruleFields, bool) {
	var r enrich.Rule
	fields := ruleFields{}
	what := fmt.Sprintf("enrichment: rule %d", i)
	m := d.settings(item, item, what, "no settings (want name, tools and what to add)")
	if m == nil {
		return r, nil, false
	}
	before := d.Count()
	// The name first, for the other messages.
	for _, mv := range m.Values {
		if k, ok := yamlsrc.KeyText(mv.Key); ok && k == "name" {
			if s, ok := d.str(mv.Value, what+": name"); ok {
				if err := checkKeyName(s); err != nil {
					d.Errorf(mv.Value, "%s: name: %v", what, err)
				} else if l, c, dup := repeated(names, s, mv.Value); dup {
					d.Errorf(mv.Value, "%s: name: %q is also the name of the rule at %d:%d", what, s, l, c)
				}
				r.Name = s
			}
		}
	}
	if r.Name != "" {
		what = fmt.Sprintf("enrichment: rule %d %q", i, r.Name)
	} else if !d.has(m, "name") {
		d.Errorf(item, "%s: no name", what)
	}
	d.fields(m, what, enrichKeys, func(key string, mv *ast.MappingValueNode) {
		w := what + ": " + key
		v := mv.Value
		switch key {
		case "tools":
			fields.add("Tools", "tools", v)
			list, nodes, _ := d.strList(v, w)
			for j, g := range list {
				if _, err := policy.CompileGlob(g); err != nil {
					d.Errorf(nodes[j], "%s: %v", w, err)
					continue
				}
				fields.add(fmt.Sprintf("Tools[%d]", len(r.Tools)), fmt.Sprintf("tools[%d]", j), nodes[j])
				r.Tools = append(r.Tools, g)
			}
		case "when":
			fields.add("When", "when", v)
			r.When, _ = d.str(v, w)
		case "text":
			list, nodes, _ := d.strList(v, w)
			for j, s := range list {
				fields.add(fmt.Sprintf("Text[%d]", j), fmt.Sprintf("text[%d]", j), nodes[j])
				r.Text = append(r.Text, s)
			}
		case "links":
			links, _ := d.List(v, w)
			for j, ln := range links {
				l, ok := d.link(ln, fmt.Sprintf("%s[%d]", w, j), len(r.Links), j, fields)
				if ok {
					r.Links = append(r.Links, l)
				}
			}
		case "structured":
			r.Structured = d.stringMap(v, w, func(k string, sv *ast.MappingValueNode, _ string, _ bool) {
				fields.add(fmt.Sprintf("Structured[%q]", k), fmt.Sprintf("structured: %s", k), sv.Value)
			})
		case "overwrite":
			r.Overwrite, _ = d.boolean(v, w)
		}
	})
	if !d.has(m, "tools") {
		d.Errorf(item, "%s: no tools (a list of globs over tool names)", what)
	}
	return r, fields, d.Count() == before
}

// link decodes one of a rule's links; index is its place among the
// links kept, j in the file.
func (d *decoder) link(n ast.Node, what string, index, j int, fields ruleFields) (enrich.Link, bool) {
	var l enrich.Link
	m, ok := d.Mapping(n, what)
	if !ok {
		return l, false
	}
	if m == nil || !d.has(m, "uri") {
		d.Errorf(n, "%s: no uri", what)
		return l, false
	}
	// Each key's field of enrich.Link, by name (as enrich.RuleError
	// names it) and by place.
	to := map[string]struct {
		field string
		value *string
	}{
		"uri": {"URI", &l.URI}, "name": {"Name", &l.Name}, "title": {"Title", &l.Title},
		"description": {"Description", &l.Description}, "mime_type": {"MimeType", &l.MimeType},
	}
	ok = true
	d.fields(m, what, linkKeys, func(key string, mv *ast.MappingValueNode) {
		s, good := d.str(mv.Value, what+": "+key)
		ok = ok && good
		fields.add(fmt.Sprintf("Links[%d].%s", index, to[key].field), fmt.Sprintf("links[%d]: %s", j, key), mv.Value)
		*to[key].value = s
	})
	return l, ok
}
