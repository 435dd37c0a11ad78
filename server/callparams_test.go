package server

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/toolwire/toolwire/mcp"
)

// The fast tools/call params scan must read what encoding/json reads.
func TestDecodeCallParamsMatchesEncodingJSON(t *testing.T) {
	for _, in := range []string{
		`{"name":"echo","arguments":{"message":"hi"}}`,
		`{"name":"e\u0063ho","arguments":{}}`,
		`{"Name":"echo"}`,
		`{"name":"echo","arguments":null,"_meta":{"progressToken":7,"x":{"y":[1]}}}`,
		`{"name":"echo","task":{"ttl":5}}`,
		`{"name":"echo","name":"other"}`,
		`{"name":"echo","extra":[1,2,{"a":"b"}]}`,
		`{"arguments":{"a":1}}`,
	} {
		got, gerr := decodeCallParams(json.RawMessage(in))
		var want mcp.CallToolParams
		werr := json.Unmarshal([]byte(in), &want)
		if string(want.Arguments) == "null" {
			want.Arguments = nil
		}
		if (gerr != nil) != (werr != nil) {
			t.Errorf("%s: error %v vs %v", in, gerr, werr)
			continue
		}
		if got.Name != want.Name || string(got.Arguments) != string(want.Arguments) ||
			!reflect.DeepEqual(got.Task, want.Task) || !reflect.DeepEqual(got.Meta, want.Meta) {
			t.Errorf("%s:\n got %+v\nwant %+v", in, got, want)
		}
	}
	if _, err := decodeCallParams(nil); err == nil {
		t.Error("missing params accepted")
	}
}
