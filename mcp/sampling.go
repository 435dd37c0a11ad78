package mcp

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/toolwire/toolwire/internal/wirejson"
)

// ToolUseContent is a model's request to call a tool, inside a sampling
// message (assistant role).
type ToolUseContent struct {
	ID    string          // the tool use's id, echoed by its result
	Name  string          // the tool's name
	Input json.RawMessage // the arguments, a JSON object
	Meta  Meta
}

// ToolResultContent is the outcome of a tool use, inside a sampling message
// (user role).
type ToolResultContent struct {
	ToolUseID         string
	Content           []Content
	StructuredContent json.RawMessage
	IsError           bool
	Meta              Meta
}

func (*ToolUseContent) ContentType() string    { return "tool_use" }
func (*ToolResultContent) ContentType() string { return "tool_result" }
func (*ToolUseContent) isContent()             {}
func (*ToolResultContent) isContent()          {}

// MarshalJSON writes the block with its "type".
func (c *ToolUseContent) MarshalJSON() ([]byte, error) {
	input := c.Input
	if len(input) == 0 {
		input = json.RawMessage("{}")
	}
	return json.Marshal(struct {
		Type  string          `json:"type"`
		ID    string          `json:"id"`
		Name  string          `json:"name"`
		Input json.RawMessage `json:"input"`
		Meta  Meta            `json:"_meta,omitempty"`
	}{"tool_use", c.ID, c.Name, input, c.Meta})
}

// MarshalJSON writes the block with its "type".
func (c *ToolResultContent) MarshalJSON() ([]byte, error) {
	content := c.Content
	if content == nil {
		content = []Content{}
	}
	return json.Marshal(struct {
		Type              string          `json:"type"`
		ToolUseID         string          `json:"toolUseId"`
		Content           []Content       `json:"content"`
		StructuredContent json.RawMessage `json:"structuredContent,omitempty"`
		IsError           bool            `json:"isError,omitempty"`
		Meta              Meta            `json:"_meta,omitempty"`
	}{"tool_result", c.ToolUseID, content, c.StructuredContent, c.IsError, c.Meta})
}

// SamplingMessage is one message of a sampling conversation. Content holds
// one block or several: text, image, audio, and (where the client declared
// sampling.tools) tool_use and tool_result.
type SamplingMessage struct {
	Role    Role
	Content []Content
	Meta    Meta
}

// MarshalJSON writes a single block as an object and several as an array,
// as the schema allows.
func (m SamplingMessage) MarshalJSON() ([]byte, error) {
	content, err := samplingContentJSON(m.Content, "message")
	if err != nil {
		return nil, err
	}
	return json.Marshal(struct {
		Role    Role `json:"role"`
		Content any  `json:"content"`
		Meta    Meta `json:"_meta,omitempty"`
	}{m.Role, content, m.Meta})
}

// samplingContentJSON is the wire form of a sampling message's or result's
// content: one block as an object and several as an array, as the schema
// allows; what names the carrier in the error for no content at all.
func samplingContentJSON(blocks []Content, what string) (any, error) {
	switch len(blocks) {
	case 0:
		return nil, errors.New("mcp: a sampling " + what + " needs content")
	case 1:
		return blocks[0], nil
	}
	return blocks, nil
}

// UnmarshalJSON decodes a message strictly; content may be one block or an
// array of blocks.
func (m *SamplingMessage) UnmarshalJSON(data []byte) error {
	var w struct {
		Role    *Role           `json:"role"`
		Content json.RawMessage `json:"content"`
		Meta    Meta            `json:"_meta"`
	}
	if err := wirejson.Unmarshal(data, &w); err != nil {
		return err
	}
	if w.Role == nil {
		return errors.New(`sampling message: missing required field "role"`)
	}
	if *w.Role != RoleUser && *w.Role != RoleAssistant {
		return fmt.Errorf(`sampling message: role must be "user" or "assistant", not %q`, *w.Role)
	}
	if len(w.Content) == 0 {
		return errors.New(`sampling message: missing required field "content"`)
	}
	blocks, err := DecodeSamplingContent(w.Content)
	if err != nil {
		return err
	}
	*m = SamplingMessage{Role: *w.Role, Content: blocks, Meta: w.Meta}
	return nil
}

// DecodeSamplingContent decodes the content of a sampling message or
// result: one block or an array of blocks, each text, image, audio,
// tool_use or tool_result.
func DecodeSamplingContent(data []byte) ([]Content, error) {
	if len(data) > 0 && data[0] == '[' {
		raws, err := wirejson.Elements(data)
		if err != nil {
			return nil, fmt.Errorf(`"content": %w`, err)
		}
		if len(raws) == 0 {
			return nil, errors.New(`"content" must hold at least one block`)
		}
		out := make([]Content, len(raws))
		for i, raw := range raws {
			if out[i], err = decodeSamplingBlock(i, raw); err != nil {
				return nil, err
			}
		}
		return out, nil
	}
	c, err := decodeSamplingBlock(0, data)
	if err != nil {
		return nil, err
	}
	return []Content{c}, nil
}

