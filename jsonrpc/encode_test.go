package jsonrpc

import (
	"encoding/json"
	"testing"
	"unicode/utf8"
)

// specialStrings hold characters JSON must escape, characters Go's
// strconv.Quote escapes its own way (\a, \v, \x7f, \U000e0001), and
// characters either writes as they are.
var specialStrings = []string{
	"a\x00b", "\x01", "\a\v", "\x7f", "\U000E0001", "\u00ad", "\ufeff",
	"q\"\\/\b\f\n\r\t", "é\u2028\u2029", "\U0001F600", "", "plain-ASCII_id.1",
}

// An id is echoed as a JSON string that decodes to the id itself, whatever
// characters it holds, in every form a reply writes it.
func TestEncodeStringIDsAsJSON(t *testing.T) {
	for _, s := range specialStrings {
		id := StringID(s)
		mj, _ := id.MarshalJSON()
		for form, out := range map[string]string{"MarshalJSON": string(mj), "String": id.String()} {
			var back ID
			if err := json.Unmarshal([]byte(out), &back); err != nil || back != id {
				t.Errorf("%q: %s wrote %s, which reads as %s (%v)", s, form, out, back, err)
			}
		}
		head := string(AppendResultHead(nil, id)) + `{}}`
		if _, got, err := Decode([]byte(head)); err != nil || got != id {
			t.Errorf("%q: AppendResultHead wrote %s, which reads as %s (%v)", s, head, got, err)
		}
		for _, m := range []Message{
			&Response{ID: id, Result: json.RawMessage(`{}`)},
			&Response{ID: id, Error: NewError(CodeMethodNotFound, "method not found")},
			&Request{ID: id, Method: "ping"},
		} {
			b, back, got, derr := reread(t, m)
			if derr != nil {
				t.Errorf("%q: %T encoded as %s: %v", s, m, b, derr)
				continue
			}
			if got != id {
				t.Errorf("%q: %T encoded as %s, whose id reads as %s", s, back, b, got)
			}
		}
	}
	// Exact spellings: JSON's, not Go's.
	for s, want := range map[string]string{
		"a\x00b":      `"a\u0000b"`,
		"\a\v":        `"\u0007\u000b"`,
		"\x7f":        "\"\x7f\"",
		"\U000E0001":  "\"\U000E0001\"",
		"x\u2028":     `"x\u2028"`,
		"\xff":        `"\ufffd"`, // not UTF-8: JSON has no spelling for the byte
		"tab\there\n": `"tab\there\n"`,
	} {
		if got := string(AppendResultHead(nil, StringID(s))); got != `{"jsonrpc":"2.0","id":`+want+`,"result":` {
			t.Errorf("%q: %s", s, got)
		}
	}
}

// reread encodes m and decodes the bytes again, as the peer reads what was
// sent, returning the bytes and what Decode made of them. Encoding must
// succeed and write valid JSON, or the test fails.
func reread(t testing.TB, m Message) ([]byte, Message, ID, *Error) {
	t.Helper()
	b, err := Encode(m)
	if err != nil {
		t.Fatal(err)
	}
	if !json.Valid(b) {
		t.Fatalf("%T encoded as invalid JSON: %s", m, b)
	}
	back, id, derr := Decode(b)
	return b, back, id, derr
}

// Method names are JSON strings too: requests and notifications carrying
// any method read back with that method.
func TestEncodeMethodsAsJSON(t *testing.T) {
	for _, s := range specialStrings {
		if s == "" {
			continue // an empty method is refused on reading
		}
		for _, m := range []Message{&Request{ID: Int64ID(1), Method: s}, &Notification{Method: s}} {
			b, back, _, derr := reread(t, m)
			if derr != nil {
				t.Errorf("%q: %T encoded as %s: %v", s, m, b, derr)
				continue
			}
			var method string
			switch back := back.(type) {
			case *Request:
				method = back.Method
			case *Notification:
				method = back.Method
			}
			if method != s {
				t.Errorf("%q: %T encoded as %s, whose method reads as %q", s, m, b, method)
			}
		}
	}
}

