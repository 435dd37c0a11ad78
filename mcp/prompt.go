package mcp

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/toolwire/toolwire/internal/wirejson"
)

// Prompt method and notification names.
const (
	MethodListPrompts              = "prompts/list"
	MethodGetPrompt                = "prompts/get"
	NotificationPromptsListChanged = "notifications/prompts/list_changed"
)

// Prompt describes a prompt template as prompts/list reports it.
type Prompt struct {
	Name        string `json:"name"`
	Title       string `json:"title,omitempty"`
	Description string `json:"description,omitempty"`
	// Arguments are the arguments prompts/get accepts for the template.
	Arguments []PromptArgument `json:"arguments,omitempty"`
	Icons     []Icon           `json:"icons,omitempty"`
	Meta      Meta             `json:"_meta,omitempty"`
}

// PromptArgument describes one argument a prompt template accepts. Argument
// values are always strings on the wire.
type PromptArgument struct {
	Name        string `json:"name"`
	Title       string `json:"title,omitempty"`
	Description string `json:"description,omitempty"`
	Required    bool   `json:"required,omitempty"`
}

// promptWire is a Prompt with required members as pointers.
type promptWire struct {
	Name        *string `json:"name"`
	Title       string  `json:"title"`
	Description string  `json:"description"`
	Arguments   []struct {
		Name        *string `json:"name"`
		Title       string  `json:"title"`
		Description string  `json:"description"`
		Required    bool    `json:"required"`
	} `json:"arguments"`
	Icons []Icon `json:"icons"`
	Meta  Meta   `json:"_meta"`
}

// UnmarshalJSON decodes a prompt strictly (names match case-sensitively, a
// case variant or a duplicate member is refused) and requires "name", and
// "name" on every argument.
func (p *Prompt) UnmarshalJSON(data []byte) error {
	var w promptWire
	if err := wirejson.Unmarshal(data, &w); err != nil {
		return err
	}
	if w.Name == nil {
		return errors.New(`prompt: missing required field "name"`)
	}
	out := Prompt{Name: *w.Name, Title: w.Title, Description: w.Description, Icons: w.Icons, Meta: w.Meta}
	if w.Arguments != nil {
		out.Arguments = make([]PromptArgument, len(w.Arguments))
	}
	for i, a := range w.Arguments {
		if a.Name == nil {
			return fmt.Errorf(`prompt %q: arguments[%d]: missing required field "name"`, out.Name, i)
		}
		out.Arguments[i] = PromptArgument{Name: *a.Name, Title: a.Title, Description: a.Description, Required: a.Required}
	}
	*p = out
	return nil
}

// PromptMessage is one message of a prompt: a role and one content block of
// any type (text, image, audio, resource_link or an embedded resource).
type PromptMessage struct {
	Role    Role
	Content Content
}

// MarshalJSON writes the message; its content block carries its "type".
func (m PromptMessage) MarshalJSON() ([]byte, error) {
	if m.Content == nil {
		return nil, errors.New(`mcp: prompt message has no "content"`)
	}
	if m.Role != RoleUser && m.Role != RoleAssistant {
		return nil, fmt.Errorf(`mcp: prompt message role %q is neither "user" nor "assistant"`, m.Role)
	}
	return json.Marshal(struct {
		Role    Role    `json:"role"`
		Content Content `json:"content"`
	}{m.Role, m.Content})
}

// UnmarshalJSON decodes a message strictly; see DecodePromptMessages for
// the errors.
func (m *PromptMessage) UnmarshalJSON(data []byte) error {
	msg, err := decodePromptMessage(0, data)
	if err != nil {
		return err
	}
	*m = msg
	return nil
}

// PromptMessageError reports a prompt message that does not match the
// schema: which message (by index), which field, and why. A bad content
// block also unwraps to its *ContentError.
type PromptMessageError struct {
	Index  int    // position in the messages array
	Field  string // "role", "content", "content.text", ...; "" for the whole message
	Reason string
	Err    error
}

func (e *PromptMessageError) Error() string {
	if e.Field != "" {
		return fmt.Sprintf("messages[%d]: field %q: %s", e.Index, e.Field, e.Reason)
	}
	return fmt.Sprintf("messages[%d]: %s", e.Index, e.Reason)
}

func (e *PromptMessageError) Unwrap() error { return e.Err }

// DecodePromptMessages decodes a messages array strictly, refusing a
// message whose role is not "user" or "assistant" or whose content block is
// unknown or incomplete with a *PromptMessageError naming it.
func DecodePromptMessages(data []byte) ([]PromptMessage, error) {
	raws, err := wirejson.Elements(data)
	if err != nil {
		return nil, fmt.Errorf(`"messages" must be an array of messages: %w`, err)
	}
	return decodeEach(raws, decodePromptMessage)
}

