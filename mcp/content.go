package mcp

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/toolwire/toolwire/internal/wirejson"
)

// Content is one block of a tool result or prompt message. The set is closed:
// *TextContent, *ImageContent, *AudioContent, *ResourceLink and
// *EmbeddedResource. Each writes its own "type" member when encoded.
type Content interface {
	// ContentType returns the block's wire type ("text", "image", ...).
	ContentType() string
	isContent()
}

// Role is an audience member: "user" or "assistant".
type Role string

// The roles MCP defines.
const (
	RoleUser      Role = "user"
	RoleAssistant Role = "assistant"
)

// Annotations tell a client how to use a block. Priority is a pointer so that
// a priority of 0 ("entirely optional") can be sent.
type Annotations struct {
	Audience     []Role   `json:"audience,omitempty"`
	Priority     *float64 `json:"priority,omitempty"`
	LastModified string   `json:"lastModified,omitempty"` // ISO 8601
}

// Priority returns a pointer to p, for Annotations.Priority.
func Priority(p float64) *float64 { return &p }

// TextContent is plain text for the model or the user.
type TextContent struct {
	Text        string
	Annotations *Annotations
	Meta        Meta
}

// ImageContent is an image carried inline. Data holds the raw bytes; they are
// base64-encoded on the wire.
type ImageContent struct {
	Data        []byte
	MIMEType    string
	Annotations *Annotations
	Meta        Meta
}

// AudioContent is audio carried inline, base64-encoded on the wire.
type AudioContent struct {
	Data        []byte
	MIMEType    string
	Annotations *Annotations
	Meta        Meta
}

// ResourceLink points at a resource the client may read later; no payload.
type ResourceLink struct {
	URI         string
	Name        string
	Title       string
	Description string
	MIMEType    string
	Size        *int64
	Icons       []Icon
	Annotations *Annotations
	Meta        Meta
}

// EmbeddedResource carries a resource's contents inside the result.
type EmbeddedResource struct {
	Resource    ResourceContents
	Annotations *Annotations
	Meta        Meta
}

func (*TextContent) ContentType() string      { return "text" }
func (*ImageContent) ContentType() string     { return "image" }
func (*AudioContent) ContentType() string     { return "audio" }
func (*ResourceLink) ContentType() string     { return "resource_link" }
func (*EmbeddedResource) ContentType() string { return "resource" }

func (*TextContent) isContent()      {}
func (*ImageContent) isContent()     {}
func (*AudioContent) isContent()     {}
func (*ResourceLink) isContent()     {}
func (*EmbeddedResource) isContent() {}

// MarshalJSON writes the block with its "type".
func (c *TextContent) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		Type        string       `json:"type"`
		Text        string       `json:"text"`
		Annotations *Annotations `json:"annotations,omitempty"`
		Meta        Meta         `json:"_meta,omitempty"`
	}{"text", c.Text, c.Annotations, c.Meta})
}

type mediaWire struct {
	Type        string       `json:"type"`
	Data        string       `json:"data"`
	MIMEType    string       `json:"mimeType"`
	Annotations *Annotations `json:"annotations,omitempty"`
	Meta        Meta         `json:"_meta,omitempty"`
}

// MarshalJSON writes the block with its "type" and base64 data.
func (c *ImageContent) MarshalJSON() ([]byte, error) {
	return json.Marshal(mediaWire{"image", base64.StdEncoding.EncodeToString(c.Data), c.MIMEType, c.Annotations, c.Meta})
}

// MarshalJSON writes the block with its "type" and base64 data.
func (c *AudioContent) MarshalJSON() ([]byte, error) {
	return json.Marshal(mediaWire{"audio", base64.StdEncoding.EncodeToString(c.Data), c.MIMEType, c.Annotations, c.Meta})
}

// MarshalJSON writes the block with its "type"; the other members are a
// Resource's, as the schema defines ResourceLink by extending Resource.
func (c *ResourceLink) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		Type string `json:"type"`
		Resource
	}{"resource_link", Resource(*c)})
}

// MarshalJSON writes the block with its "type".
func (c *EmbeddedResource) MarshalJSON() ([]byte, error) {
	if c.Resource == nil {
		return nil, errors.New(`mcp: embedded resource has no "resource"`)
	}
	return json.Marshal(struct {
		Type        string           `json:"type"`
		Resource    ResourceContents `json:"resource"`
		Annotations *Annotations     `json:"annotations,omitempty"`
		Meta        Meta             `json:"_meta,omitempty"`
	}{"resource", c.Resource, c.Annotations, c.Meta})
}

// ContentError reports a content block that does not match its type: which
// block (by index), of which type, which field, and why.
type ContentError struct {
	Index  int    // position in the content array
	Type   string // the block's "type", "" when missing
	Field  string // the offending member, "" when the block as a whole is wrong
	Reason string
}

func (e *ContentError) Error() string {
	where := fmt.Sprintf("content[%d]", e.Index)
	if e.Type != "" {
		where += fmt.Sprintf(" (%s)", e.Type)
	}
	if e.Field != "" {
		return fmt.Sprintf("%s: field %q: %s", where, e.Field, e.Reason)
	}
	return fmt.Sprintf("%s: %s", where, e.Reason)
}

