package exepages

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// parseMaps keeps the read-only mappings of the binary's inode and skips
// writable ones, other files and lines it cannot read.
func TestParseMaps(t *testing.T) {
	maps := `00400000-00c00000 r-xp 00000000 08:01 4242 /usr/local/bin/toolwire
00c00000-01600000 r--p 00800000 08:01 4242 /usr/local/bin/toolwire
01600000-01700000 rw-p 01200000 08:01 4242 /usr/local/bin/toolwire
01700000-01800000 rw-p 00000000 00:00 0
7f0000000000-7f0000001000 r--p 00000000 08:01 77 /usr/lib/locale/C.utf8
zz-01 r-xp 00000000 08:01 4242 /bad
02000000-01000000 r-xp 00000000 08:01 4242 /backwards
short line
`
	got := parseMaps([]byte(maps), 4242)
	want := [][2]uintptr{{0x400000, 0xc00000}, {0xc00000, 0x1600000}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("parseMaps (-want +got):\n%s", diff)
	}
}