func decodePromptMessage(index int, raw []byte) (PromptMessage, error) {
	var w struct {
		Role    *Role           `json:"role"`
		Content json.RawMessage `json:"content"`
	}
	if err := wirejson.Unmarshal(raw, &w); err != nil {
		pe := &PromptMessageError{Index: index, Reason: "not a valid message: " + err.Error(), Err: err}
		var we *wirejson.Error
		if errors.As(err, &we) {
			if pe.Field = fieldPath(we.Pointer); pe.Field != "" {
				pe.Reason = we.Reason
			}
		}
		return PromptMessage{}, pe
	}
	if w.Role == nil {
		return PromptMessage{}, &PromptMessageError{Index: index, Field: "role", Reason: "missing required field"}
	}
	if *w.Role != RoleUser && *w.Role != RoleAssistant {
		return PromptMessage{}, &PromptMessageError{Index: index, Field: "role", Reason: fmt.Sprintf(`%q is neither "user" nor "assistant"`, *w.Role)}
	}
	if w.Content == nil || string(w.Content) == "null" {
		return PromptMessage{}, &PromptMessageError{Index: index, Field: "content", Reason: "missing required field"}
	}
	c, err := DecodeContentBlock(index, w.Content)
	if err != nil {
		pe := &PromptMessageError{Index: index, Field: "content", Reason: err.Error(), Err: err}
		var ce *ContentError
		if errors.As(err, &ce) {
			if ce.Field != "" {
				pe.Field += "." + ce.Field
			}
			pe.Reason = ce.Reason
		}
		return PromptMessage{}, pe
	}
	return PromptMessage{Role: *w.Role, Content: c}, nil
}

// GetPromptParams are the params of prompts/get.
type GetPromptParams struct {
	Name      string            `json:"name"`
	Arguments map[string]string `json:"arguments,omitempty"`
	Meta      Meta              `json:"_meta,omitempty"`
}

// GetPromptResult is the result of prompts/get: the prompt's messages with
// its arguments filled in.
type GetPromptResult struct {
	Description string          `json:"description,omitempty"`
	Messages    []PromptMessage `json:"messages"`
	ResultType  ResultType      `json:"resultType,omitempty"`
	Meta        Meta            `json:"_meta,omitempty"`
}

// MarshalJSON writes "messages": [] rather than null.
func (r *GetPromptResult) MarshalJSON() ([]byte, error) {
	type alias GetPromptResult
	a := *(*alias)(r)
	a.Messages = orEmpty(a.Messages)
	return json.Marshal(&a)
}

// UnmarshalJSON decodes the result strictly, naming a bad message with a
// *PromptMessageError.
func (r *GetPromptResult) UnmarshalJSON(data []byte) error {
	var w struct {
		Description string          `json:"description"`
		Messages    json.RawMessage `json:"messages"`
		ResultType  ResultType      `json:"resultType"`
		Meta        Meta            `json:"_meta"`
	}
	if err := wirejson.Unmarshal(data, &w); err != nil {
		return err
	}
	if w.Messages == nil {
		return errors.New(`prompts/get result: missing required field "messages"`)
	}
	msgs, err := DecodePromptMessages(w.Messages)
	if err != nil {
		return err
	}
	*r = GetPromptResult{Description: w.Description, Messages: msgs, ResultType: w.ResultType, Meta: w.Meta}
	return nil
}

// ListPromptsParams are the params of prompts/list.
type ListPromptsParams struct {
	Cursor string `json:"cursor,omitempty"`
	Meta   Meta   `json:"_meta,omitempty"`
}

// ListPromptsResult is the result of prompts/list.
type ListPromptsResult struct {
	Prompts    []*Prompt `json:"prompts"`
	NextCursor string    `json:"nextCursor,omitempty"`
	// TTLMs and CacheScope are required in 2026-07-28 and absent before.
	TTLMs      *int64     `json:"ttlMs,omitempty"`
	CacheScope CacheScope `json:"cacheScope,omitempty"`
	ResultType ResultType `json:"resultType,omitempty"`
	Meta       Meta       `json:"_meta,omitempty"`
}

// MarshalJSON writes "prompts": [] rather than null for an empty page.
func (r *ListPromptsResult) MarshalJSON() ([]byte, error) {
	type alias ListPromptsResult
	a := *(*alias)(r)
	a.Prompts = orEmpty(a.Prompts)
	return json.Marshal(&a)
}

// UnmarshalJSON decodes the result strictly and requires "prompts".
func (r *ListPromptsResult) UnmarshalJSON(data []byte) error {
	type alias ListPromptsResult
	var w struct {
		alias
		Prompts []json.RawMessage `json:"prompts"`
	}
	if err := wirejson.Unmarshal(data, &w); err != nil {
		return err
	}
	if w.Prompts == nil {
		return errors.New(`prompts/list result: missing required field "prompts"`)
	}
	out := ListPromptsResult(w.alias)
	var err error
	out.Prompts, err = decodeEachAt("prompts", w.Prompts, func(raw []byte) (*Prompt, error) {
		p := new(Prompt)
		return p, p.UnmarshalJSON(raw)
	})
	if err != nil {
		return err
	}
	*r = out
	return nil
}