// Writing an id or a method into a buffer with room allocates nothing, in
// the common case and in the escaped one alike.
func TestAppendDoesNotAllocate(t *testing.T) {
	buf := make([]byte, 0, 256)
	for _, m := range []Message{
		&Response{ID: Int64ID(42), Result: json.RawMessage(`{}`)},
		&Response{ID: StringID("req-7f3a9c21"), Result: json.RawMessage(`{}`)},
		&Response{ID: StringID("a\x00b\u2028"), Result: json.RawMessage(`{}`)},
		&Request{ID: StringID("srv-1"), Method: "sampling/createMessage", Params: json.RawMessage(`{}`)},
		&Notification{Method: "notifications/progress"},
	} {
		if n := testing.AllocsPerRun(100, func() { buf, _ = Append(buf[:0], m) }); n != 0 {
			t.Errorf("%T %s: %v allocations, want 0", m, buf, n)
		}
	}
	// MarshalJSON and String allocate only what they return (at most once).
	for _, id := range []ID{Int64ID(-9223372036854775808), StringID("req-7f3a9c21")} {
		if n := testing.AllocsPerRun(100, func() { sinkBytes, _ = id.MarshalJSON() }); n > 1 {
			t.Errorf("%s: MarshalJSON allocates %v times, want 1", id, n)
		}
		if n := testing.AllocsPerRun(100, func() { sinkString = id.String() }); n > 1 {
			t.Errorf("%s: String allocates %v times, want 1", id, n)
		}
	}
}

var (
	sinkBytes  []byte
	sinkString string
)

// FuzzEncodeRoundTrip: any id and method of valid UTF-8 read back as
// themselves from the encoded request, response and notification.
func FuzzEncodeRoundTrip(f *testing.F) {
	for _, s := range specialStrings {
		f.Add(s, "tools/call")
	}
	f.Fuzz(func(t *testing.T, id, method string) {
		if method == "" || !utf8.ValidString(id) || !utf8.ValidString(method) {
			return // an empty method is refused; other bytes than UTF-8 have no JSON spelling
		}
		for _, m := range []Message{
			&Request{ID: StringID(id), Method: method},
			&Notification{Method: method},
			&Response{ID: StringID(id), Result: json.RawMessage(`{}`)},
		} {
			b, back, gotID, derr := reread(t, m)
			if derr != nil {
				t.Fatalf("%T encoded as %s: %v", m, b, derr)
			}
			switch back := back.(type) {
			case *Request:
				if back.ID != StringID(id) || back.Method != method {
					t.Fatalf("%s read as %s %q", b, back.ID, back.Method)
				}
			case *Notification:
				if back.Method != method {
					t.Fatalf("%s read as %q", b, back.Method)
				}
			case *Response:
				if gotID != StringID(id) {
					t.Fatalf("%s read as %s", b, gotID)
				}
			}
		}
	})
}

// The encoders are on every reply's path. The common case is an integer or
// plain ASCII id and a plain method name; ids with characters JSON escapes
// are rare but must not cost much more.
func BenchmarkEncode(b *testing.B) {
	result := json.RawMessage(`{"content":[{"type":"text","text":"hello"}]}`)
	for _, c := range []struct {
		name string
		msg  Message
	}{
		{"response/int id", &Response{ID: Int64ID(42), Result: result}},
		{"response/string id", &Response{ID: StringID("req-7f3a9c21"), Result: result}},
		{"response/escaped id", &Response{ID: StringID("a\x00b\"c\u2028é"), Result: result}},
		{"error/int id", &Response{ID: Int64ID(42), Error: NewError(CodeInvalidParams, "bad")}},
		{"request", &Request{ID: StringID("srv-12"), Method: "sampling/createMessage", Params: json.RawMessage(`{"maxTokens":10}`)}},
		{"notification", &Notification{Method: "notifications/progress", Params: json.RawMessage(`{"progressToken":1,"progress":1}`)}},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			buf := make([]byte, 0, 256)
			for b.Loop() {
				var err error
				if buf, err = Append(buf[:0], c.msg); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
	b.Run("result head", func(b *testing.B) {
		b.ReportAllocs()
		buf := make([]byte, 0, 64)
		id := StringID("req-7f3a9c21")
		for b.Loop() {
			buf = AppendResultHead(buf[:0], id)
		}
	})
	b.Run("ID.String", func(b *testing.B) {
		b.ReportAllocs()
		id := StringID("req-7f3a9c21")
		for b.Loop() {
			sinkString = id.String()
		}
	})
	b.Run("ID.MarshalJSON", func(b *testing.B) {
		b.ReportAllocs()
		id := StringID("req-7f3a9c21")
		for b.Loop() {
			sinkBytes, _ = id.MarshalJSON()
		}
	})
}
