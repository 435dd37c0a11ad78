package stdio

import (
	"bytes"
	"context"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/toolwire/toolwire/transport"
)

// The limit applies to the message, not to its line terminator: a message
// exactly at the limit is read whether it ends in "\n", "\r\n" or the end of
// input, and one byte more is refused.
func TestLimitExcludesTerminator(t *testing.T) {
	const limit = 8
	at := strings.Repeat("x", limit)
	for _, end := range []string{"\n", "\r\n"} {
		c := NewConn(strings.NewReader(at+end+at+"y"+end), io.Discard, limit)
		msg, err := c.Read(context.Background())
		if err != nil || !bytes.Equal(msg, []byte(at)) {
			t.Fatalf("terminator %q: read %q, %v; want the %d-byte message", end, msg, err, limit)
		}
		_, err = c.Read(context.Background())
		var tl *transport.TooLargeError
		if !errors.As(err, &tl) {
			t.Fatalf("terminator %q: a %d-byte message gave %v, want TooLargeError", end, limit+1, err)
		}
	}
	// A last line without a terminator, with or without a stray "\r".
	for _, last := range []string{at, at + "\r"} {
		c := NewConn(strings.NewReader(last), io.Discard, limit)
		if msg, err := c.Read(context.Background()); err != nil || !bytes.Equal(msg, []byte(at)) {
			t.Fatalf("last line %q: read %q, %v; want the %d-byte message", last, msg, err, limit)
		}
	}
}
