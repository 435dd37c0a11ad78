package jsonstr

import (
	"bytes"
	"testing"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/toolwire/toolwire/internal/jsontest"
)

var samples = []string{
	"", "ping", "tools/call", "req-7f3a9c21",
	"a\x00b", "\a\v", "\x01", "\x1f", "\x7f", "\U000E0001", "\u00ad", "\ufeff",
	`q"\/`, "\b\f\n\r\t", "é", "\u2028\u2029", "\U0001F600",
	"\xff", "a\xc3", "\xc3\x28", "\xc0\xaf", "\xed\xa0\x80", "\xf4\x90\x80\x80", "<&>",
}

// Append writes what encoding/json writes, byte for byte.
func TestAppendMatchesEncodingJSON(t *testing.T) {
	all := samples
	for c := 0; c < 0x100; c++ {
		all = append(all, string(rune(c)), "x"+string([]byte{byte(c)})+"y")
	}
	for _, s := range all {
		if got, want := string(Append(nil, s)), jsontest.String(s); got != want {
			t.Errorf("%q: got %s, want %s", s, got, want)
		}
	}
}

// Every string of valid UTF-8 comes back unchanged from a strict JSON
// decoder; invalid bytes come back as U+FFFD.
func TestAppendRoundTrips(t *testing.T) {
	for _, s := range samples {
		checkRoundTrip(t, s)
	}
}

func checkRoundTrip(t *testing.T, s string) {
	t.Helper()
	out := Append([]byte("x"), s)
	if out[0] != 'x' {
		t.Fatalf("%q: the bytes before were overwritten", s)
	}
	got, err := jsontext.AppendUnquote(nil, out[1:])
	if err != nil {
		t.Fatalf("%q: %s is not a JSON string: %v", s, out[1:], err)
	}
	// Each byte that is not valid UTF-8 is one U+FFFD.
	want := string(bytes.Runes([]byte(s)))
	if string(got) != want {
		t.Fatalf("%q: %s decodes to %q, want %q", s, out[1:], got, want)
	}
}

// A plain ASCII string costs no allocation when the buffer has room.
func TestAppendDoesNotAllocate(t *testing.T) {
	buf := make([]byte, 0, 64)
	for _, s := range []string{"tools/call", "req-7f3a9c21", "a\x00b\u2028é"} {
		if n := testing.AllocsPerRun(100, func() { buf = Append(buf[:0], s) }); n != 0 {
			t.Errorf("%q: %v allocations, want 0", s, n)
		}
	}
}

func FuzzAppend(f *testing.F) {
	for _, s := range samples {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := string(Append(nil, s)), jsontest.String(s); got != want {
			t.Fatalf("%q: got %s, want %s", s, got, want)
		}
		checkRoundTrip(t, s)
	})
}

func BenchmarkAppend(b *testing.B) {
	for _, s := range []string{"req-7f3a9c21", "notifications/progress", "a\x00b\"c\u2028é"} {
		b.Run(s, func(b *testing.B) {
			b.ReportAllocs()
			buf := make([]byte, 0, 64)
			for b.Loop() {
				buf = Append(buf[:0], s)
			}
		})
	}
}
