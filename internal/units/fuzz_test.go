package units

import (
	"testing"
	"time"
)

// FuzzParseDuration: ParseDuration never panics, and what it accepts is
// from 0 to MaxDays and written back by String to a value it reads again.
func FuzzParseDuration(f *testing.F) {
	for _, s := range []string{"90d", "1d12h", "36h", "500ms", "0", "0d", "-1d", "99999999999999999999d", "36500d", "36500d1ns", "1d1d", "1.5d", "d", "", "+1d", "1d+1h"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		d, err := ParseDuration(s)
		if err != nil {
			return
		}
		if d < 0 || d > MaxDays*24*time.Hour {
			t.Fatalf("ParseDuration(%q) = %v", s, d)
		}
		if back, err := ParseDuration(d.String()); err != nil || back != d {
			t.Fatalf("ParseDuration(%q) = %v, but %q reads as %v, %v", s, d, d.String(), back, err)
		}
	})
}

// FuzzParseSize: ParseSize never panics, stays within its bound, and
// FormatSize writes what it accepts back to the same number.
func FuzzParseSize(f *testing.F) {
	for _, s := range []string{"16MiB", "512KiB", "1GiB", "1048576", "0", "-1", "+1", "MiB", "", "16MB", "99999999999999999999", "8589934592GiB"} {
		f.Add(s, int64(1<<30))
	}
	f.Fuzz(func(t *testing.T, s string, max int64) {
		if max < 0 {
			max = -(max + 1)
		}
		n, err := ParseSize(s, max)
		if err != nil {
			return
		}
		if n < 0 || n > max {
			t.Fatalf("ParseSize(%q, %d) = %d", s, max, n)
		}
		if back, err := ParseSize(FormatSize(n), max); err != nil || back != n {
			t.Fatalf("ParseSize(%q) = %d, but %q reads as %d, %v", s, n, FormatSize(n), back, err)
		}
	})
}
