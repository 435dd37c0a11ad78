package otc

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/toolwire/toolwire/internal/wirejson"
	"strings"
)

// Dialect is the spelling of the protocol on the wire: Open Tool Calling 1.0
// or its renamed successor, the Open eXecution Protocol 1.0.
type Dialect int

// The two spellings. OTC is the default on output.
const (
	OTC Dialect = iota
	OXP
)

// SchemaURI returns the "$schema" value the dialect writes.
func (d Dialect) SchemaURI() string {
	if d == OXP {
		return "urn:oxp:1.0"
	}
	return "otc://1.0"
}

func (d Dialect) String() string {
	if d == OXP {
		return "OXP"
	}
	return "OTC"
}

// ParseSchemaURI reads a "$schema" value: "otc://1.x" is OTC, "urn:oxp:1.x"
// is OXP, "" and any other URI are OTC (absent means latest). A major
// version other than 1 is an error.
func ParseSchemaURI(s string) (Dialect, error) {
	var d Dialect
	var ver string
	switch {
	case s == "":
		return OTC, nil
	case strings.HasPrefix(s, "otc://"):
		ver = strings.TrimPrefix(s, "otc://")
	case strings.HasPrefix(s, "urn:oxp:"):
		d, ver = OXP, strings.TrimPrefix(s, "urn:oxp:")
	case strings.Contains(s, ":"):
		return OTC, nil // a URI naming a schema document: latest
	default:
		return OTC, fmt.Errorf(`"$schema" %q is neither a URI, otc://<major>.<minor> nor urn:oxp:<major>.<minor>`, s)
	}
	major, _, ok := strings.Cut(ver, ".")
	if !ok {
		major = ver
	}
	if major != "1" {
		return d, fmt.Errorf(`"$schema" %q: protocol version %q is not supported (this server speaks 1.0)`, s, ver)
	}
	return d, nil
}

// ToolDefinition describes one tool as GET /tools lists it.
type ToolDefinition struct {
	ID          string `json:"id"`
	Name        string `json:"name"`
	Description string `json:"description"`
	Version     string `json:"version"`
	// InputSchema is the JSON Schema of the input object, without the OTC
	// {"parameters": ...} wrapper: the wrapper is a matter of Dialect and
	// is added and removed on the wire.
	InputSchema json.RawMessage `json:"-"`
	// OutputSchema is the JSON Schema of the value: {} for any value, null
	// for a tool with no output.
	OutputSchema json.RawMessage `json:"output_schema"`
	Requirements *Requirements   `json:"requirements,omitempty"`
}

// Requirements are what a tool needs in the call's context.
type Requirements struct {
	Authorization []AuthRequirement   `json:"authorization,omitempty"`
	Secrets       []SecretRequirement `json:"secrets,omitempty"`
	UserID        bool                `json:"user_id,omitempty"`
}

// AuthRequirement names an authorization provider a tool needs.
type AuthRequirement struct {
	ID     string `json:"id"`
	OAuth2 *struct {
		Scopes []string `json:"scopes,omitempty"`
	} `json:"oauth2,omitempty"`
}

// SecretRequirement names a secret a tool needs.
type SecretRequirement struct {
	ID string `json:"id"`
}

// definitionWire is ToolDefinition with its input_schema as it travels.
type definitionWire struct {
	ID           string          `json:"id"`
	Name         string          `json:"name"`
	Description  string          `json:"description"`
	Version      string          `json:"version"`
	InputSchema  json.RawMessage `json:"input_schema"`
	OutputSchema json.RawMessage `json:"output_schema"`
	Requirements *Requirements   `json:"requirements,omitempty"`
}

// encode writes the definition in dialect d: OTC wraps the input schema in
// {"parameters": ...}, OXP does not.
func (t *ToolDefinition) encode(d Dialect) definitionWire {
	in := t.InputSchema
	if len(in) == 0 {
		in = json.RawMessage(`{"type":"object"}`)
	}
	if d == OTC {
		in = append(append(json.RawMessage(`{"parameters":`), in...), '}')
	}
	out := t.OutputSchema
	if len(out) == 0 {
		out = json.RawMessage("null")
	}
	return definitionWire{ID: t.ID, Name: t.Name, Description: t.Description, Version: t.Version,
		InputSchema: in, OutputSchema: out, Requirements: t.Requirements}
}

// UnmarshalJSON accepts input_schema with or without the OTC "parameters"
// wrapper. A schema whose only member is "parameters", holding an object, is
// taken as the wrapper.
func (t *ToolDefinition) UnmarshalJSON(data []byte) error {
	var w definitionWire
	if err := wirejson.Unmarshal(data, &w); err != nil {
		return err
	}
	in := w.InputSchema
	if len(in) > 0 && !bytes.Equal(in, []byte("null")) {
		var m map[string]json.RawMessage
		if err := wirejson.Unmarshal(in, &m); err != nil {
			return fmt.Errorf("tool %q: input_schema must be an object: %w", w.ID, err)
		}
		if p, ok := m["parameters"]; ok && len(m) == 1 && bytes.HasPrefix(bytes.TrimSpace(p), []byte("{")) {
			in = p
		}
	} else {
		in = nil
	}
	*t = ToolDefinition{ID: w.ID, Name: w.Name, Description: w.Description, Version: w.Version,
		InputSchema: in, OutputSchema: w.OutputSchema, Requirements: w.Requirements}
	return nil
}

// MarshalJSON writes the OTC spelling.
func (t ToolDefinition) MarshalJSON() ([]byte, error) {
	return json.Marshal(t.encode(OTC))
}

// ListToolsResponse is the body of GET /tools. OTC names the list "tools",
// OXP "items"; both are read.
type ListToolsResponse struct {
	Schema string           `json:"$schema,omitempty"`
	Tools  []ToolDefinition `json:"tools"`
}

