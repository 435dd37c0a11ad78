package otlpjson

import (
	"encoding/hex"
	"math"
	"strconv"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/sdk/instrumentation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
)

// The types below are the OTLP ExportTraceServiceRequest in the protobuf
// JSON mapping OTLP/HTTP uses (opentelemetry-proto's
// collector/trace/v1/trace_service.proto): lowerCamelCase field names,
// trace and span ids in hex, 64-bit integers as decimal strings, enums as
// numbers.

type exportRequest struct {
	ResourceSpans []resourceSpans `json:"resourceSpans"`
}

type resourceSpans struct {
	Resource   jsonResource `json:"resource"`
	ScopeSpans []scopeSpans `json:"scopeSpans"`
	SchemaURL  string       `json:"schemaUrl,omitempty"`
}

type jsonResource struct {
	Attributes []keyValue `json:"attributes,omitempty"`
}

type scopeSpans struct {
	Scope     jsonScope  `json:"scope"`
	Spans     []jsonSpan `json:"spans"`
	SchemaURL string     `json:"schemaUrl,omitempty"`
}

type jsonScope struct {
	Name       string     `json:"name,omitempty"`
	Version    string     `json:"version,omitempty"`
	Attributes []keyValue `json:"attributes,omitempty"`
}

type jsonSpan struct {
	TraceID                string      `json:"traceId"`
	SpanID                 string      `json:"spanId"`
	TraceState             string      `json:"traceState,omitempty"`
	ParentSpanID           string      `json:"parentSpanId,omitempty"`
	Flags                  uint32      `json:"flags,omitempty"`
	Name                   string      `json:"name"`
	Kind                   int         `json:"kind,omitempty"`
	StartTimeUnixNano      string      `json:"startTimeUnixNano"`
	EndTimeUnixNano        string      `json:"endTimeUnixNano"`
	Attributes             []keyValue  `json:"attributes,omitempty"`
	DroppedAttributesCount int         `json:"droppedAttributesCount,omitempty"`
	Events                 []jsonEvent `json:"events,omitempty"`
	DroppedEventsCount     int         `json:"droppedEventsCount,omitempty"`
	Links                  []jsonLink  `json:"links,omitempty"`
	DroppedLinksCount      int         `json:"droppedLinksCount,omitempty"`
	Status                 *jsonStatus `json:"status,omitempty"`
}

type jsonEvent struct {
	TimeUnixNano           string     `json:"timeUnixNano"`
	Name                   string     `json:"name"`
	Attributes             []keyValue `json:"attributes,omitempty"`
	DroppedAttributesCount int        `json:"droppedAttributesCount,omitempty"`
}

type jsonLink struct {
	TraceID                string     `json:"traceId"`
	SpanID                 string     `json:"spanId"`
	TraceState             string     `json:"traceState,omitempty"`
	Attributes             []keyValue `json:"attributes,omitempty"`
	DroppedAttributesCount int        `json:"droppedAttributesCount,omitempty"`
	Flags                  uint32     `json:"flags,omitempty"`
}

type jsonStatus struct {
	Message string `json:"message,omitempty"`
	Code    int    `json:"code,omitempty"`
}

type keyValue struct {
	Key   string   `json:"key"`
	Value anyValue `json:"value"`
}

// anyValue is OTLP's AnyValue: exactly one field set (none for an empty
// value). DoubleValue is a number, or the strings "NaN", "Infinity" and
// "-Infinity", which JSON numbers cannot say.
type anyValue struct {
	StringValue *string     `json:"stringValue,omitempty"`
	BoolValue   *bool       `json:"boolValue,omitempty"`
	IntValue    string      `json:"intValue,omitempty"`
	DoubleValue any         `json:"doubleValue,omitempty"`
	ArrayValue  *arrayValue `json:"arrayValue,omitempty"`
	KvlistValue *kvList     `json:"kvlistValue,omitempty"`
	BytesValue  []byte      `json:"bytesValue,omitempty"`
}

type arrayValue struct {
	Values []anyValue `json:"values"`
}

type kvList struct {
	Values []keyValue `json:"values"`
}

// OTLP span flags: the low byte is the W3C trace flags; these two say
// whether the parent (or a link's span) was remote.
const (
	flagHasIsRemote = 0x100
	flagIsRemote    = 0x200
)

// request groups spans by resource and instrumentation scope, in the
// order they come, as one export request.
func request(spans []sdktrace.ReadOnlySpan) exportRequest {
	type scopeKey struct {
		res   *resource.Resource
		scope instrumentation.Scope
	}
	var req exportRequest
	resIndex := map[*resource.Resource]int{}
	scopeIndex := map[scopeKey]int{}
	for _, s := range spans {
		res := s.Resource()
		ri, ok := resIndex[res]
		if !ok {
			ri = len(req.ResourceSpans)
			resIndex[res] = ri
			rs := resourceSpans{}
			if res != nil {
				rs.Resource.Attributes = keyValues(res.Attributes())
				rs.SchemaURL = res.SchemaURL()
			}
			req.ResourceSpans = append(req.ResourceSpans, rs)
		}
		rs := &req.ResourceSpans[ri]
		sc := s.InstrumentationScope()
		k := scopeKey{res, instrumentation.Scope{Name: sc.Name, Version: sc.Version, SchemaURL: sc.SchemaURL}}
		si, ok := scopeIndex[k]
		if !ok {
			si = len(rs.ScopeSpans)
			scopeIndex[k] = si
			rs.ScopeSpans = append(rs.ScopeSpans, scopeSpans{
				Scope:     jsonScope{Name: sc.Name, Version: sc.Version, Attributes: keyValues(sc.Attributes.ToSlice())},
				SchemaURL: sc.SchemaURL,
			})
		}
		rs.ScopeSpans[si].Spans = append(rs.ScopeSpans[si].Spans, span(s))
	}
	return req
}

