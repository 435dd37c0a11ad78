package server

import (
	"encoding/json"
	"testing"

	"github.com/toolwire/toolwire/internal/wirejson"
)

// The fast tools/call params scan must read exactly what the exact decoder
// reads: the same members, case-sensitively, and the same refusals.
func TestDecodeCallParamsMatchesExactDecoder(t *testing.T) {
	for _, in := range []string{
		`{"name":"echo","arguments":{"message":"hi"}}`,
		`{"name":"e\u0063ho","arguments":{}}`,
		`{"Name":"echo"}`,
		`{"name":"echo","NAME":"evil"}`,
		`{"name":"echo","arguments":null,"_meta":{"progressToken":7,"x":{"y":[1]}}}`,
		`{"name":"echo","task":{"ttl":5}}`,
		`{"name":"echo","name":"other"}`,
		`{"name":"echo","arguments":{"a":1},"arguments":{"a":2}}`,
		`{"name":"echo","extra":[1,2,{"a":"b"}]}`,
		`{"arguments":{"a":1}}`,
	} {
		got, gerr := decodeCallParams(json.RawMessage(in))
		var want struct {
			Name      string          `json:"name"`
			Arguments json.RawMessage `json:"arguments"`
			Task      json.RawMessage `json:"task"`
			Meta      json.RawMessage `json:"_meta"`
		}
		werr := wirejson.Unmarshal([]byte(in), &want)
		if string(want.Arguments) == "null" {
			want.Arguments = nil
		}
		if (gerr != nil) != (werr != nil) {
			t.Errorf("%s: error %v vs %v", in, gerr, werr)
			continue
		}
		if gerr != nil {
			continue
		}
		if string(got.arguments) == "null" {
			got.arguments = nil
		}
		if got.name != want.Name || string(got.arguments) != string(want.Arguments) ||
			string(got.task) != string(want.Task) || string(got.meta) != string(want.Meta) {
			t.Errorf("%s:\n got %+v\nwant %+v", in, got, want)
		}
	}
	if _, err := decodeCallParams(nil); err == nil {
		t.Error("missing params accepted")
	}
}