// UnmarshalJSON reads "tools" or "items".
func (r *ListToolsResponse) UnmarshalJSON(data []byte) error {
	var w struct {
		Schema string           `json:"$schema"`
		Tools  []ToolDefinition `json:"tools"`
		Items  []ToolDefinition `json:"items"`
	}
	if err := wirejson.Unmarshal(data, &w); err != nil {
		return err
	}
	r.Schema, r.Tools = w.Schema, w.Tools
	if r.Tools == nil {
		r.Tools = w.Items
	}
	return nil
}

// CallToolRequest is one tool call.
type CallToolRequest struct {
	// ToolID is Toolkit.Tool, optionally @X or @X.Y.Z.
	ToolID string `json:"tool_id"`
	// CallID is an idempotency key; the server generates one when absent.
	CallID  string          `json:"call_id,omitempty"`
	TraceID string          `json:"trace_id,omitempty"`
	Input   json.RawMessage `json:"input,omitempty"`
	Context *CallContext    `json:"context,omitempty"`
}

// CallContext carries what a tool's requirements ask for.
type CallContext struct {
	Authorization []struct {
		ID    string `json:"id"`
		Token string `json:"token"`
	} `json:"authorization,omitempty"`
	Secrets []struct {
		ID    string `json:"id"`
		Value string `json:"value"`
	} `json:"secrets,omitempty"`
	UserID string `json:"user_id,omitempty"`
}

// CallToolResponse is the outcome of one call: success with a value (null
// for no output), or failure with an error. Servers answer it with 200 even
// when the tool failed.
type CallToolResponse struct {
	CallID   string   `json:"call_id"`
	Duration *float64 `json:"duration,omitempty"`
	Success  bool     `json:"success"`
	// Value is the tool's output when Success; JSON null when it has none.
	Value json.RawMessage `json:"-"`
	Error *ToolError      `json:"-"`
}

// ToolError is a failed call: a user-facing message and guidance.
type ToolError struct {
	Message                 string `json:"message"`
	DeveloperMessage        string `json:"developer_message,omitempty"`
	CanRetry                bool   `json:"can_retry,omitempty"`
	AdditionalPromptContent string `json:"additional_prompt_content,omitempty"`
	RetryAfterMs            *int64 `json:"retry_after_ms,omitempty"`
}

func (e *ToolError) Error() string {
	if e.DeveloperMessage != "" {
		return e.Message + " (" + e.DeveloperMessage + ")"
	}
	return e.Message
}

// MarshalJSON writes value on success and error on failure, never both: the
// two shapes the CallToolResponse schema allows.
func (r CallToolResponse) MarshalJSON() ([]byte, error) {
	type base struct {
		CallID   string   `json:"call_id"`
		Duration *float64 `json:"duration,omitempty"`
		Success  bool     `json:"success"`
	}
	b := base{r.CallID, r.Duration, r.Success}
	if r.Success {
		v := r.Value
		if len(v) == 0 {
			v = json.RawMessage("null")
		}
		return json.Marshal(struct {
			base
			Value json.RawMessage `json:"value"`
		}{b, v})
	}
	e := r.Error
	if e == nil {
		e = &ToolError{Message: "the tool call failed"}
	}
	return json.Marshal(struct {
		base
		Error *ToolError `json:"error"`
	}{b, e})
}

// UnmarshalJSON reads a response, checking the rules the schema states:
// call_id and success required, error exactly when success is false.
func (r *CallToolResponse) UnmarshalJSON(data []byte) error {
	var w struct {
		CallID   *string         `json:"call_id"`
		Duration *float64        `json:"duration"`
		Success  *bool           `json:"success"`
		Value    json.RawMessage `json:"value"`
		Error    *ToolError      `json:"error"`
	}
	if err := wirejson.Unmarshal(data, &w); err != nil {
		return err
	}
	switch {
	case w.CallID == nil:
		return errors.New(`CallToolResponse: "call_id" is required`)
	case w.Success == nil:
		return errors.New(`CallToolResponse: "success" is required`)
	case *w.Success && w.Error != nil:
		return errors.New(`CallToolResponse: "success" is true but "error" is present`)
	case !*w.Success && w.Error == nil:
		return errors.New(`CallToolResponse: "success" is false but "error" is missing`)
	case !*w.Success && w.Value != nil:
		return errors.New(`CallToolResponse: "success" is false but "value" is present`)
	}
	v := w.Value
	if *w.Success && len(v) == 0 {
		v = json.RawMessage("null")
	}
	*r = CallToolResponse{CallID: *w.CallID, Duration: w.Duration, Success: *w.Success, Value: v, Error: w.Error}
	return nil
}

// Err returns the call's failure as a Go error (*ToolError), nil on success.
func (r *CallToolResponse) Err() error {
	if r.Success {
		return nil
	}
	if r.Error == nil {
		return &ToolError{Message: "the tool call failed"}
	}
	return r.Error
}

// ServerErrorResponse is the body of a 400 (and of 401, 404, 405, 413, 500,
// 502 from this server): the call was not executed.
type ServerErrorResponse struct {
	Schema           string `json:"$schema,omitempty"`
	Message          string `json:"message"`
	DeveloperMessage string `json:"developer_message,omitempty"`
}

// ValidationErrorResponse is the body of a 422: the input fails the tool's
// input schema. ParameterErrors maps a top-level parameter to what is wrong.
type ValidationErrorResponse struct {
	Schema          string            `json:"$schema,omitempty"`
	Message         string            `json:"message"`
	ParameterErrors map[string]string `json:"parameter_errors,omitempty"`
}