// blockWire is every member any block type may carry; pointers tell absent
// from empty.
type blockWire struct {
	Type        *string         `json:"type"`
	Text        *string         `json:"text"`
	Data        *string         `json:"data"`
	MIMEType    *string         `json:"mimeType"`
	URI         *string         `json:"uri"`
	Name        *string         `json:"name"`
	Title       string          `json:"title"`
	Description string          `json:"description"`
	Size        *int64          `json:"size"`
	Icons       []Icon          `json:"icons"`
	Resource    json.RawMessage `json:"resource"`
	Annotations *Annotations    `json:"annotations"`
	Meta        Meta            `json:"_meta"`
}

// DecodeContent decodes a content array, rejecting a block of unknown type or
// one missing a required field with a *ContentError naming the block.
// Decoding is strict: member names match case-sensitively, a member whose
// name differs from a block member's only by case is refused ("Text" is not
// "text"), and so is any member name appearing twice in one object.
func DecodeContent(data []byte) ([]Content, error) {
	raws, err := wirejson.Elements(data)
	if err != nil {
		var we *wirejson.Error
		if errors.As(err, &we) {
			if first, rest, _ := strings.Cut(strings.TrimPrefix(we.Pointer, "/"), "/"); first != "" {
				if i, aerr := strconv.Atoi(first); aerr == nil {
					return nil, &ContentError{Index: i, Field: fieldPath("/" + rest), Reason: we.Reason}
				}
			}
		}
		return nil, fmt.Errorf(`"content" must be an array of blocks: %w`, err)
	}
	return decodeEach(raws, DecodeContentBlock)
}

// fieldPath renders a JSON Pointer below a block as a dotted field path
// ("/annotations/priority" is "annotations.priority").
func fieldPath(pointer string) string {
	if pointer == "" || pointer == "/" {
		return ""
	}
	tokens := strings.Split(pointer[1:], "/")
	for i, t := range tokens {
		tokens[i] = strings.ReplaceAll(strings.ReplaceAll(t, "~1", "/"), "~0", "~")
	}
	return strings.Join(tokens, ".")
}

// DecodeContentBlock decodes one block; index is used in errors only.
func DecodeContentBlock(index int, raw []byte) (Content, error) {
	var w blockWire
	if err := wirejson.Unmarshal(raw, &w); err != nil {
		ce := &ContentError{Index: index, Reason: "not a valid block: " + err.Error()}
		var we *wirejson.Error
		if errors.As(err, &we) {
			if ce.Field = fieldPath(we.Pointer); ce.Field != "" {
				ce.Reason = we.Reason
			}
		}
		if w.Type != nil && ce.Field != "type" {
			ce.Type = *w.Type
		}
		return nil, ce
	}
	if w.Type == nil {
		return nil, &ContentError{Index: index, Field: "type", Reason: "missing required field"}
	}
	t := *w.Type
	missing := func(field string) error {
		return &ContentError{Index: index, Type: t, Field: field, Reason: "missing required field"}
	}
	switch t {
	case "text":
		if w.Text == nil {
			return nil, missing("text")
		}
		return &TextContent{Text: *w.Text, Annotations: w.Annotations, Meta: w.Meta}, nil
	case "image", "audio":
		if w.Data == nil {
			return nil, missing("data")
		}
		if w.MIMEType == nil {
			return nil, missing("mimeType")
		}
		b, err := base64.StdEncoding.DecodeString(*w.Data)
		if err != nil {
			return nil, &ContentError{Index: index, Type: t, Field: "data", Reason: "not valid base64: " + err.Error()}
		}
		if t == "image" {
			return &ImageContent{Data: b, MIMEType: *w.MIMEType, Annotations: w.Annotations, Meta: w.Meta}, nil
		}
		return &AudioContent{Data: b, MIMEType: *w.MIMEType, Annotations: w.Annotations, Meta: w.Meta}, nil
	case "resource_link":
		if w.URI == nil {
			return nil, missing("uri")
		}
		if w.Name == nil {
			return nil, missing("name")
		}
		l := &ResourceLink{URI: *w.URI, Name: *w.Name, Title: w.Title, Description: w.Description,
			Size: w.Size, Icons: w.Icons, Annotations: w.Annotations, Meta: w.Meta}
		if w.MIMEType != nil {
			l.MIMEType = *w.MIMEType
		}
		return l, nil
	case "resource":
		if w.Resource == nil || string(w.Resource) == "null" {
			return nil, missing("resource")
		}
		rc, err := DecodeResourceContents(w.Resource)
		if err != nil {
			var fe *fieldError
			if errors.As(err, &fe) {
				return nil, &ContentError{Index: index, Type: t, Field: "resource." + fe.field, Reason: fe.reason}
			}
			return nil, &ContentError{Index: index, Type: t, Field: "resource", Reason: err.Error()}
		}
		return &EmbeddedResource{Resource: rc, Annotations: w.Annotations, Meta: w.Meta}, nil
	case "":
		return nil, &ContentError{Index: index, Field: "type", Reason: "must not be empty"}
	default:
		return nil, &ContentError{Index: index, Type: t, Field: "type",
			Reason: fmt.Sprintf("unknown content type %q (want text, image, audio, resource_link or resource)", t)}
	}
}
