package mcp

import (
	"encoding/base64"
	"errors"
	"fmt"

	"github.com/toolwire/toolwire/internal/wirejson"
)

// ResourceContents is the body of a resource: *TextResourceContents or
// *BlobResourceContents (a closed set).
type ResourceContents interface {
	ResourceURI() string
	isResourceContents()
}

// TextResourceContents is a textual resource body.
type TextResourceContents struct {
	URI      string `json:"uri"`
	MIMEType string `json:"mimeType,omitempty"`
	Text     string `json:"text"`
	Meta     Meta   `json:"_meta,omitempty"`
}

// BlobResourceContents is a binary resource body; Blob is base64 on the wire.
type BlobResourceContents struct {
	URI      string `json:"uri"`
	MIMEType string `json:"mimeType,omitempty"`
	Blob     []byte `json:"blob"`
	Meta     Meta   `json:"_meta,omitempty"`
}

func (r *TextResourceContents) ResourceURI() string { return r.URI }
func (r *BlobResourceContents) ResourceURI() string { return r.URI }
func (*TextResourceContents) isResourceContents()   {}
func (*BlobResourceContents) isResourceContents()   {}

type fieldError struct{ field, reason string }

func (e *fieldError) Error() string { return fmt.Sprintf("field %q: %s", e.field, e.reason) }

// DecodeResourceContents decodes a resource body: uri is required, and exactly
// one of text and blob. Decoding is strict, as for DecodeContent.
func DecodeResourceContents(data []byte) (ResourceContents, error) {
	var w struct {
		URI      *string `json:"uri"`
		MIMEType string  `json:"mimeType"`
		Text     *string `json:"text"`
		Blob     *string `json:"blob"`
		Meta     Meta    `json:"_meta"`
	}
	if err := wirejson.Unmarshal(data, &w); err != nil {
		var we *wirejson.Error
		if errors.As(err, &we) && we.Pointer != "" {
			return nil, &fieldError{fieldPath(we.Pointer), we.Reason}
		}
		return nil, err
	}
	switch {
	case w.URI == nil:
		return nil, &fieldError{"uri", "missing required field"}
	case w.Text != nil && w.Blob != nil:
		return nil, &fieldError{"text", `must not appear together with "blob"`}
	case w.Text != nil:
		return &TextResourceContents{URI: *w.URI, MIMEType: w.MIMEType, Text: *w.Text, Meta: w.Meta}, nil
	case w.Blob != nil:
		b, err := base64.StdEncoding.DecodeString(*w.Blob)
		if err != nil {
			return nil, &fieldError{"blob", "not valid base64: " + err.Error()}
		}
		return &BlobResourceContents{URI: *w.URI, MIMEType: w.MIMEType, Blob: b, Meta: w.Meta}, nil
	default:
		return nil, &fieldError{"text", `missing: a resource needs "text" or "blob"`}
	}
}
