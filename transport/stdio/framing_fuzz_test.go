package stdio

import (
	"bytes"
	"context"
	"errors"
	"io"
	"testing"

	"github.com/toolwire/toolwire/transport"
)

// FuzzConnRead feeds arbitrary bytes to the newline framing. Invariants: no
// panic; every message is non-empty, holds no newline and is within the
// limit; an oversized line is reported with at most the limit kept; and the
// messages read are exactly the input's non-empty lines within the limit
// (a trailing "\r" removed), in order.
func FuzzConnRead(f *testing.F) {
	for _, s := range []string{
		"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\n",
		"a\r\n\nb\n", "\n\n\n", "no newline at the end", "x\ry\n", string(bytes.Repeat([]byte("0"), 64)) + "\r\n", "x\r\r\n",
		"{\"id\":7," + string(bytes.Repeat([]byte("x"), 80)) + "}\nnext\n",
	} {
		f.Add([]byte(s))
	}
	const limit = 64
	f.Fuzz(func(t *testing.T, in []byte) {
		c := NewConn(bytes.NewReader(in), io.Discard, limit)
		var want [][]byte
		for _, line := range bytes.Split(in, []byte("\n")) {
			line = bytes.TrimSuffix(line, []byte("\r"))
			if len(line) > 0 {
				want = append(want, line)
			}
		}
		var got [][]byte
		for range len(in) + 2 {
			msg, err := c.Read(context.Background())
			if errors.Is(err, io.EOF) {
				break
			}
			var tl *transport.TooLargeError
			if errors.As(err, &tl) {
				if len(tl.Prefix) > limit {
					t.Fatalf("kept %d bytes of an oversized line; the limit is %d", len(tl.Prefix), limit)
				}
				got = append(got, nil) // a refused line
				continue
			}
			if err != nil {
				t.Fatalf("unexpected error %v", err)
			}
			if len(msg) == 0 || len(msg) > limit || bytes.IndexByte(msg, '\n') >= 0 {
				t.Fatalf("message %q breaks the framing (limit %d)", msg, limit)
			}
			got = append(got, append([]byte(nil), msg...))
		}
		// Compare, letting a refused line stand for one longer than the limit.
		j := 0
		for _, w := range want {
			if j >= len(got) {
				t.Fatalf("line %q not read", w)
			}
			if got[j] == nil {
				if len(w) <= limit {
					t.Fatalf("line %q (%d bytes) refused as too large", w, len(w))
				}
			} else if !bytes.Equal(got[j], w) {
				t.Fatalf("read %q, want %q", got[j], w)
			}
			j++
		}
		if j != len(got) {
			t.Fatalf("read %d messages for %d lines", len(got), len(want))
		}
	})
}
