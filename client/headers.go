package client

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"
)

// HTTP header names of Streamable HTTP (2026-07-28 adds the Mcp-* trio).
const (
	headerProtocolVersion = "MCP-Protocol-Version"
	headerSessionID       = "Mcp-Session-Id"
	headerMethod          = "Mcp-Method"
	headerName            = "Mcp-Name"
	headerParamPrefix     = "Mcp-Param-"
	headerLastEventID     = "Last-Event-ID"
)

// encodeHeaderValue returns v as an HTTP header value: as is when it is
// plain header-safe ASCII, else (or when it already looks like the sentinel)
// as "=?base64?<base64 of the UTF-8 bytes>?=".
func encodeHeaderValue(v string) string {
	safe := v == strings.TrimSpace(v) || v == ""
	if safe {
		for i := 0; i < len(v); i++ {
			c := v[i]
			if c != ' ' && (c < 0x21 || c > 0x7e) {
				safe = false
				break
			}
		}
	}
	if safe && strings.HasPrefix(v, "=?base64?") && strings.HasSuffix(v, "?=") {
		safe = false
	}
	if safe {
		return v
	}
	return "=?base64?" + base64.StdEncoding.EncodeToString([]byte(v)) + "?="
}

// paramHeader is one x-mcp-header annotation: the header's {Name} and the
// property path whose argument value it carries.
type paramHeader struct {
	Name string
	Path []string
}

// toolHeaders reads the x-mcp-header annotations of an inputSchema. It
// returns an error naming the first annotation that breaks the rules
// (2026-07-28): a non-empty RFC 9110 token, case-insensitively unique, only
// on string, integer or boolean properties reached through "properties".
func toolHeaders(inputSchema json.RawMessage) ([]paramHeader, error) {
	if len(inputSchema) == 0 {
		return nil, nil
	}
	var root map[string]json.RawMessage
	if err := json.Unmarshal(inputSchema, &root); err != nil {
		return nil, nil // not an object schema: nothing to annotate
	}
	var out []paramHeader
	seen := map[string]bool{}
	var walk func(node map[string]json.RawMessage, path []string) error
	walk = func(node map[string]json.RawMessage, path []string) error {
		var props map[string]json.RawMessage
		if raw, ok := node["properties"]; ok {
			if err := json.Unmarshal(raw, &props); err != nil {
				return nil
			}
		}
		for name, raw := range props {
			var prop map[string]json.RawMessage
			if json.Unmarshal(raw, &prop) != nil {
				continue
			}
			p := append(append([]string(nil), path...), name)
			if hraw, ok := prop["x-mcp-header"]; ok {
				where := strings.Join(p, ".")
				var h string
				if err := json.Unmarshal(hraw, &h); err != nil {
					return fmt.Errorf("property %q: x-mcp-header must be a string", where)
				}
				if err := checkHeaderName(h); err != nil {
					return fmt.Errorf("property %q: x-mcp-header %q: %v", where, h, err)
				}
				var typ string
				_ = json.Unmarshal(prop["type"], &typ)
				if typ != "string" && typ != "integer" && typ != "boolean" {
					return fmt.Errorf("property %q: x-mcp-header is only allowed on string, integer or boolean properties, not %q", where, typ)
				}
				key := strings.ToLower(h)
				if seen[key] {
					return fmt.Errorf("property %q: x-mcp-header %q is used twice (names are case-insensitive)", where, h)
				}
				seen[key] = true
				out = append(out, paramHeader{Name: h, Path: p})
			}
			if err := walk(prop, p); err != nil {
				return err
			}
		}
		return nil
	}
	if err := walk(root, nil); err != nil {
		return nil, err
	}
	return out, nil
}

// checkHeaderName accepts an RFC 9110 token (1*tchar).
func checkHeaderName(h string) error {
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

// paramHeaderValues returns the Mcp-Param-* headers for one call's
// arguments: absent and null arguments get no header.
func paramHeaderValues(hs []paramHeader, args json.RawMessage) map[string]string {
	if len(hs) == 0 || len(args) == 0 {
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(args))
	dec.UseNumber()
	var root any
	if dec.Decode(&root) != nil {
		return nil
	}
	out := map[string]string{}
	for _, h := range hs {
		v := root
		for _, k := range h.Path {
			m, ok := v.(map[string]any)
			if !ok {
				v = nil
				break
			}
			v = m[k]
		}
		var s string
		switch x := v.(type) {
		case nil:
			continue
		case string:
			s = x
		case json.Number:
			s = x.String()
		case bool:
			s = fmt.Sprint(x)
		default:
			continue // an object or array cannot travel in a header
		}
		out[headerParamPrefix+h.Name] = encodeHeaderValue(s)
	}
	return out
}
