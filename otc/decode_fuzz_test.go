package otc

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/toolwire/toolwire/internal/jsontest"
)

// The POST /tools/call body decoder (parseCall) against a strict reference
// written here with encoding/json alone: the same bodies are accepted, with
// the same request and dialect, and an accepted request re-encoded (wrapped
// and bare) decodes to the same value again.

// The members of each object the decoder reads into a struct, by exact name.
var (
	envelopeMembers = []string{"$schema", "request", "tool_id"}
	requestMembers  = []string{"tool_id", "call_id", "trace_id", "input", "context"}
	contextMembers  = []string{"authorization", "secrets", "user_id"}
	authMembers     = []string{"id", "token"}
	secretMembers   = []string{"id", "value"}
)

// errRefused is the reference's refusal; the reason is in the message.
var errRefused = errors.New("refused")

func refuse(format string, args ...any) error {
	return fmt.Errorf("%w: %s", errRefused, fmt.Sprintf(format, args...))
}

// refParse is the strict reference: body is accepted when it is valid JSON
// (encoding/json's grammar) in valid UTF-8, no string escapes half a
// surrogate pair, no object at any depth has a member name twice (compared
// unescaped), the top level is an object, and:
//   - "$schema", when present and not null, is a string naming OTC or OXP
//     1.x (otc://1[.x], urn:oxp:1[.x]), any other URI (a ':'), or "";
//   - "request", when present and not null, is an object: the request;
//     then a top-level "tool_id" (not null) makes the body ambiguous;
//   - otherwise the top level is the request, and must have "tool_id";
//   - every object read into a struct (the top level, the request, its
//     context, the authorization and secret entries) has no member that
//     differs from one of the struct's only by case (strings.EqualFold);
//   - tool_id, call_id, trace_id, user_id and the entries' members are
//     strings or null; context an object or null; authorization and
//     secrets arrays or null, of objects or nulls; input anything, but
//     when not null an object;
//   - tool_id is not empty.
//
// It returns the request (input absent or null read as {}) and the
// dialect "$schema" asked for (nil when absent or null).
func refParse(body []byte) (*CallToolRequest, *Dialect, error) {
	if !utf8.Valid(body) || !json.Valid(body) {
		return nil, nil, refuse("not JSON in UTF-8")
	}
	if err := refSurrogates(body); err != nil {
		return nil, nil, err
	}
	if err := refNoDuplicates(body); err != nil {
		return nil, nil, err
	}
	top, err := refObject(body, "the body")
	if err != nil || top == nil {
		return nil, nil, refuse("the body is not an object")
	}
	if err := refCase(top, envelopeMembers); err != nil {
		return nil, nil, err
	}
	var asked *Dialect
	if raw, ok := refPresent(top, "$schema"); ok {
		s, err := refString(raw, "$schema")
		if err != nil {
			return nil, nil, err
		}
		d, ok := refSchema(s)
		if !ok {
			return nil, nil, refuse("$schema %q", s)
		}
		asked = &d
	}
	if raw, ok := refPresent(top, "tool_id"); ok {
		if _, err := refString(raw, "tool_id"); err != nil {
			return nil, asked, err
		}
	}
	reqObj := top
	if raw, ok := refPresent(top, "request"); ok {
		if reqObj, err = refObject(raw, "request"); err != nil {
			return nil, asked, err
		}
		if _, both := refPresent(top, "tool_id"); both {
			return nil, asked, refuse(`both "request" and a top-level "tool_id"`)
		}
	} else if _, ok := refPresent(top, "tool_id"); !ok {
		return nil, asked, refuse("no request")
	}
	req, err := refRequest(reqObj)
	if err != nil {
		return nil, asked, err
	}
	return req, asked, nil
}

// refRequest reads a CallToolRequest object.
func refRequest(obj map[string]json.RawMessage) (*CallToolRequest, error) {
	if err := refCase(obj, requestMembers); err != nil {
		return nil, err
	}
	req := &CallToolRequest{}
	for name, dst := range map[string]*string{"tool_id": &req.ToolID, "call_id": &req.CallID, "trace_id": &req.TraceID} {
		if raw, ok := refPresent(obj, name); ok {
			s, err := refString(raw, name)
			if err != nil {
				return nil, err
			}
			*dst = s
		}
	}
	if req.ToolID == "" {
		return nil, refuse("no tool_id")
	}
	req.Input = json.RawMessage("{}")
	if raw, ok := refPresent(obj, "input"); ok {
		if raw[0] != '{' {
			return nil, refuse("input is not an object")
		}
		req.Input = raw
	}
	if raw, ok := refPresent(obj, "context"); ok {
		ctx, err := refContext(raw)
		if err != nil {
			return nil, err
		}
		req.Context = ctx
	}
	return req, nil
}

