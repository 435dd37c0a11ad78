package redisstore

import (
	"strings"
	"testing"
)

// parseEventID accepts exactly the ids formatEventID makes, and splits them
// back into their parts.
func TestParseEventID(t *testing.T) {
	const epoch = "00ff00ff00ff00ff"
	for _, c := range []struct {
		stream string
		seq    uint64
	}{
		{"p1", 0}, {"", 0}, {"p1", 1}, {"ü✓", 42}, {"a.b", 7}, {"x\x00y", maxSeq}, {strings.Repeat("s", MaxNameLen), 123},
	} {
		id := formatEventID(c.stream, epoch, c.seq)
		stream, e, seq, ok := parseEventID(id)
		if !ok || stream != c.stream || e != epoch || seq != c.seq {
			t.Errorf("parseEventID(%q) = %q %q %d %v", id, stream, e, seq, ok)
		}
	}
	for _, bad := range []string{
		"", "_", "p1", "p1_", "p1_0", "p1_" + epoch, "p1_" + epoch + ".", "p1_" + epoch + "0",
		"p1_" + epoch + ".01", "p1_" + epoch + ".-1", "p1_" + epoch + ".+1", "p1_" + epoch + ". 1",
		"p1_" + epoch + ".1 ", "p1_" + epoch + ".9007199254740992", "p1_" + epoch + ".18446744073709551616",
		"p1_00FF00FF00FF00FF.0", "p1_00ff00ff00ff00f.0", "p1_00ff00ff00ff00fg.0", "p1_" + epoch + "._0",
		"p1_" + epoch + ".0_", "a_b_" + epoch + ".1", strings.Repeat("s", MaxNameLen+1) + "_" + epoch + ".0",
		"p1_" + epoch + "." + strings.Repeat("1", 1<<20),
	} {
		if stream, e, seq, ok := parseEventID(bad); ok {
			t.Errorf("parseEventID(%.60q) accepted: %q %q %d", bad, stream, e, seq)
		}
	}
	if got := formatEpoch(0); got != "0000000000000000" || !validEpoch(got) {
		t.Errorf("formatEpoch(0) = %q", got)
	}
	if got := formatEpoch(1<<64 - 1); got != "ffffffffffffffff" {
		t.Errorf("formatEpoch(max) = %q", got)
	}
}

// FuzzEventID: parseEventID never panics, accepts only ids that format
// back to themselves, never a stream id past MaxNameLen or with the
// separator, nor a sequence number past maxSeq.
func FuzzEventID(f *testing.F) {
	const epoch = "0123456789abcdef"
	for _, seed := range []string{
		"", "_", "p1_0", "p1_" + epoch + ".0", "_" + epoch + ".9007199254740991", "p1_" + epoch + ".9007199254740992",
		"a_b_" + epoch + ".1", "ü✓_" + epoch + ".12", "p1_" + epoch + ".01", "p1_" + epoch + ".-1",
		"p1_" + strings.ToUpper(epoch) + ".0", "\xff_" + epoch + ".3", strings.Repeat("x", MaxNameLen) + "_" + epoch + ".5",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, id string) {
		stream, e, seq, ok := parseEventID(id)
		if !ok {
			return
		}
		if got := formatEventID(stream, e, seq); got != id {
			t.Fatalf("parseEventID(%q) = %q %q %d, which formats as %q", id, stream, e, seq, got)
		}
		if len(stream) > MaxNameLen || strings.Contains(stream, idSeparator) || seq > maxSeq || !validEpoch(e) {
			t.Fatalf("parseEventID(%q) accepted stream %q epoch %q seq %d", id, stream, e, seq)
		}
	})
}
