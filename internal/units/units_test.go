package units

import (
	"testing"
	"time"
)

func TestParseDuration(t *testing.T) {
	for _, c := range []struct {
		in   string
		want time.Duration
		err  string
	}{
		{"90d", 90 * 24 * time.Hour, ""},
		{"1d12h", 36 * time.Hour, ""},
		{"36h", 36 * time.Hour, ""},
		{"30m", 30 * time.Minute, ""},
		{"500ms", 500 * time.Millisecond, ""},
		{"1m30s", 90 * time.Second, ""},
		{"0", 0, ""},
		{"0d", 0, ""},
		{"36500d", MaxDays * 24 * time.Hour, ""},
		{"36499d24h", MaxDays * 24 * time.Hour, ""},
		{"36500d1ns", 0, `"36500d1ns" is more than 36500d`},
		{"36501d", 0, `"36501d" is more than 36500d`},
		{"2000000h", 0, `"2000000h" is more than 36500d`},
		{"99999999999999999999d", 0, `"99999999999999999999d" is not a duration (like 500ms, 30s, 36h or 90d)`},
		{"-1d", 0, `"-1d" is not a duration (like 500ms, 30s, 36h or 90d)`},
		{"-5s", 0, `"-5s" is not a duration (like 500ms, 30s, 36h or 90d)`},
		{"1d-1h", 0, `"1d-1h" is not a duration (like 500ms, 30s, 36h or 90d)`},
		{"d", 0, `"d" is not a duration (like 500ms, 30s, 36h or 90d)`},
		{"", 0, `"" is not a duration (like 500ms, 30s, 36h or 90d)`},
		{"30", 0, `"30" is not a duration (like 500ms, 30s, 36h or 90d)`},
		{"1w", 0, `"1w" is not a duration (like 500ms, 30s, 36h or 90d)`},
		{"1d1d", 0, `"1d1d" is not a duration (like 500ms, 30s, 36h or 90d)`},
		{"1.5d", 0, `"1.5d" is not a duration (like 500ms, 30s, 36h or 90d)`},
		{"5 parsecs", 0, `"5 parsecs" is not a duration (like 500ms, 30s, 36h or 90d)`},
	} {
		got, err := ParseDuration(c.in)
		checkParsed(t, "ParseDuration", c.in, got, err, c.want, c.err)
	}
}

// checkParsed checks what fn (named so in the failure) made of in: the
// error errWant when that is not "", else want and no error.
func checkParsed[T comparable](t *testing.T, fn, in string, got T, err error, want T, errWant string) {
	t.Helper()
	if errWant != "" {
		if err == nil || err.Error() != errWant {
			t.Errorf("%s(%q) = %v, %v; want error %q", fn, in, got, err, errWant)
		}
		return
	}
	if err != nil || got != want {
		t.Errorf("%s(%q) = %v, %v; want %v", fn, in, got, err, want)
	}
}

func TestParseSize(t *testing.T) {
	for _, c := range []struct {
		in   string
		max  int64
		want int64
		err  string
	}{
		{"1048576", 1 << 30, 1 << 20, ""},
		{"16MiB", 1 << 30, 16 << 20, ""},
		{"512KiB", 1 << 30, 512 << 10, ""},
		{"1GiB", 1 << 30, 1 << 30, ""},
		{"0", 1 << 30, 0, ""},
		{"0KiB", 1 << 30, 0, ""},
		{"2GiB", 1 << 30, 0, "2GiB is more than 1GiB"},
		{"1073741825", 1 << 30, 0, "1073741825 is more than 1GiB"},
		{"8GiB", MaxSize, 8 << 30, ""},
		{"9223372036854775807", MaxSize, MaxSize, ""},
		{"9223372036854775808", MaxSize, 0, `"9223372036854775808" is not a size (like 16MiB, 512KiB or 1048576)`},
		{"8589934592GiB", MaxSize, 0, "8589934592GiB is more than 9223372036854775807"},
		{"16MB", 1 << 30, 0, `"16MB" is not a size (like 16MiB, 512KiB or 1048576)`},
		{"-1", 1 << 30, 0, `"-1" is not a size (like 16MiB, 512KiB or 1048576)`},
		{"+1", 1 << 30, 0, `"+1" is not a size (like 16MiB, 512KiB or 1048576)`},
		{"MiB", 1 << 30, 0, `"MiB" is not a size (like 16MiB, 512KiB or 1048576)`},
		{"", 1 << 30, 0, `"" is not a size (like 16MiB, 512KiB or 1048576)`},
		{"1.5MiB", 1 << 30, 0, `"1.5MiB" is not a size (like 16MiB, 512KiB or 1048576)`},
		{"16 MiB", 1 << 30, 0, `"16 MiB" is not a size (like 16MiB, 512KiB or 1048576)`},
		{"16mib", 1 << 30, 0, `"16mib" is not a size (like 16MiB, 512KiB or 1048576)`},
	} {
		got, err := ParseSize(c.in, c.max)
		checkParsed(t, "ParseSize", c.in, got, err, c.want, c.err)
	}
}

func TestFormatSize(t *testing.T) {
	for n, want := range map[int64]string{0: "0", 1: "1", 1500: "1500", 1 << 10: "1KiB", 3 << 20: "3MiB", 1 << 30: "1GiB", 1<<30 + 1<<20: "1025MiB"} {
		if got := FormatSize(n); got != want {
			t.Errorf("FormatSize(%d) = %q, want %q", n, got, want)
		}
		if back, err := ParseSize(FormatSize(n), MaxSize); err != nil || back != n {
			t.Errorf("ParseSize(FormatSize(%d)) = %d, %v", n, back, err)
		}
	}
}

func TestFlags(t *testing.T) {
	var d time.Duration
	df := Duration(&d, time.Minute)
	if d != time.Minute || df.String() != "1m0s" || df.Type() != "duration" {
		t.Errorf("default: %v %q %q", d, df.String(), df.Type())
	}
	if err := df.Set("7d"); err != nil || d != 7*24*time.Hour {
		t.Errorf("Set(7d): %v, %v", d, err)
	}
	if err := df.Set("soon"); err == nil || d != 7*24*time.Hour {
		t.Errorf("Set(soon): %v, %v", d, err)
	}
	var n int
	sf := Size(&n, 4<<20, 1<<30)
	if n != 4<<20 || sf.String() != "4MiB" || sf.Type() != "size" {
		t.Errorf("default: %v %q %q", n, sf.String(), sf.Type())
	}
	if err := sf.Set("512KiB"); err != nil || n != 512<<10 {
		t.Errorf("Set(512KiB): %v, %v", n, err)
	}
	if err := sf.Set("2GiB"); err == nil || n != 512<<10 {
		t.Errorf("Set(2GiB): %v, %v", n, err)
	}
}