// refContext reads a CallContext object.
func refContext(raw json.RawMessage) (*CallContext, error) {
	obj, err := refObject(raw, "context")
	if err != nil {
		return nil, err
	}
	if err := refCase(obj, contextMembers); err != nil {
		return nil, err
	}
	c := &CallContext{}
	if raw, ok := refPresent(obj, "user_id"); ok {
		if c.UserID, err = refString(raw, "user_id"); err != nil {
			return nil, err
		}
	}
	entries := func(name string, members []string, add func(a, b string)) error {
		raw, ok := refPresent(obj, name)
		if !ok {
			return nil
		}
		var items []json.RawMessage
		if raw[0] != '[' || json.Unmarshal(raw, &items) != nil {
			return refuse("%s is not an array", name)
		}
		for _, item := range items {
			item = bytes.TrimSpace(item)
			var vals [2]string
			if string(item) != "null" {
				e, err := refObject(item, name+" entry")
				if err != nil {
					return err
				}
				if err := refCase(e, members); err != nil {
					return err
				}
				for i, m := range members {
					if raw, ok := refPresent(e, m); ok {
						if vals[i], err = refString(raw, m); err != nil {
							return err
						}
					}
				}
			}
			add(vals[0], vals[1])
		}
		return nil
	}
	if err := entries("authorization", authMembers, func(id, tok string) {
		c.Authorization = append(c.Authorization, struct {
			ID    string `json:"id"`
			Token string `json:"token"`
		}{id, tok})
	}); err != nil {
		return nil, err
	}
	if err := entries("secrets", secretMembers, func(id, val string) {
		c.Secrets = append(c.Secrets, struct {
			ID    string `json:"id"`
			Value string `json:"value"`
		}{id, val})
	}); err != nil {
		return nil, err
	}
	return c, nil
}

// refPresent returns a member that is present and not null.
func refPresent(obj map[string]json.RawMessage, name string) (json.RawMessage, bool) {
	raw, ok := obj[name]
	if !ok || string(raw) == "null" {
		return nil, false
	}
	return raw, true
}

// refObject reads an object's members (raw, without surrounding space);
// nil for null.
func refObject(raw []byte, what string) (map[string]json.RawMessage, error) {
	raw = bytes.TrimSpace(raw)
	if string(raw) == "null" {
		return nil, nil
	}
	var obj map[string]json.RawMessage
	if len(raw) == 0 || raw[0] != '{' || json.Unmarshal(raw, &obj) != nil {
		return nil, refuse("%s is not an object", what)
	}
	for k, v := range obj {
		obj[k] = bytes.TrimSpace(v)
	}
	return obj, nil
}

func refString(raw json.RawMessage, what string) (string, error) {
	var s string
	if raw[0] != '"' || json.Unmarshal(raw, &s) != nil {
		return "", refuse("%s is not a string", what)
	}
	return s, nil
}

// refCase refuses a member that is not one of names but differs from one
// only by case.
func refCase(obj map[string]json.RawMessage, names []string) error {
	for k := range obj {
		for _, n := range names {
			if k != n && strings.EqualFold(k, n) {
				return refuse("%q is a case variant of %q", k, n)
			}
		}
	}
	return nil
}

// refSchema reads a "$schema" value.
func refSchema(s string) (Dialect, bool) {
	major := func(v string) bool { return v == "1" || strings.HasPrefix(v, "1.") }
	switch {
	case s == "":
		return OTC, true
	case strings.HasPrefix(s, "otc://"):
		return OTC, major(s[len("otc://"):])
	case strings.HasPrefix(s, "urn:oxp:"):
		return OXP, major(s[len("urn:oxp:"):])
	}
	return OTC, strings.Contains(s, ":")
}

// refSurrogates refuses a \u escape of half a surrogate pair not followed
// (high) or preceded (low) by its other half.
func refSurrogates(body []byte) error {
	in := false
	for i := 0; i < len(body); i++ {
		switch c := body[i]; {
		case !in:
			in = c == '"'
		case c == '"':
			in = false
		case c == '\\':
			if body[i+1] != 'u' {
				i++
				continue
			}
			r, _ := strconv.ParseUint(string(body[i+2:i+6]), 16, 16)
			i += 5
			switch {
			case r >= 0xDC00 && r <= 0xDFFF:
				return refuse("lone low surrogate")
			case r >= 0xD800 && r <= 0xDBFF:
				if i+6 >= len(body) || body[i+1] != '\\' || body[i+2] != 'u' {
					return refuse("lone high surrogate")
				}
				lo, _ := strconv.ParseUint(string(body[i+3:i+7]), 16, 16)
				if lo < 0xDC00 || lo > 0xDFFF {
					return refuse("high surrogate without its low half")
				}
				i += 6
			}
		}
	}
	return nil
}