func span(s sdktrace.ReadOnlySpan) jsonSpan {
	sc := s.SpanContext()
	js := jsonSpan{
		TraceID:                traceID(sc.TraceID()),
		SpanID:                 spanID(sc.SpanID()),
		TraceState:             sc.TraceState().String(),
		Flags:                  uint32(sc.TraceFlags()) | flagHasIsRemote,
		Name:                   s.Name(),
		Kind:                   int(s.SpanKind()), // OTLP numbers the kinds as trace.SpanKind does
		StartTimeUnixNano:      nanos(s.StartTime()),
		EndTimeUnixNano:        nanos(s.EndTime()),
		Attributes:             keyValues(s.Attributes()),
		DroppedAttributesCount: s.DroppedAttributes(),
		DroppedEventsCount:     s.DroppedEvents(),
		DroppedLinksCount:      s.DroppedLinks(),
	}
	if p := s.Parent(); p.SpanID().IsValid() {
		js.ParentSpanID = spanID(p.SpanID())
		if p.IsRemote() {
			js.Flags |= flagIsRemote
		}
	}
	for _, e := range s.Events() {
		js.Events = append(js.Events, jsonEvent{
			TimeUnixNano: nanos(e.Time), Name: e.Name,
			Attributes: keyValues(e.Attributes), DroppedAttributesCount: e.DroppedAttributeCount,
		})
	}
	for _, l := range s.Links() {
		flags := uint32(l.SpanContext.TraceFlags()) | flagHasIsRemote
		if l.SpanContext.IsRemote() {
			flags |= flagIsRemote
		}
		js.Links = append(js.Links, jsonLink{
			TraceID: traceID(l.SpanContext.TraceID()), SpanID: spanID(l.SpanContext.SpanID()),
			TraceState: l.SpanContext.TraceState().String(), Attributes: keyValues(l.Attributes),
			DroppedAttributesCount: l.DroppedAttributeCount, Flags: flags,
		})
	}
	if st := s.Status(); st.Code != codes.Unset || st.Description != "" {
		js.Status = &jsonStatus{Message: st.Description, Code: statusCode(st.Code)}
	}
	return js
}

// statusCode maps the SDK's status codes (Unset 0, Error 1, Ok 2) to
// OTLP's (Unset 0, Ok 1, Error 2).
func statusCode(c codes.Code) int {
	switch c {
	case codes.Ok:
		return 1
	case codes.Error:
		return 2
	}
	return 0
}

func traceID(id trace.TraceID) string { return hex.EncodeToString(id[:]) }

func spanID(id trace.SpanID) string { return hex.EncodeToString(id[:]) }

// nanos is a time as OTLP's fixed64 nanoseconds since the Unix epoch, a
// decimal string in JSON; the zero time is 0.
func nanos(t time.Time) string {
	if t.IsZero() {
		return "0"
	}
	return strconv.FormatInt(t.UnixNano(), 10)
}

func keyValues(kvs []attribute.KeyValue) []keyValue {
	if len(kvs) == 0 {
		return nil
	}
	out := make([]keyValue, len(kvs))
	for i, kv := range kvs {
		out[i] = keyValue{Key: string(kv.Key), Value: value(kv.Value)}
	}
	return out
}

func value(v attribute.Value) anyValue {
	switch v.Type() {
	case attribute.BOOL:
		b := v.AsBool()
		return anyValue{BoolValue: &b}
	case attribute.INT64:
		return anyValue{IntValue: strconv.FormatInt(v.AsInt64(), 10)}
	case attribute.FLOAT64:
		return anyValue{DoubleValue: double(v.AsFloat64())}
	case attribute.STRING:
		s := v.AsString()
		return anyValue{StringValue: &s}
	case attribute.BOOLSLICE:
		return array(v.AsBoolSlice(), attribute.BoolValue)
	case attribute.INT64SLICE:
		return array(v.AsInt64Slice(), attribute.Int64Value)
	case attribute.FLOAT64SLICE:
		return array(v.AsFloat64Slice(), attribute.Float64Value)
	case attribute.STRINGSLICE:
		return array(v.AsStringSlice(), attribute.StringValue)
	case attribute.SLICE:
		return array(v.AsSlice(), func(v attribute.Value) attribute.Value { return v })
	case attribute.BYTESLICE:
		return anyValue{BytesValue: v.AsByteSlice()}
	case attribute.MAP:
		return anyValue{KvlistValue: &kvList{Values: keyValues(v.AsMap())}}
	case attribute.EMPTY:
		return anyValue{}
	}
	s := v.String()
	return anyValue{StringValue: &s}
}

func array[T any](elems []T, wrap func(T) attribute.Value) anyValue {
	vals := make([]anyValue, len(elems))
	for i, e := range elems {
		vals[i] = value(wrap(e))
	}
	return anyValue{ArrayValue: &arrayValue{Values: vals}}
}

// double is a float64 as the protobuf JSON mapping writes it. A zero is
// still written (a non-nil interface is not empty), so the value keeps its
// type.
func double(f float64) any {
	switch {
	case math.IsNaN(f):
		return "NaN"
	case math.IsInf(f, 1):
		return "Infinity"
	case math.IsInf(f, -1):
		return "-Infinity"
	}
	return f
}
