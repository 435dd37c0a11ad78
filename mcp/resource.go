package mcp

import (
	"encoding/base64"
	"encoding/json"
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

// Resource method and notification names.
const (
	MethodListResources              = "resources/list"
	MethodListResourceTemplates      = "resources/templates/list"
	MethodReadResource               = "resources/read"
	MethodSubscribe                  = "resources/subscribe"
	MethodUnsubscribe                = "resources/unsubscribe"
	NotificationResourcesListChanged = "notifications/resources/list_changed"
	NotificationResourceUpdated      = "notifications/resources/updated"
)

// Resource describes a resource as resources/list reports it.
type Resource struct {
	URI         string       `json:"uri"`
	Name        string       `json:"name"`
	Title       string       `json:"title,omitempty"`
	Description string       `json:"description,omitempty"`
	MIMEType    string       `json:"mimeType,omitempty"`
	Size        *int64       `json:"size,omitempty"`
	Icons       []Icon       `json:"icons,omitempty"`
	Annotations *Annotations `json:"annotations,omitempty"`
	Meta        Meta         `json:"_meta,omitempty"`
}

// ResourceTemplate describes a family of resources by an RFC 6570 URI
// template, as resources/templates/list reports it.
type ResourceTemplate struct {
	URITemplate string       `json:"uriTemplate"`
	Name        string       `json:"name"`
	Title       string       `json:"title,omitempty"`
	Description string       `json:"description,omitempty"`
	MIMEType    string       `json:"mimeType,omitempty"`
	Icons       []Icon       `json:"icons,omitempty"`
	Annotations *Annotations `json:"annotations,omitempty"`
	Meta        Meta         `json:"_meta,omitempty"`
}

// ListResourcesParams are the params of resources/list and
// resources/templates/list.
type ListResourcesParams struct {
	Cursor string `json:"cursor,omitempty"`
	Meta   Meta   `json:"_meta,omitempty"`
}

// ListResourcesResult is the result of resources/list.
type ListResourcesResult struct {
	Resources  []*Resource `json:"resources"`
	NextCursor string      `json:"nextCursor,omitempty"`
	// TTLMs and CacheScope are required in 2026-07-28 and absent before.
	TTLMs      *int64     `json:"ttlMs,omitempty"`
	CacheScope CacheScope `json:"cacheScope,omitempty"`
	ResultType ResultType `json:"resultType,omitempty"`
	Meta       Meta       `json:"_meta,omitempty"`
}

// MarshalJSON writes "resources": [] rather than null for an empty page.
func (r *ListResourcesResult) MarshalJSON() ([]byte, error) {
	type alias ListResourcesResult
	a := *(*alias)(r)
	a.Resources = orEmpty(a.Resources)
	return json.Marshal(&a)
}

// UnmarshalJSON decodes the result strictly and requires "resources", and
// "uri" and "name" on each resource.
func (r *ListResourcesResult) UnmarshalJSON(data []byte) error {
	type alias ListResourcesResult
	var w alias
	if err := wirejson.Unmarshal(data, &w); err != nil {
		return err
	}
	if err := checkItems("resources/list", "resources", w.Resources,
		func(r *Resource) bool { return r.URI != "" && r.Name != "" }, `"uri" and "name"`); err != nil {
		return err
	}
	*r = ListResourcesResult(w)
	return nil
}

// ListResourceTemplatesResult is the result of resources/templates/list.
type ListResourceTemplatesResult struct {
	ResourceTemplates []*ResourceTemplate `json:"resourceTemplates"`
	NextCursor        string              `json:"nextCursor,omitempty"`
	TTLMs             *int64              `json:"ttlMs,omitempty"`
	CacheScope        CacheScope          `json:"cacheScope,omitempty"`
	ResultType        ResultType          `json:"resultType,omitempty"`
	Meta              Meta                `json:"_meta,omitempty"`
}

// MarshalJSON writes "resourceTemplates": [] rather than null.
func (r *ListResourceTemplatesResult) MarshalJSON() ([]byte, error) {
	type alias ListResourceTemplatesResult
	a := *(*alias)(r)
	a.ResourceTemplates = orEmpty(a.ResourceTemplates)
	return json.Marshal(&a)
}

// UnmarshalJSON decodes the result strictly and requires
// "resourceTemplates", and "uriTemplate" and "name" on each.
func (r *ListResourceTemplatesResult) UnmarshalJSON(data []byte) error {
	type alias ListResourceTemplatesResult
	var w alias
	if err := wirejson.Unmarshal(data, &w); err != nil {
		return err
	}
	if err := checkItems("resources/templates/list", "resourceTemplates", w.ResourceTemplates,
		func(t *ResourceTemplate) bool { return t.URITemplate != "" && t.Name != "" }, `"uriTemplate" and "name"`); err != nil {
		return err
	}
	*r = ListResourceTemplatesResult(w)
	return nil
}

// ReadResourceParams are the params of resources/read.
type ReadResourceParams struct {
	URI  string `json:"uri"`
	Meta Meta   `json:"_meta,omitempty"`
}

// ReadResourceResult is the result of resources/read.
type ReadResourceResult struct {
	Contents []ResourceContents `json:"contents"`
	// TTLMs and CacheScope are required in 2026-07-28 and absent before;
	// a handler that leaves them unset gets ttlMs 0 and "private".
	TTLMs      *int64     `json:"ttlMs,omitempty"`
	CacheScope CacheScope `json:"cacheScope,omitempty"`
	ResultType ResultType `json:"resultType,omitempty"`
	Meta       Meta       `json:"_meta,omitempty"`
}

// MarshalJSON writes "contents": [] rather than null.
func (r *ReadResourceResult) MarshalJSON() ([]byte, error) {
	type alias ReadResourceResult
	a := *(*alias)(r)
	a.Contents = orEmpty(a.Contents)
	return json.Marshal(&a)
}

// UnmarshalJSON decodes the result strictly: "contents" is required and
// each element is a text or blob body (DecodeResourceContents).
func (r *ReadResourceResult) UnmarshalJSON(data []byte) error {
	var w struct {
		Contents   []json.RawMessage `json:"contents"`
		TTLMs      *int64            `json:"ttlMs"`
		CacheScope CacheScope        `json:"cacheScope"`
		ResultType ResultType        `json:"resultType"`
		Meta       Meta              `json:"_meta"`
	}
	if err := wirejson.Unmarshal(data, &w); err != nil {
		return err
	}
	if w.Contents == nil {
		return errors.New(`resources/read result: missing required field "contents"`)
	}
	contents, err := decodeEachAt("contents", w.Contents, DecodeResourceContents)
	if err != nil {
		return err
	}
	*r = ReadResourceResult{Contents: contents, TTLMs: w.TTLMs, CacheScope: w.CacheScope, ResultType: w.ResultType, Meta: w.Meta}
	return nil
}

// SubscribeParams are the params of resources/subscribe and
// resources/unsubscribe (2025-era sessions).
type SubscribeParams struct {
	URI  string `json:"uri"`
	Meta Meta   `json:"_meta,omitempty"`
}

// ResourceUpdatedParams are the params of notifications/resources/updated.
type ResourceUpdatedParams struct {
	URI  string `json:"uri"`
	Meta Meta   `json:"_meta,omitempty"`
}

// ResourceNotFoundData is the data of the -32602 error that answers a read
// of a URI the server does not serve (SEP-2164).
type ResourceNotFoundData struct {
	URI string `json:"uri"`
}