// refNoDuplicates refuses an object with a member name twice, at any depth.
func refNoDuplicates(body []byte) error {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var value func() error
	value = func() error {
		tok, err := dec.Token()
		if err != nil {
			return refuse("tokens: %v", err)
		}
		switch tok {
		case json.Delim('{'):
			seen := map[string]bool{}
			for dec.More() {
				k, err := dec.Token()
				if err != nil {
					return refuse("tokens: %v", err)
				}
				name := k.(string)
				if seen[name] {
					return refuse("duplicate member %q", name)
				}
				seen[name] = true
				if err := value(); err != nil {
					return err
				}
			}
		case json.Delim('['):
			for dec.More() {
				if err := value(); err != nil {
					return err
				}
			}
		default:
			return nil
		}
		_, err = dec.Token() // the closing delimiter
		return err
	}
	return value()
}

// maxJSONDepth is how deep objects and arrays may nest, for encoding/json
// and for the decoder alike.
const maxJSONDepth = 10000

// canonJSON is JSON text in one spelling (encoding/json's, numbers as
// written), so that two texts of one value compare equal.
func canonJSON(raw json.RawMessage) string {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return "unreadable: " + string(raw)
	}
	out, err := json.Marshal(v)
	if err != nil {
		return "unencodable: " + string(raw)
	}
	return string(out)
}

// sameRequest compares requests: input by value, a nil list as an empty one.
var sameRequest = cmp.Options{
	cmp.Transformer("canonJSON", func(r json.RawMessage) string { return canonJSON(r) }),
	cmpopts.EquateEmpty(),
}

// FuzzParseCall checks parseCall, the POST /tools/call body decoder: no
// panic; it accepts exactly what refParse accepts, with the same request
// and dialect (and, refusing, the dialect asked for when $schema was
// read); and an accepted request, re-encoded wrapped ({"$schema",
// "request"}) and bare, decodes to the same request and dialect again.
//
// The seed corpus, testdata/fuzz/FuzzParseCall, holds the seed's OTC
// examples as requests (wrapped, bare, OXP, with context) and malformed
// bodies: duplicate members (also spelled with escapes, and deep in input),
// case variants at every level, wrong types, ambiguous and unsupported
// forms, invalid UTF-8, lone surrogate escapes, nesting at and past the
// decoders' depth limit of 10,000, huge numbers and trailing data.
func FuzzParseCall(f *testing.F) {
	f.Fuzz(func(t *testing.T, body []byte) {
		got, gotD, err := parseCall(body)
		want, wantD, rerr := refParse(body)
		if (err == nil) != (rerr == nil) {
			t.Fatalf("%q: parseCall error %v, reference error %v", body, err, rerr)
		}
		if err != nil {
			return
		}
		if diff := cmp.Diff(want, got, sameRequest); diff != "" {
			t.Fatalf("%q: request differs from the reference's (-want +got):\n%s", body, diff)
		}
		if !cmp.Equal(wantD, gotD) {
			t.Fatalf("%q: dialect %v, the reference's %v", body, gotD, wantD)
		}
		bare, err := json.Marshal(got)
		if err != nil {
			t.Fatalf("%q: re-encoding: %v", body, err)
		}
		wrapped := map[string]any{"request": got}
		if gotD != nil { // both forms name the dialect asked for
			wrapped["$schema"] = gotD.SchemaURI()
			bare = append([]byte(`{"$schema":"`+gotD.SchemaURI()+`",`), bare[1:]...)
		}
		wrappedJSON, err := json.Marshal(wrapped)
		if err != nil {
			t.Fatalf("%q: re-encoding: %v", body, err)
		}
		forms := [][]byte{bare}
		if jsontest.Depth(bare) < maxJSONDepth { // wrapping nests the request one level deeper
			forms = append(forms, wrappedJSON)
		}
		for _, again := range forms {
			req, d, err := parseCall(again)
			if err != nil {
				t.Fatalf("%q: re-encoded as %s, refused: %v", body, again, err)
			}
			if diff := cmp.Diff(got, req, sameRequest); diff != "" {
				t.Fatalf("%q: re-encoded as %s, decodes to another request (-first +again):\n%s", body, again, diff)
			}
			if !cmp.Equal(gotD, d) {
				t.Fatalf("%q: re-encoded as %s, dialect %v, first %v", body, again, d, gotD)
			}
		}
	})
}