func decodeSamplingBlock(index int, raw []byte) (Content, error) {
	var head struct {
		Type              *string         `json:"type"`
		ID                *string         `json:"id"`
		Name              *string         `json:"name"`
		Input             json.RawMessage `json:"input"`
		ToolUseID         *string         `json:"toolUseId"`
		Content           json.RawMessage `json:"content"`
		StructuredContent json.RawMessage `json:"structuredContent"`
		IsError           bool            `json:"isError"`
		Meta              Meta            `json:"_meta"`
	}
	var tp struct {
		Type *string `json:"type"`
	}
	if err := wirejson.Unmarshal(raw, &tp); err != nil {
		// Not a block by the strict reading (a member name twice, a
		// case variant of "type", invalid JSON): the content decoder,
		// refusing it too, says where and why.
		return DecodeContentBlock(index, raw)
	}
	if tp.Type == nil {
		return nil, &ContentError{Index: index, Field: "type", Reason: "missing required field"}
	}
	switch *tp.Type {
	case "text", "image", "audio":
		return DecodeContentBlock(index, raw)
	case "tool_use", "tool_result":
	default:
		return nil, &ContentError{Index: index, Type: *tp.Type, Field: "type", Reason: "not a sampling content type (text, image, audio, tool_use, tool_result)"}
	}
	if err := wirejson.Unmarshal(raw, &head); err != nil {
		return nil, &ContentError{Index: index, Type: *tp.Type, Reason: "not a valid block: " + err.Error()}
	}
	missing := func(f string) error {
		return &ContentError{Index: index, Type: *tp.Type, Field: f, Reason: "missing required field"}
	}
	if *tp.Type == "tool_use" {
		switch {
		case head.ID == nil:
			return nil, missing("id")
		case head.Name == nil:
			return nil, missing("name")
		case len(head.Input) == 0 || head.Input[0] != '{':
			return nil, &ContentError{Index: index, Type: "tool_use", Field: "input", Reason: "must be an object"}
		}
		return &ToolUseContent{ID: *head.ID, Name: *head.Name, Input: head.Input, Meta: head.Meta}, nil
	}
	if head.ToolUseID == nil {
		return nil, missing("toolUseId")
	}
	if head.Content == nil {
		return nil, missing("content")
	}
	blocks, err := DecodeContent(head.Content)
	if err != nil {
		return nil, &ContentError{Index: index, Type: "tool_result", Field: "content", Reason: err.Error()}
	}
	return &ToolResultContent{ToolUseID: *head.ToolUseID, Content: blocks, StructuredContent: head.StructuredContent, IsError: head.IsError, Meta: head.Meta}, nil
}

// ModelHint names a model family the server would like.
type ModelHint struct {
	Name string `json:"name,omitempty"`
}

// ModelPreferences are the server's wishes for the client's choice of
// model; every priority runs from 0 to 1.
type ModelPreferences struct {
	Hints                []ModelHint `json:"hints,omitempty"`
	CostPriority         *float64    `json:"costPriority,omitempty"`
	SpeedPriority        *float64    `json:"speedPriority,omitempty"`
	IntelligencePriority *float64    `json:"intelligencePriority,omitempty"`
}

// ToolChoice tells the model whether it must, may or must not use tools.
type ToolChoice struct {
	Mode string `json:"mode,omitempty"` // "auto", "required" or "none"
}

// CreateMessageParams are the params of sampling/createMessage.
type CreateMessageParams struct {
	Messages         []SamplingMessage `json:"messages"`
	ModelPreferences *ModelPreferences `json:"modelPreferences,omitempty"`
	SystemPrompt     string            `json:"systemPrompt,omitempty"`
	// IncludeContext is "none", "thisServer" or "allServers" (the latter
	// two only for clients that declared sampling.context).
	IncludeContext string          `json:"includeContext,omitempty"`
	Temperature    *float64        `json:"temperature,omitempty"`
	MaxTokens      int             `json:"maxTokens"`
	StopSequences  []string        `json:"stopSequences,omitempty"`
	Metadata       json.RawMessage `json:"metadata,omitempty"`
	// Tools the model may use; only for clients that declared
	// sampling.tools.
	Tools      []*Tool     `json:"tools,omitempty"`
	ToolChoice *ToolChoice `json:"toolChoice,omitempty"`
	Meta       Meta        `json:"_meta,omitempty"`
}

// CreateMessageResult is the client's answer to sampling/createMessage.
type CreateMessageResult struct {
	Role    Role
	Content []Content
	Model   string
	// StopReason is "endTurn", "stopSequence", "maxTokens", "toolUse" or
	// another the client names.
	StopReason string
	Meta       Meta
}

// MarshalJSON writes one block as an object and several as an array.
func (r *CreateMessageResult) MarshalJSON() ([]byte, error) {
	content, err := samplingContentJSON(r.Content, "result")
	if err != nil {
		return nil, err
	}
	return json.Marshal(struct {
		Role       Role   `json:"role"`
		Content    any    `json:"content"`
		Model      string `json:"model"`
		StopReason string `json:"stopReason,omitempty"`
		Meta       Meta   `json:"_meta,omitempty"`
	}{r.Role, content, r.Model, r.StopReason, r.Meta})
}

// UnmarshalJSON decodes the result strictly; role, content and model are
// required.
func (r *CreateMessageResult) UnmarshalJSON(data []byte) error {
	var w struct {
		Role       *Role           `json:"role"`
		Content    json.RawMessage `json:"content"`
		Model      *string         `json:"model"`
		StopReason string          `json:"stopReason"`
		ResultType ResultType      `json:"resultType"`
		Meta       Meta            `json:"_meta"`
	}
	if err := wirejson.Unmarshal(data, &w); err != nil {
		return err
	}
	switch {
	case w.Role == nil:
		return errors.New(`sampling result: missing required field "role"`)
	case len(w.Content) == 0:
		return errors.New(`sampling result: missing required field "content"`)
	case w.Model == nil:
		return errors.New(`sampling result: missing required field "model"`)
	case *w.Role != RoleUser && *w.Role != RoleAssistant:
		return fmt.Errorf(`sampling result: role must be "user" or "assistant", not %q`, *w.Role)
	}
	blocks, err := DecodeSamplingContent(w.Content)
	if err != nil {
		return err
	}
	*r = CreateMessageResult{Role: *w.Role, Content: blocks, Model: *w.Model, StopReason: w.StopReason, Meta: w.Meta}
	return nil
}
