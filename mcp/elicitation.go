package mcp

import (
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/toolwire/toolwire/internal/wirejson"
)

// NotificationElicitationComplete tells the client a URL-mode elicitation
// finished out of band.
const NotificationElicitationComplete = "notifications/elicitation/complete"

// Elicitation modes.
const (
	ElicitForm = "form"
	ElicitURL  = "url"
)

// Elicitation actions a user can take.
const (
	ActionAccept  = "accept"
	ActionDecline = "decline"
	ActionCancel  = "cancel"
)

// ElicitParams are the params of elicitation/create. Form mode (Mode "" or
// "form") asks for values matching RequestedSchema, a flat object of
// primitive properties (ValidateElicitationSchema); URL mode sends the user
// to URL, for input that must not pass through the client (credentials,
// payments).
type ElicitParams struct {
	Mode            string          `json:"mode,omitempty"`
	Message         string          `json:"message"`
	RequestedSchema json.RawMessage `json:"requestedSchema,omitempty"`
	ElicitationID   string          `json:"elicitationId,omitempty"`
	URL             string          `json:"url,omitempty"`
	Meta            Meta            `json:"_meta,omitempty"`
}

// Validate checks the params as a server must before sending them: a known
// mode, a message, a restricted schema in form mode, and an id and an
// absolute http(s) URL in URL mode.
func (p *ElicitParams) Validate() error {
	switch p.Mode {
	case "", ElicitForm:
		if len(p.RequestedSchema) == 0 {
			return errors.New(`elicitation: form mode needs "requestedSchema"`)
		}
		if p.URL != "" || p.ElicitationID != "" {
			return errors.New(`elicitation: "url" and "elicitationId" belong to url mode`)
		}
		return ValidateElicitationSchema(p.RequestedSchema)
	case ElicitURL:
		if p.ElicitationID == "" {
			return errors.New(`elicitation: url mode needs "elicitationId"`)
		}
		if !strings.HasPrefix(p.URL, "https://") && !strings.HasPrefix(p.URL, "http://") {
			return fmt.Errorf("elicitation: url mode needs an absolute http(s) URL, not %q", p.URL)
		}
		if len(p.RequestedSchema) != 0 {
			return errors.New(`elicitation: "requestedSchema" belongs to form mode`)
		}
		return nil
	}
	return fmt.Errorf("elicitation: unknown mode %q (want form or url)", p.Mode)
}

// ElicitResult is the client's answer to elicitation/create. Content holds
// the values on accept (form mode) and nothing otherwise.
type ElicitResult struct {
	Action  string         `json:"action"`
	Content map[string]any `json:"content,omitempty"`
	Meta    Meta           `json:"_meta,omitempty"`
}

// UnmarshalJSON decodes the answer strictly: action is accept, decline or
// cancel, and content values are strings, numbers, booleans or arrays of
// strings.
func (r *ElicitResult) UnmarshalJSON(data []byte) error {
	var w struct {
		Action     *string        `json:"action"`
		Content    map[string]any `json:"content"`
		ResultType ResultType     `json:"resultType"`
		Meta       Meta           `json:"_meta"`
	}
	if err := wirejson.UnmarshalUseNumber(data, &w); err != nil {
		return err
	}
	if w.Action == nil {
		return errors.New(`elicitation result: missing required field "action"`)
	}
	switch *w.Action {
	case ActionAccept, ActionDecline, ActionCancel:
	default:
		return fmt.Errorf("elicitation result: unknown action %q (want accept, decline or cancel)", *w.Action)
	}
	for k, v := range w.Content {
		switch v := v.(type) {
		case string, json.Number, bool:
		case []any:
			for _, e := range v {
				if _, ok := e.(string); !ok {
					return fmt.Errorf("elicitation result: content %q: arrays hold strings only", k)
				}
			}
		default:
			return fmt.Errorf("elicitation result: content %q must be a string, number, boolean or array of strings", k)
		}
	}
	*r = ElicitResult{Action: *w.Action, Content: w.Content, Meta: w.Meta}
	return nil
}

// ElicitationCompleteParams are the params of
// notifications/elicitation/complete.
type ElicitationCompleteParams struct {
	ElicitationID string `json:"elicitationId"`
	Meta          Meta   `json:"_meta,omitempty"`
}

