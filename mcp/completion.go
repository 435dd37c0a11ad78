package mcp

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/toolwire/toolwire/internal/wirejson"
)

// MethodComplete is the completion request.
const MethodComplete = "completion/complete"

// MaxCompletionValues is the most values one completion result may carry.
const MaxCompletionValues = 100

// Completion reference types.
const (
	RefPrompt   = "ref/prompt"
	RefResource = "ref/resource"
)

// CompletionReference names what is being completed: a prompt's argument
// (Type RefPrompt, Name) or a resource template's variable (Type
// RefResource, URI holding the template).
type CompletionReference struct {
	Type string `json:"type"`
	Name string `json:"name,omitempty"`
	URI  string `json:"uri,omitempty"`
}

// MarshalJSON writes "name" for a prompt reference and "uri" for a
// resource template reference, even when empty: each is required.
func (r CompletionReference) MarshalJSON() ([]byte, error) {
	switch r.Type {
	case RefPrompt:
		return json.Marshal(struct {
			Type string `json:"type"`
			Name string `json:"name"`
		}{r.Type, r.Name})
	case RefResource:
		return json.Marshal(struct {
			Type string `json:"type"`
			URI  string `json:"uri"`
		}{r.Type, r.URI})
	}
	return nil, fmt.Errorf(`mcp: unknown completion reference type %q (want "ref/prompt" or "ref/resource")`, r.Type)
}

// UnmarshalJSON decodes a reference strictly: "ref/prompt" needs "name",
// "ref/resource" needs "uri", and any other type is refused.
func (r *CompletionReference) UnmarshalJSON(data []byte) error {
	var w struct {
		Type  *string `json:"type"`
		Name  *string `json:"name"`
		URI   *string `json:"uri"`
		Title string  `json:"title"`
	}
	if err := wirejson.Unmarshal(data, &w); err != nil {
		return err
	}
	switch {
	case w.Type == nil:
		return errors.New(`ref: missing required field "type"`)
	case *w.Type == RefPrompt && w.Name == nil:
		return errors.New(`ref: "ref/prompt" needs "name"`)
	case *w.Type == RefResource && w.URI == nil:
		return errors.New(`ref: "ref/resource" needs "uri"`)
	case *w.Type != RefPrompt && *w.Type != RefResource:
		return fmt.Errorf(`ref: unknown type %q (want "ref/prompt" or "ref/resource")`, *w.Type)
	}
	*r = CompletionReference{Type: *w.Type}
	if w.Name != nil {
		r.Name = *w.Name
	}
	if w.URI != nil {
		r.URI = *w.URI
	}
	return nil
}

// CompletionArgument is the argument being completed and what was typed.
type CompletionArgument struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// CompletionContext carries arguments already resolved, so completions can
// depend on them.
type CompletionContext struct {
	Arguments map[string]string `json:"arguments,omitempty"`
}

// CompleteParams are the params of completion/complete.
type CompleteParams struct {
	Ref      CompletionReference `json:"ref"`
	Argument CompletionArgument  `json:"argument"`
	Context  *CompletionContext  `json:"context,omitempty"`
	Meta     Meta                `json:"_meta,omitempty"`
}

// Completion is a list of suggested values: at most MaxCompletionValues,
// with Total (when known) and HasMore telling of values left out.
type Completion struct {
	Values  []string `json:"values"`
	Total   *int     `json:"total,omitempty"`
	HasMore bool     `json:"hasMore,omitempty"`
}

// CompleteResult is the result of completion/complete.
type CompleteResult struct {
	Completion Completion `json:"completion"`
	ResultType ResultType `json:"resultType,omitempty"`
	Meta       Meta       `json:"_meta,omitempty"`
}

// MarshalJSON writes "values": [] rather than null, and refuses more than
// MaxCompletionValues values.
func (r *CompleteResult) MarshalJSON() ([]byte, error) {
	if len(r.Completion.Values) > MaxCompletionValues {
		return nil, fmt.Errorf("mcp: a completion carries at most %d values, not %d", MaxCompletionValues, len(r.Completion.Values))
	}
	type alias CompleteResult
	a := *(*alias)(r)
	a.Completion.Values = orEmpty(a.Completion.Values)
	return json.Marshal(&a)
}

// UnmarshalJSON decodes the result strictly and requires
// "completion.values" with at most MaxCompletionValues entries.
func (r *CompleteResult) UnmarshalJSON(data []byte) error {
	var w struct {
		Completion *struct {
			Values  []string `json:"values"`
			Total   *int     `json:"total"`
			HasMore bool     `json:"hasMore"`
		} `json:"completion"`
		ResultType ResultType `json:"resultType"`
		Meta       Meta       `json:"_meta"`
	}
	if err := wirejson.Unmarshal(data, &w); err != nil {
		return err
	}
	if w.Completion == nil || w.Completion.Values == nil {
		return errors.New(`completion/complete result: missing required field "completion.values"`)
	}
	if len(w.Completion.Values) > MaxCompletionValues {
		return fmt.Errorf("completion/complete result: %d values, more than the %d allowed", len(w.Completion.Values), MaxCompletionValues)
	}
	*r = CompleteResult{Completion: Completion{Values: w.Completion.Values, Total: w.Completion.Total, HasMore: w.Completion.HasMore},
		ResultType: w.ResultType, Meta: w.Meta}
	return nil
}
