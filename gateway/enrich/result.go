package enrich

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"slices"
	"strings"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/toolwire/toolwire/internal/jsonscan"
	"github.com/toolwire/toolwire/internal/wirejson"
)

// MaxResult is the largest result Apply reads, in bytes: 16 MiB, the
// gateway's default bound on one upstream message. A larger result is
// returned as it is, with an error.
const MaxResult = 16 << 20

// Errors Apply and the Result methods report.
var (
	// ErrUnusable marks (errors.Is) the error Apply reports when the
	// result is not one it can read: not a single JSON object with a
	// content array of blocks, invalid or ambiguous JSON (duplicate or
	// case-variant member names), or over MaxResult. Apply then returns
	// the result unchanged.
	ErrUnusable = errors.New("enrich: result left as is")
	// ErrTooLarge: an addition would take a rule or hook over its
	// Limits.MaxOutputBytes budget.
	ErrTooLarge = errors.New("enrich: additions over the limit")
	// ErrNotObject: structuredContent is absent or not an object, so no
	// key can be merged into it.
	ErrNotObject = errors.New("enrich: structuredContent is not an object")
	// ErrKeyExists: structuredContent already has the key (from the
	// upstream, an earlier rule or hook, or this one) and overwrite is
	// false.
	ErrKeyExists = errors.New("enrich: structuredContent key exists")
)

func unusable(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrUnusable, fmt.Sprintf(format, args...))
}

type span struct{ start, end int }

// parsed is what Apply knows of a result: where its parts are in the
// input, and its text. Nothing of the input is copied or re-encoded.
type parsed struct {
	data       []byte
	skip       bool     // isError true, or a resultType other than "complete"
	content    span     // the content array
	blocks     [][]byte // its elements
	text       string   // its text blocks' text, joined by "\n"
	structured []byte   // structuredContent, nil when absent
	scSpan     span
	scObject   bool
	scMembers  map[string]span // structuredContent's member values, read when first needed
}

// topNames are the members parseResult reads; a member differing from
// one of them only by case makes a result ambiguous.
var topNames = []string{"content", "structuredContent", "isError", "resultType"}

// parseResult reads a tools/call result strictly: one JSON object, valid
// UTF-8, no member name twice at any depth (jsontext's defaults).
func parseResult(data []byte) (*parsed, error) {
	if len(data) > MaxResult {
		return nil, unusable("result is %d bytes, over the %d bytes enrichment reads", len(data), MaxResult)
	}
	dec := jsontext.NewDecoder(bytes.NewReader(data))
	if tok, err := dec.ReadToken(); err != nil {
		return nil, unusable("%v", err)
	} else if tok.Kind() != '{' {
		return nil, unusable("not a JSON object")
	}
	p := &parsed{data: data, content: span{-1, -1}}
	for dec.PeekKind() != '}' {
		tok, err := dec.ReadToken()
		if err != nil {
			return nil, unusable("%v", err)
		}
		name := tok.String()
		val, err := dec.ReadValue()
		if err != nil {
			return nil, unusable("%v", err)
		}
		end := int(dec.InputOffset())
		sp := span{end - len(val), end}
		switch name {
		case "content":
			if val.Kind() != '[' {
				return nil, unusable("content is not an array")
			}
			p.content = sp
		case "structuredContent":
			p.structured, p.scSpan, p.scObject = data[sp.start:sp.end:sp.end], sp, val.Kind() == '{'
		case "isError":
			switch val.Kind() {
			case 't':
				p.skip = true
			case 'f':
			default:
				return nil, unusable("isError is not a boolean")
			}
		case "resultType":
			var rt string
			if err := wirejson.Unmarshal(val, &rt); err != nil {
				return nil, unusable("resultType is not a string")
			}
			if rt != "complete" {
				p.skip = true
			}
		default:
			for _, k := range topNames {
				if strings.EqualFold(name, k) {
					return nil, unusable("member %q differs from %q only by case", name, k)
				}
			}
		}
	}
	if _, err := dec.ReadToken(); err != nil {
		return nil, unusable("%v", err)
	}
	if _, err := dec.ReadToken(); err != io.EOF {
		return nil, unusable("data after the result object")
	}
	if p.skip {
		return p, nil
	}
	if p.content.start < 0 {
		return nil, unusable("no content array")
	}
	if err := p.readContent(); err != nil {
		return nil, err
	}
	return p, nil
}

