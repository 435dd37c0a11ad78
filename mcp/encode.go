package mcp

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"github.com/toolwire/toolwire/internal/jsonstr"
)

// Appender is implemented by results that can write their own JSON directly
// onto a buffer. Callers on a hot path use it instead of json.Marshal, which
// re-scans every MarshalJSON output (for a 1 MiB text block, twice).
type Appender interface {
	AppendJSON(b []byte) ([]byte, error)
}

// AppendJSON writes the result as json.Marshal would, but in one pass.
func (r *CallToolResult) AppendJSON(b []byte) ([]byte, error) {
	if b == nil {
		b = make([]byte, 0, r.sizeHint())
	}
	b = append(b, `{"content":[`...)
	for i, c := range r.Content {
		if i > 0 {
			b = append(b, ',')
		}
		var err error
		if b, err = appendContent(b, c); err != nil {
			return nil, err
		}
	}
	b = append(b, ']')
	if len(r.StructuredContent) > 0 {
		if !json.Valid(r.StructuredContent) {
			return nil, errors.New("mcp: structuredContent is not valid JSON")
		}
		b = append(b, `,"structuredContent":`...)
		b = append(b, r.StructuredContent...)
	}
	if r.IsError {
		b = append(b, `,"isError":true`...)
	}
	if r.ResultType != "" {
		b = append(b, `,"resultType":`...)
		b = appendString(b, string(r.ResultType))
	}
	return appendTail(b, r.Meta, nil)
}

// sizeHint guesses the encoded size, so that one buffer usually suffices.
func (r *CallToolResult) sizeHint() int {
	n := 64 + len(r.StructuredContent)
	for _, c := range r.Content {
		switch c := c.(type) {
		case *TextContent:
			n += 40 + len(c.Text) + len(c.Text)/16
		case *ImageContent:
			n += 64 + len(c.Data)*4/3
		case *AudioContent:
			n += 64 + len(c.Data)*4/3
		default:
			n += 128
		}
	}
	if r.Meta != nil {
		n += 128
	}
	return n
}

// appendTail writes annotations and _meta (when present) and closes the object.
func appendTail(b []byte, meta Meta, ann *Annotations) ([]byte, error) {
	var err error
	if ann != nil {
		if b, err = appendMarshal(append(b, `,"annotations":`...), ann); err != nil {
			return nil, err
		}
	}
	if len(meta) > 0 {
		if b, err = appendMarshal(append(b, `,"_meta":`...), meta); err != nil {
			return nil, err
		}
	}
	return append(b, '}'), nil
}

// appendMarshal appends v as json.Marshal writes it: the way an append
// encoder writes a value it has no fast path for.
func appendMarshal(b []byte, v any) ([]byte, error) {
	raw, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return append(b, raw...), nil
}

func appendContent(b []byte, c Content) ([]byte, error) {
	switch c := c.(type) {
	case *TextContent:
		b = append(b, `{"type":"text","text":`...)
		b = appendString(b, c.Text)
		return appendTail(b, c.Meta, c.Annotations)
	case *ImageContent:
		return appendMedia(b, "image", c.Data, c.MIMEType, c.Meta, c.Annotations)
	case *AudioContent:
		return appendMedia(b, "audio", c.Data, c.MIMEType, c.Meta, c.Annotations)
	case nil:
		return nil, errors.New("mcp: nil content block")
	}
	return appendMarshal(b, c)
}

func appendMedia(b []byte, typ string, data []byte, mime string, meta Meta, ann *Annotations) ([]byte, error) {
	b = append(b, `{"type":"`...)
	b = append(b, typ...)
	b = append(b, `","data":"`...)
	b = base64.StdEncoding.AppendEncode(b, data)
	b = append(b, `","mimeType":`...)
	b = appendString(b, mime)
	return appendTail(b, meta, ann)
}

// appendString writes s as a JSON string, as encoding/json does without
// HTML escaping (see internal/jsonstr).
func appendString(b []byte, s string) []byte { return jsonstr.Append(b, s) }