// ValidateElicitationSchema checks a form-mode requestedSchema against the
// restricted subset clients can render: an object whose properties are
// each a string (optionally with format email, uri, date or date-time), a
// number or integer, a boolean, a single-select enum (enum, enum with
// enumNames, or oneOf of const/title) or a multi-select array of such
// values; no nesting. Defaults (SEP-1034) must match their property's
// type.
func ValidateElicitationSchema(raw json.RawMessage) error {
	var root struct {
		Type       string                     `json:"type"`
		Properties map[string]json.RawMessage `json:"properties"`
		Required   []string                   `json:"required"`
		Schema     string                     `json:"$schema"`
		Title      string                     `json:"title"`
		Desc       string                     `json:"description"`
	}
	if err := wirejson.Unmarshal(raw, &root); err != nil {
		return fmt.Errorf("elicitation schema: %w", err)
	}
	if root.Type != "object" {
		return errors.New(`elicitation schema: the root must be {"type":"object"}`)
	}
	names := make([]string, 0, len(root.Properties))
	for n := range root.Properties {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		if err := validateElicitProperty(root.Properties[n]); err != nil {
			return fmt.Errorf("elicitation schema: property %q: %w", n, err)
		}
	}
	for _, r := range root.Required {
		if _, ok := root.Properties[r]; !ok {
			return fmt.Errorf("elicitation schema: required property %q is not defined", r)
		}
	}
	return nil
}

type titledConst struct {
	Const *string `json:"const"`
	Title string  `json:"title"`
}

func validateElicitProperty(raw json.RawMessage) error {
	var p struct {
		Type        string          `json:"type"`
		Title       string          `json:"title"`
		Description string          `json:"description"`
		Default     json.RawMessage `json:"default"`
		MinLength   *int            `json:"minLength"`
		MaxLength   *int            `json:"maxLength"`
		Format      string          `json:"format"`
		Pattern     string          `json:"pattern"`
		Minimum     *float64        `json:"minimum"`
		Maximum     *float64        `json:"maximum"`
		Enum        []string        `json:"enum"`
		EnumNames   []string        `json:"enumNames"`
		OneOf       []titledConst   `json:"oneOf"`
		Items       json.RawMessage `json:"items"`
		MinItems    *int            `json:"minItems"`
		MaxItems    *int            `json:"maxItems"`
	}
	if err := wirejson.Unmarshal(raw, &p); err != nil {
		return err
	}
	def := p.Default
	switch p.Type {
	case "string":
		switch p.Format {
		case "", "email", "uri", "date", "date-time":
		default:
			return fmt.Errorf("unsupported format %q", p.Format)
		}
		if len(p.EnumNames) > 0 && len(p.EnumNames) != len(p.Enum) {
			return errors.New(`"enumNames" must name every "enum" value`)
		}
		for i, o := range p.OneOf {
			if o.Const == nil {
				return fmt.Errorf(`oneOf[%d] needs "const"`, i)
			}
		}
		if def != nil {
			var s string
			if wirejson.Unmarshal(def, &s) != nil {
				return errors.New(`"default" must be a string`)
			}
		}
	case "number", "integer":
		if def != nil {
			var f float64
			if wirejson.Unmarshal(def, &f) != nil {
				return fmt.Errorf(`"default" must be a %s`, p.Type)
			}
			if p.Type == "integer" && f != float64(int64(f)) {
				return errors.New(`"default" must be an integer`)
			}
		}
	case "boolean":
		if def != nil {
			var b bool
			if wirejson.Unmarshal(def, &b) != nil {
				return errors.New(`"default" must be a boolean`)
			}
		}
	case "array":
		var items struct {
			Type  string        `json:"type"`
			Enum  []string      `json:"enum"`
			AnyOf []titledConst `json:"anyOf"`
		}
		if len(p.Items) == 0 || wirejson.Unmarshal(p.Items, &items) != nil {
			return errors.New(`an array property needs "items" with "enum" or "anyOf"`)
		}
		if len(items.Enum) == 0 && len(items.AnyOf) == 0 {
			return errors.New(`an array property is a multi-select: "items" needs "enum" or "anyOf"`)
		}
		if def != nil {
			var ss []string
			if wirejson.Unmarshal(def, &ss) != nil {
				return errors.New(`"default" must be an array of strings`)
			}
		}
	case "":
		return errors.New(`"type" is required (string, number, integer, boolean or array)`)
	default:
		return fmt.Errorf("type %q is not allowed (string, number, integer, boolean or array)", p.Type)
	}
	return nil
}
