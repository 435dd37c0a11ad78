package stdio_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"runtime"
	"strings"
	"testing"

	"github.com/toolwire/toolwire/transport"
	"github.com/toolwire/toolwire/transport/stdio"
)

// A line over the size limit is answered with -32600
// carrying the request's id when the id can be read from the bytes kept up
// to the limit, so the client can match the error to its call; when it
// cannot (the id comes after the limit, or the kept bytes do not show a
// request), the id is null. Serving goes on either way.
func TestTooLargeLineKeepsItsID(t *testing.T) {
	pad := strings.Repeat("x", 400)
	input := strings.Join([]string{
		initLine,
		`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"echo","arguments":{"message":"` + pad + `"}}}`,
		`{"jsonrpc":"2.0","method":"tools/call","params":{"name":"echo","arguments":{"message":"` + pad + `"}},"id":8}`,
		` { "jsonrpc" : "2.0" , "method":"tools/call", "\u0069d" : "seven", "params":{"name":"echo","arguments":{"message":"` + pad + `"}}}`,
		`{"jsonrpc":"2.0","id":9,"result":{"roots":["` + pad + `"]}}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"message":"still here"}}}`,
	}, "\n") + "\n"
	lines := runLines(t, echoServer(t), input, transport.WithLimits(transport.Limits{MaxMessageBytes: 200}))
	type reply struct {
		ID    json.RawMessage `json:"id"`
		Error *struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	var got []reply
	for _, l := range lines {
		var r reply
		if err := json.Unmarshal([]byte(l), &r); err != nil {
			t.Fatalf("bad reply %q: %v", l, err)
		}
		got = append(got, r)
	}
	if len(got) != 6 {
		t.Fatalf("want 6 replies, got %d:\n%s", len(got), strings.Join(lines, "\n"))
	}
	for i, want := range []string{"7", "null", `"seven"`, "null"} {
		r := got[i+1]
		if string(r.ID) != want || r.Error == nil || r.Error.Code != -32600 || !strings.Contains(r.Error.Message, "200 bytes") {
			t.Errorf("oversized line %d: want -32600 with id %s, got %s", i+1, want, lines[i+1])
		}
	}
	if string(got[5].ID) != "2" || !strings.Contains(lines[5], `"still here"`) {
		t.Errorf("the line after the oversized ones was not served: %s", lines[5])
	}
}

// An oversized line is skipped with at most the limit kept (the prefix the
// error carries, its buffer included), and the next line reads whole; a last
// line without a newline is held to the same limit.
func TestTooLargeLineKeepsAtMostTheLimit(t *testing.T) {
	const limit = 1000
	huge := `{"jsonrpc":"2.0","id":1,"method":"x","params":"` + strings.Repeat("y", 10<<20) + `"}`
	c := stdio.NewConn(strings.NewReader(huge+"\n"+`{"next":1}`+"\n"+strings.Repeat("z", limit+1)), io.Discard, limit)
	_, err := c.Read(context.Background())
	var tl *transport.TooLargeError
	if !errors.As(err, &tl) || tl.Limit != limit {
		t.Fatalf("want a TooLargeError, got %v", err)
	}
	if len(tl.Prefix) != limit || cap(tl.Prefix) > limit+1 || string(tl.Prefix) != huge[:limit] {
		t.Errorf("prefix of %d bytes in a buffer of %d, want the first %d bytes", len(tl.Prefix), cap(tl.Prefix), limit)
	}
	if line, err := c.Read(context.Background()); err != nil || string(line) != `{"next":1}` {
		t.Fatalf("next line: %q %v", line, err)
	}
	if _, err := c.Read(context.Background()); !errors.As(err, &tl) || len(tl.Prefix) != limit {
		t.Errorf("a last line of limit+1 bytes without newline: %v", err)
	}
	if _, err := c.Read(context.Background()); err != io.EOF {
		t.Errorf("want EOF, got %v", err)
	}
}

// fill is an endless reader of one byte.
type fill byte

func (f fill) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = byte(f)
	}
	return len(p), nil
}

// A 100 MiB line is refused with at most the limit buffered: the buffer
// holding its start never grows past the limit (plus room for "\r\n"), the
// memory allocated while reading it is that buffer's growth by doubling (at
// most twice the limit), not the line's size, and the next line is served.
func TestHundredMiBLineBoundedMemory(t *testing.T) {
	const limit = 1 << 20
	const size = 100 << 20
	head := `{"jsonrpc":"2.0","id":"huge","method":"tools/call","params":{"pad":"`
	in := io.MultiReader(strings.NewReader(head), io.LimitReader(fill('y'), size-int64(len(head))),
		strings.NewReader("\n"+`{"next":1}`+"\n"))
	c := stdio.NewConn(in, io.Discard, limit)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	_, err := c.Read(context.Background())
	runtime.ReadMemStats(&after)
	var tl *transport.TooLargeError
	if !errors.As(err, &tl) || !strings.HasPrefix(string(tl.Prefix), head) {
		t.Fatalf("want a TooLargeError carrying the line's start, got %v", err)
	}
	if cap(tl.Prefix) > limit+2 {
		t.Errorf("the line's start was kept in a buffer of %d bytes; the limit is %d", cap(tl.Prefix), limit)
	}
	if got := after.TotalAlloc - before.TotalAlloc; got > 2*limit+64<<10 {
		t.Errorf("reading a %d MiB line allocated %d bytes; the limit is %d", size>>20, got, limit)
	}
	if line, err := c.Read(context.Background()); err != nil || string(line) != `{"next":1}` {
		t.Fatalf("next line: %q %v", line, err)
	}
}
