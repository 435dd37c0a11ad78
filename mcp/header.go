package mcp

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"github.com/toolwire/toolwire/internal/wirejson"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Streamable HTTP header names. 2026-07-28 mirrors the method, the name a
// request is about, and annotated tool arguments into headers, so that
// proxies can route without reading bodies.
const (
	HeaderProtocolVersion = "Mcp-Protocol-Version"
	HeaderSessionID       = "Mcp-Session-Id"
	HeaderMethod          = "Mcp-Method"
	HeaderName            = "Mcp-Name"
	HeaderParamPrefix     = "Mcp-Param-"
	HeaderLastEventID     = "Last-Event-Id"
)

const (
	sentinelPrefix = "=?base64?"
	sentinelSuffix = "?="
)

// EncodeHeaderValue returns v as a header value: unchanged when it is plain
// visible ASCII without surrounding space, otherwise (or when it would be
// mistaken for the sentinel) as "=?base64?<base64 of its UTF-8>?=".
func EncodeHeaderValue(v string) string {
	safe := v == strings.TrimSpace(v)
	if safe {
		for i := 0; i < len(v); i++ {
			if c := v[i]; c != ' ' && (c < 0x21 || c > 0x7e) {
				safe = false
				break
			}
		}
	}
	if safe && strings.HasPrefix(v, sentinelPrefix) && strings.HasSuffix(v, sentinelSuffix) {
		safe = false
	}
	if safe {
		return v
	}
	return sentinelPrefix + base64.StdEncoding.EncodeToString([]byte(v)) + sentinelSuffix
}

// DecodeHeaderValue returns the value a header carries: the decoded bytes of
// the sentinel form, or the plain value, which must be visible ASCII, space
// or tab.
func DecodeHeaderValue(v string) (string, error) {
	v = strings.TrimSpace(v)
	if len(v) >= len(sentinelPrefix)+len(sentinelSuffix) && strings.HasPrefix(v, sentinelPrefix) && strings.HasSuffix(v, sentinelSuffix) {
		b, err := base64.StdEncoding.Strict().DecodeString(v[len(sentinelPrefix) : len(v)-len(sentinelSuffix)])
		if err != nil {
			return "", fmt.Errorf("invalid base64 in %q: %v", v, err)
		}
		if !utf8.Valid(b) {
			return "", fmt.Errorf("base64 value %q is not UTF-8", v)
		}
		return string(b), nil
	}
	for i := 0; i < len(v); i++ {
		if c := v[i]; (c < 0x20 && c != '\t') || c >= 0x7f {
			return "", fmt.Errorf("header value has a byte 0x%02x that needs the =?base64?...?= form", c)
		}
	}
	return v, nil
}

// ParamHeader is one x-mcp-header annotation of a tool's inputSchema: the
// {Name} of the Mcp-Param-{Name} header and the property path whose argument
// it mirrors.
type ParamHeader struct {
	Name string
	Path []string
}

// ParamHeaders reads the x-mcp-header annotations of an inputSchema,
// following "properties" from the root. It returns an error naming the
// first annotation that breaks the rules: a non-empty RFC 9110 token,
// unique regardless of case, only on string, integer or boolean properties.
func ParamHeaders(inputSchema json.RawMessage) ([]ParamHeader, error) {
	if len(inputSchema) == 0 || !bytes.Contains(inputSchema, []byte("x-mcp-header")) {
		return nil, nil
	}
	var root map[string]json.RawMessage
	if err := wirejson.Unmarshal(inputSchema, &root); err != nil {
		return nil, nil // not an object schema: nothing is annotated
	}
	var out []ParamHeader
	seen := map[string]bool{}
	var walk func(node map[string]json.RawMessage, path []string, depth int) error
	walk = func(node map[string]json.RawMessage, path []string, depth int) error {
		if depth > 32 {
			return nil
		}
		var props map[string]json.RawMessage
		if raw, ok := node["properties"]; ok && wirejson.Unmarshal(raw, &props) != nil {
			return nil
		}
		for name, raw := range props {
			var prop map[string]json.RawMessage
			if wirejson.Unmarshal(raw, &prop) != nil {
				continue
			}
			p := append(append([]string(nil), path...), name)
			if hraw, ok := prop["x-mcp-header"]; ok {
				where := strings.Join(p, ".")
				var h string
				if err := wirejson.Unmarshal(hraw, &h); err != nil {
					return fmt.Errorf("property %q: x-mcp-header must be a string", where)
				}
				if err := checkToken(h); err != nil {
					return fmt.Errorf("property %q: x-mcp-header %q: %v", where, h, err)
				}
				var typ string
				_ = wirejson.Unmarshal(prop["type"], &typ)
				if typ != "string" && typ != "integer" && typ != "boolean" {
					return fmt.Errorf("property %q: x-mcp-header is only allowed on string, integer or boolean properties, not %q", where, typ)
				}
				key := strings.ToLower(h)
				if seen[key] {
					return fmt.Errorf("property %q: x-mcp-header %q is used twice (header names are case-insensitive)", where, h)
				}
				seen[key] = true
				out = append(out, ParamHeader{Name: h, Path: p})
			}
			if err := walk(prop, p, depth+1); err != nil {
				return err
			}
		}
		return nil
	}
	if err := walk(root, nil, 0); err != nil {
		return nil, err
	}
	return out, nil
}

// checkToken accepts an RFC 9110 token (1*tchar).
func checkToken(h string) error {
	if h == "" {
		return fmt.Errorf("must not be empty")
	}
	for i := 0; i < len(h); i++ {
		c := h[i]
		ok := c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' ||
			strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0
		if !ok {
			return fmt.Errorf("character %q is not allowed in a header name", c)
		}
	}
	return nil
}

// HeaderValueOf renders an argument value as a header carries it: strings
// as they are, numbers as written, booleans as true/false. Objects, arrays
// and null travel in no header (ok false).
func HeaderValueOf(v any) (string, bool) {
	switch x := v.(type) {
	case string:
		return x, true
	case json.Number:
		return x.String(), true
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64), true
	case bool:
		return strconv.FormatBool(x), true
	}
	return "", false
}

// HeaderMatches compares a decoded header value with an argument value:
// strings exactly, numbers numerically (42.0 equals 42), booleans as
// true/false.
func HeaderMatches(header string, value any) bool {
	switch b := value.(type) {
	case string:
		return header == b
	case bool:
		return header == strconv.FormatBool(b)
	case json.Number, float64:
		if !isDecimal(header) {
			return false
		}
		hf, err := strconv.ParseFloat(header, 64)
		if err != nil {
			return false
		}
		var bf float64
		if n, ok := b.(json.Number); ok {
			if bf, err = strconv.ParseFloat(n.String(), 64); err != nil {
				return false
			}
		} else {
			bf = b.(float64)
		}
		return hf == bf
	}
	return true // objects and arrays cannot be annotated: nothing to compare
}

// isDecimal accepts an optional minus sign, digits and an optional
// fraction: the forms a client writes a number in.
func isDecimal(s string) bool {
	s = strings.TrimPrefix(s, "-")
	intPart, frac, hasFrac := strings.Cut(s, ".")
	digits := func(d string) bool {
		for i := 0; i < len(d); i++ {
			if d[i] < '0' || d[i] > '9' {
				return false
			}
		}
		return d != ""
	}
	return digits(intPart) && (!hasFrac || digits(frac))
}
