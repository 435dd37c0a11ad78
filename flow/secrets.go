package flow

import (
	"encoding/base64"
	"encoding/json"
	"os"
	"sort"
	"strings"

	"github.com/goccy/go-yaml/ast"

	"github.com/toolwire/toolwire/internal/yamlsrc"
)

// Masked is what a secret input's value is replaced with wherever a run
// reports it.
const Masked = "***"

// Masker replaces the values of secret inputs (inputs declared with
// secret: true) in text and in flow values: the value itself, its
// JSON-escaped form and its base64 encodings (standard and URL, padded or
// not), so that an error message, an assertion's data, an output or a
// log line never carries a secret in a form that is easy to undo. The
// zero Masker and a nil one mask nothing.
type Masker struct {
	olds []string // longest first, so a longer form is replaced whole
}

// minSecret is the shortest value masked: masking one or two characters
// would garble every report and hide nothing.
const minSecret = 3

// NewMasker masks the given secret values.
func NewMasker(secrets ...string) *Masker {
	seen := map[string]bool{}
	m := &Masker{}
	add := func(s string) {
		if len(s) >= minSecret && !seen[s] {
			seen[s] = true
			m.olds = append(m.olds, s)
		}
	}
	for _, s := range secrets {
		if len(s) < minSecret {
			continue
		}
		add(s)
		if b, err := json.Marshal(s); err == nil {
			add(string(b[1 : len(b)-1])) // <, > and & as \u003c...
		}
		var plain strings.Builder
		enc := json.NewEncoder(&plain)
		enc.SetEscapeHTML(false)
		if enc.Encode(s) == nil {
			b := strings.TrimSpace(plain.String())
			add(b[1 : len(b)-1])
		}
		for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.URLEncoding, base64.RawStdEncoding, base64.RawURLEncoding} {
			add(enc.EncodeToString([]byte(s)))
		}
	}
	sort.Slice(m.olds, func(i, j int) bool { return len(m.olds[i]) > len(m.olds[j]) })
	return m
}

// Empty reports whether m masks nothing.
func (m *Masker) Empty() bool { return m == nil || len(m.olds) == 0 }

// Mask returns s with every secret form replaced by Masked.
func (m *Masker) Mask(s string) string {
	if m.Empty() {
		return s
	}
	for _, o := range m.olds {
		if strings.Contains(s, o) {
			s = strings.ReplaceAll(s, o, Masked)
		}
	}
	return s
}

// MaskValue returns a copy of a flow value (JSON-like) with every string
// in it, keys included, masked.
func (m *Masker) MaskValue(v any) any {
	if m.Empty() {
		return v
	}
	switch x := v.(type) {
	case string:
		return m.Mask(x)
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[m.Mask(k)] = m.MaskValue(e)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = m.MaskValue(e)
		}
		return out
	}
	return v
}

// MaskError returns a copy of e with its message, data and step masked;
// nil for nil.
func (m *Masker) MaskError(e *Error) *Error {
	if e == nil || m.Empty() {
		return e
	}
	c := *e
	c.Code, c.Message, c.Step = m.Mask(e.Code), m.Mask(e.Message), m.Mask(e.Step)
	c.Data = m.MaskValue(e.Data)
	return &c
}

// Masker masks the values that the flow's secret inputs take in a run
// given these inputs (as WithInputs takes them): the ones given, and the
// defaults of the ones not given.
func (fl *Flow) Masker(inputs map[string]string) *Masker {
	var secrets []string
	for _, in := range fl.Inputs {
		if !in.Secret {
			continue
		}
		if v, ok := inputs[in.Name]; ok {
			secrets = append(secrets, v)
		} else if s, ok := in.Default.(string); ok {
			secrets = append(secrets, s)
		}
	}
	return NewMasker(secrets...)
}

// mask applies m to everything a run reports.
func (res *Result) mask(m *Masker) {
	if m.Empty() {
		return
	}
	res.Err = m.MaskError(res.Err)
	if res.Outputs != nil {
		res.Outputs, _ = m.MaskValue(res.Outputs).(map[string]any)
	}
	for i := range res.Steps {
		res.Steps[i].Err = m.MaskError(res.Steps[i].Err)
	}
}

// ReadInputsFile reads flow inputs from a YAML or JSON file holding one
// mapping of input names to values, as toolwire's --inputs-file takes
// them: a string is given as it is, any other scalar as its text, a list
// or mapping as JSON (what object and array inputs take). Problems are
// *Diagnostic values with their line and column.
func ReadInputsFile(path string) (map[string]string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	cfg := newLoadConfig(nil)
	if len(data) > cfg.maxFileSize {
		return nil, &Diagnostic{File: path, Line: 1, Column: 1, Msg: "file too large"}
	}
	p := &parser{file: path, cfg: cfg}
	tree, err := p.parseYAML(data)
	if err != nil {
		p.SyntaxError(err)
		return nil, p.err()
	}
	out := map[string]string{}
	var body ast.Node
	for _, doc := range tree.Docs {
		if doc == nil || doc.Body == nil {
			continue
		}
		if _, ok := doc.Body.(*ast.CommentGroupNode); ok {
			continue
		}
		if body != nil {
			p.Errorf(doc.Body, "an inputs file holds one mapping, not several documents")
			break
		}
		body = doc.Body
	}
	if body == nil {
		return out, p.err()
	}
	if _, ok := body.(*ast.MappingNode); !ok {
		p.Errorf(body, "an inputs file holds a mapping of input names to values, not a %s", yamlsrc.Kind(body))
		return nil, p.err()
	}
	entries, _ := p.mapping(body, "inputs file")
	for _, e := range entries {
		if _, dup := out[e.key]; dup {
			p.Errorf(e.k, "input %q is given twice", e.key)
			continue
		}
		v := p.value(e.v, 1)
		if v.dynamic() {
			p.Errorf(e.v, "input %s: an inputs file holds values, not ${{ }} expressions", e.key)
			continue
		}
		out[e.key] = formatValue(v.lit)
	}
	if err := p.err(); err != nil {
		return nil, err
	}
	return out, nil
}
