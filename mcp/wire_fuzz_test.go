package mcp_test

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/toolwire/toolwire/internal/wirejson"
	"github.com/toolwire/toolwire/mcp"
)

// wireRoundTrip checks that what a decoder accepts is strictly valid JSON and
// that its value re-encodes to bytes the decoder accepts and re-encodes the
// same way.
func wireRoundTrip[T any](t *testing.T, data []byte, decode func([]byte) (T, error), encode func(T) ([]byte, error)) {
	t.Helper()
	v, err := decode(data)
	if err != nil {
		return
	}
	if !jsontext.Value(data).IsValid() {
		t.Fatalf("%q: accepted JSON the strict decoder refuses", data)
	}
	out, err := encode(v)
	if err != nil {
		// A decoded value that cannot be sent (say an empty content list)
		// must not have been accepted.
		t.Fatalf("%q: decoded value does not encode: %v", data, err)
	}
	again, err := decode(out)
	if err != nil {
		t.Fatalf("%q: re-encoded as %s, which is refused: %v", data, out, err)
	}
	if out2, _ := encode(again); string(out2) != string(out) {
		t.Fatalf("%q: %s decodes and re-encodes as %s", data, out, out2)
	}
}

func jsonOf[T any](v T) ([]byte, error) { return json.Marshal(v) }

// jsonInto decodes b into a new T with json.Unmarshal, as a client decodes
// a result: wireRoundTrip's decoder for T.
func jsonInto[T any](b []byte) (*T, error) {
	var v T
	return &v, json.Unmarshal(b, &v)
}

// FuzzDecodeWireResults runs the decoders of the results a client receives
// and the answers a server receives (sampling, elicitation, completion,
// resources) over the same input.
func FuzzDecodeWireResults(f *testing.F) {
	for _, s := range []string{
		`{"role":"assistant","content":{"type":"text","text":"hi"},"model":"m","stopReason":"endTurn"}`,
		`{"role":"assistant","content":[{"type":"tool_use","id":"1","name":"t","input":{"a":1}}],"model":"m"}`,
		`{"role":"user","content":[{"type":"tool_result","toolUseId":"1","content":[{"type":"text","text":"x"}],"isError":true}],"model":"m"}`,
		`{"action":"accept","content":{"name":"Ada","age":30,"ok":true,"tags":["a","b"]}}`,
		`{"action":"decline"}`, `{"action":"maybe"}`, `{"action":"accept","content":{"x":{"y":1}}}`,
		`{"completion":{"values":["a","b"],"total":2,"hasMore":false}}`, `{"completion":{}}`,
		`{"contents":[{"uri":"a://b","text":"t"},{"uri":"a://c","blob":"AQI=","mimeType":"x/y"}],"ttlMs":0,"cacheScope":"private"}`,
		`{"resources":[{"uri":"a://b","name":"b","size":3}],"nextCursor":"c"}`,
		`{"resourceTemplates":[{"uriTemplate":"a://{x}","name":"x"}]}`,
		`{"ref":{"type":"ref/prompt","name":"p"},"argument":{"name":"a","value":"v"},"context":{"arguments":{"b":"c"}}}`,
		`{"role":"user","content":{"type":"text","text":"a","text":"b"},"model":"m"}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		wireRoundTrip(t, data, jsonInto[mcp.CreateMessageResult], jsonOf)
		wireRoundTrip(t, data, jsonInto[mcp.ElicitResult], jsonOf)
		wireRoundTrip(t, data, jsonInto[mcp.CompleteResult], jsonOf)
		wireRoundTrip(t, data, jsonInto[mcp.ReadResourceResult], jsonOf)
		wireRoundTrip(t, data, jsonInto[mcp.ListResourcesResult], jsonOf)
		wireRoundTrip(t, data, jsonInto[mcp.ListResourceTemplatesResult], jsonOf)
		// Servers decode params with the exact decoder; a reference is
		// required there.
		wireRoundTrip(t, data, func(b []byte) (*mcp.CompleteParams, error) {
			var v mcp.CompleteParams
			if err := wirejson.Unmarshal(b, &v); err != nil {
				return nil, err
			}
			if v.Ref.Type == "" {
				return nil, errors.New("no ref")
			}
			return &v, nil
		}, jsonOf)
		// The elicitation schema check never panics, whatever it is given.
		_ = mcp.ValidateElicitationSchema(data)
	})
}