// readContent reads the content array's elements and their text.
func (p *parsed) readContent() error {
	raw := p.data[p.content.start:p.content.end]
	dec := jsontext.NewDecoder(bytes.NewReader(raw))
	if _, err := dec.ReadToken(); err != nil {
		return unusable("content: %v", err)
	}
	var text strings.Builder
	nText := 0
	for i := 0; dec.PeekKind() != ']'; i++ {
		val, err := dec.ReadValue()
		if err != nil {
			return unusable("content: %v", err)
		}
		end := int(dec.InputOffset())
		block := raw[end-len(val) : end : end]
		typ, t, err := readBlock(block)
		if err != nil {
			return unusable("content[%d]: %v", i, err)
		}
		p.blocks = append(p.blocks, block)
		if typ == "text" {
			if nText > 0 {
				text.WriteByte('\n')
			}
			text.WriteString(t)
			nText++
		}
	}
	p.text = text.String()
	return nil
}

// blockHead is what enrichment reads of a content block.
type blockHead struct {
	Type *string `json:"type"`
	Text *string `json:"text"`
}

// readBlock returns a block's type and, for a text block, its text. A
// block must be an object with a string "type"; a text block needs a
// string "text".
func readBlock(block []byte) (typ, text string, err error) {
	var typV, textV []byte
	fast := jsonscan.Members(block, []string{"type", "text"}, func(name, value []byte) bool {
		if string(name) == "type" {
			typV = value
		} else {
			textV = value
		}
		return true
	})
	if fast && typV != nil {
		if t, ok := jsonscan.PlainString(typV); ok {
			if string(t) != "text" {
				return string(t), "", nil
			}
			if textV != nil {
				if s, ok := jsonscan.PlainString(textV); ok {
					return "text", string(s), nil
				}
			}
		}
	}
	var h blockHead
	if err := wirejson.Unmarshal(block, &h); err != nil {
		return "", "", err
	}
	if h.Type == nil {
		return "", "", errors.New(`no "type"`)
	}
	if *h.Type == "text" && h.Text == nil {
		return "", "", errors.New(`text block without "text"`)
	}
	if *h.Type == "text" {
		return "text", *h.Text, nil
	}
	return *h.Type, "", nil
}

// members returns where the values of structuredContent's members are,
// by (unescaped) name; nil unless it is an object.
func (p *parsed) members() map[string]span {
	if !p.scObject || p.scMembers != nil {
		return p.scMembers
	}
	p.scMembers = map[string]span{}
	dec := jsontext.NewDecoder(bytes.NewReader(p.structured))
	if _, err := dec.ReadToken(); err != nil {
		return p.scMembers // not reached: parseResult read it whole
	}
	for dec.PeekKind() == '"' {
		tok, err := dec.ReadToken()
		if err != nil {
			break
		}
		name := tok.String() // before ReadValue, which invalidates tok
		val, err := dec.ReadValue()
		if err != nil {
			break
		}
		end := p.scSpan.start + int(dec.InputOffset())
		p.scMembers[name] = span{end - len(val), end}
	}
	return p.scMembers
}

// pending is what the rules and hooks applied so far add.
type pending struct {
	blocks  [][]byte
	newKeys []string          // keys structuredContent did not have, in order
	values  map[string][]byte // new and replaced keys' values
}

