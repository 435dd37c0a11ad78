package mcp

import (
	"encoding/json"
	"errors"
	"fmt"
)

// A result's kind is its ResultType: "complete" for an ordinary result,
// "input_required" when the server needs answers from the client first
// (2026-07-28 multi round-trip requests), "task" when the work goes on as a
// task. Handlers return *InputRequiredResult or *CreateTaskResult for the
// latter two; the server stamps every other result as complete.

// InputRequest is one thing an input_required result asks of the client: a
// request it would have sent as a server-to-client request in 2025-11-25
// (elicitation/create, sampling/createMessage, roots/list).
type InputRequest struct {
	Method string          `json:"method"`
	Params json.RawMessage `json:"params,omitempty"`
}

// InputRequiredResult asks the client to answer InputRequests and retry the
// request with their answers (params.inputResponses, keyed alike) and
// RequestState echoed unchanged. It exists only in 2026-07-28.
type InputRequiredResult struct {
	InputRequests map[string]InputRequest `json:"inputRequests"`
	// RequestState is opaque to the client: the server's own record of
	// where the request stands, returned byte for byte.
	RequestState string `json:"requestState,omitempty"`
	Meta         Meta   `json:"_meta,omitempty"`
}

// MarshalJSON writes the result with resultType "input_required".
func (r *InputRequiredResult) MarshalJSON() ([]byte, error) {
	if len(r.InputRequests) == 0 {
		return nil, errors.New("mcp: an input_required result needs at least one input request")
	}
	type plain InputRequiredResult
	return json.Marshal(struct {
		ResultType ResultType `json:"resultType"`
		*plain
	}{ResultInputRequired, (*plain)(r)})
}

// InputResponses are a client's answers to an input_required result, keyed
// as the requests were, each the raw result of the corresponding request.
type InputResponses map[string]json.RawMessage

// KindOf returns the ResultType a handler's result has.
func KindOf(result any) ResultType {
	switch result.(type) {
	case *InputRequiredResult:
		return ResultInputRequired
	case *CreateTaskResult:
		return ResultTask
	}
	return ResultComplete
}

// EraEncoder is implemented by results whose wire form differs between the
// two eras; the server encodes them for the era of the request.
type EraEncoder interface {
	AppendEra(b []byte, era Era) ([]byte, error)
}

// orEmpty returns s, or an empty slice when s is nil: a result's required
// array member (a list page's items, a call's content) goes on the wire as
// [] when it holds nothing, never as null or absent.
func orEmpty[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// checkItems checks the items of a decoded list page: the array named field
// is required in method's result, and every item must be present and
// valid, that is carry the members required names.
func checkItems[T any](method, field string, items []*T, valid func(*T) bool, required string) error {
	if items == nil {
		return fmt.Errorf("%s result: missing required field %q", method, field)
	}
	for i, it := range items {
		if it == nil || !valid(it) {
			return fmt.Errorf("%s[%d]: %s are required", field, i, required)
		}
	}
	return nil
}

// decodeEach decodes the elements of a JSON array in order with decode,
// which is given each element's index to name it in an error; the first
// error ends decoding.
func decodeEach[R ~[]byte, T any](raws []R, decode func(i int, raw []byte) (T, error)) ([]T, error) {
	out := make([]T, len(raws))
	for i, raw := range raws {
		v, err := decode(i, raw)
		if err != nil {
			return nil, err
		}
		out[i] = v
	}
	return out, nil
}

// decodeEachAt is decodeEach for an element decoder that does not name the
// element: its error is prefixed with field[i].
func decodeEachAt[R ~[]byte, T any](field string, raws []R, decode func(raw []byte) (T, error)) ([]T, error) {
	return decodeEach(raws, func(i int, raw []byte) (T, error) {
		v, err := decode(raw)
		if err != nil {
			return v, fmt.Errorf("%s[%d]: %w", field, i, err)
		}
		return v, nil
	})
}