// Result is a hook's view of the result being enriched: read access to
// what the upstream returned, and methods that add to it. Additions are
// kept only if the hook returns nil; each is bounded (ErrTooLarge) by
// Limits.MaxOutputBytes, like a rule's.
type Result struct {
	p     *parsed
	pend  *pending
	limit int
	used  int

	blocks [][]byte
	keys   []string          // merged keys, in order
	values map[string][]byte // and their values
}

func newResult(p *parsed, pend *pending, limit int) *Result {
	return &Result{p: p, pend: pend, limit: limit}
}

// StructuredContent returns the upstream's structuredContent, raw (nil
// when absent). The bytes are the result's own: do not modify them.
func (r *Result) StructuredContent() json.RawMessage { return r.p.structured }

// Text returns the upstream's text blocks' text, joined by "\n".
func (r *Result) Text() string { return r.p.text }

// Content returns the upstream's content blocks, raw. The bytes are the
// result's own: do not modify them.
func (r *Result) Content() []json.RawMessage {
	out := make([]json.RawMessage, len(r.p.blocks))
	for i, b := range r.p.blocks {
		out[i] = b
	}
	return out
}

func (r *Result) spend(n int) error {
	if r.used+n > r.limit {
		return fmt.Errorf("%w: %d bytes more would pass the %d bytes allowed", ErrTooLarge, n, r.limit)
	}
	r.used += n
	return nil
}

func (r *Result) remaining() int { return r.limit - r.used }

// AppendText appends a text block. Invalid UTF-8 is replaced by U+FFFD.
func (r *Result) AppendText(text string) error {
	b := append([]byte(nil), `{"type":"text","text":`...)
	b = appendString(b, text)
	return r.appendBlock(append(b, '}'))
}

// AppendLink appends a resource_link block. URI must be an absolute URI;
// an empty Name is the URI.
func (r *Result) AppendLink(l Link) error {
	b, err := linkBlock(l)
	if err != nil {
		return err
	}
	return r.appendBlock(b)
}

// Append appends a content block given as JSON: an object with a string
// "type", valid and unambiguous as the result's own must be.
func (r *Result) Append(block json.RawMessage) error {
	v := jsontext.Value(bytes.Clone(block))
	if !v.IsValid() || v.Kind() != '{' {
		return errors.New("enrich: a block must be a valid JSON object")
	}
	if _, _, err := readBlock(v); err != nil {
		return fmt.Errorf("enrich: block: %w", err)
	}
	if err := v.Compact(); err != nil {
		return err
	}
	return r.appendBlock(v)
}

func (r *Result) appendBlock(b []byte) error {
	if err := r.spend(len(b) + 1); err != nil {
		return err
	}
	r.blocks = append(r.blocks, b)
	return nil
}

// Merge sets structuredContent[key] to value (JSON), when structuredContent
// is an object (else ErrNotObject) and, unless overwrite, has no such key
// yet (else ErrKeyExists). Invalid UTF-8 in key is replaced by U+FFFD.
func (r *Result) Merge(key string, value json.RawMessage, overwrite bool) error {
	v := jsontext.Value(bytes.Clone(value))
	if !v.IsValid() {
		return errors.New("enrich: merged value is not valid JSON")
	}
	if err := v.Compact(); err != nil {
		return err
	}
	return r.merge(key, v, overwrite)
}

func (r *Result) merge(key string, value []byte, overwrite bool) error {
	// As it will be written, so that no two keys write the same name.
	key = strings.ToValidUTF8(key, "\uFFFD")
	if !r.p.scObject {
		return ErrNotObject
	}
	_, mine := r.values[key]
	if !overwrite {
		_, upstream := r.p.members()[key]
		_, earlier := r.pend.values[key]
		if mine || upstream || earlier {
			return fmt.Errorf("%w: %q", ErrKeyExists, key)
		}
	}
	name := appendString(nil, key)
	if err := r.spend(len(name) + len(value) + 2); err != nil {
		return err
	}
	if r.values == nil {
		r.values = map[string][]byte{}
	}
	if !mine {
		r.keys = append(r.keys, key)
	}
	r.values[key] = value
	return nil
}

// commit adds r's additions to what is pending.
func (r *Result) commit() {
	r.pend.blocks = append(r.pend.blocks, r.blocks...)
	for _, k := range r.keys {
		if r.pend.values == nil {
			r.pend.values = map[string][]byte{}
		}
		_, earlier := r.pend.values[k]
		_, upstream := r.p.members()[k]
		if !earlier && !upstream {
			r.pend.newKeys = append(r.pend.newKeys, k)
		}
		r.pend.values[k] = r.values[k]
	}
}

func (r *Result) empty() bool { return len(r.blocks) == 0 && len(r.keys) == 0 }

// appendString appends s as a JSON string, invalid UTF-8 replaced.
func appendString(b []byte, s string) []byte {
	b, err := jsontext.AppendQuote(b, strings.ToValidUTF8(s, "\uFFFD"))
	if err != nil {
		panic(err) // not reached: the text is valid UTF-8
	}
	return b
}

// linkBlock encodes a resource_link block.
func linkBlock(l Link) ([]byte, error) {
	if l.URI == "" {
		return nil, errors.New("enrich: link without a URI")
	}
	if u, err := url.Parse(l.URI); err != nil {
		return nil, fmt.Errorf("enrich: link URI: %w", err)
	} else if u.Scheme == "" {
		return nil, fmt.Errorf("enrich: link URI %q is not absolute", l.URI)
	}
	if l.Name == "" {
		l.Name = l.URI
	}
	b := append([]byte(nil), `{"type":"resource_link","uri":`...)
	b = appendString(b, l.URI)
	b = append(b, `,"name":`...)
	b = appendString(b, l.Name)
	for _, f := range []struct{ k, v string }{{"title", l.Title}, {"description", l.Description}, {"mimeType", l.MimeType}} {
		if f.v != "" {
			b = append(b, `,"`+f.k+`":`...)
			b = appendString(b, f.v)
		}
	}
	return append(b, '}'), nil
}

// splice writes the result with the pending additions: blocks appended
// to the content array, keys added to (or replaced in) structuredContent.
// Every other byte of the input stays as it was.
func splice(p *parsed, pend *pending) []byte {
	type edit struct {
		at, end int // replace data[at:end]
		with    []byte
	}
	var edits []edit
	if len(pend.blocks) > 0 {
		var b []byte
		for i, blk := range pend.blocks {
			if i > 0 || len(p.blocks) > 0 {
				b = append(b, ',')
			}
			b = append(b, blk...)
		}
		at := p.content.end - 1 // the ']'
		edits = append(edits, edit{at, at, b})
	}
	if len(pend.values) > 0 {
		members := p.members()
		for k, v := range pend.values {
			if sp, ok := members[k]; ok {
				edits = append(edits, edit{sp.start, sp.end, v})
			}
		}
		var b []byte
		for i, k := range pend.newKeys {
			if i > 0 || len(members) > 0 {
				b = append(b, ',')
			}
			b = appendString(b, k)
			b = append(b, ':')
			b = append(b, pend.values[k]...)
		}
		if len(b) > 0 {
			at := p.scSpan.end - 1 // the '}'
			edits = append(edits, edit{at, at, b})
		}
	}
	slices.SortFunc(edits, func(a, b edit) int { return a.at - b.at })
	size := len(p.data)
	for _, e := range edits {
		size += len(e.with) - (e.end - e.at)
	}
	out := make([]byte, 0, size)
	last := 0
	for _, e := range edits {
		out = append(out, p.data[last:e.at]...)
		out = append(out, e.with...)
		last = e.end
	}
	return append(out, p.data[last:]...)
}

// jsontextValue returns s compacted when it is one valid JSON value
// (RFC 7493: no duplicate names, valid UTF-8), else nil.
func jsontextValue(s string) []byte {
	v := jsontext.Value(s)
	if !v.IsValid() || v.Compact() != nil {
		return nil
	}
	return v
}
