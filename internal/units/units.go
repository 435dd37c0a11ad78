// Package units reads and writes the durations and byte sizes a person
// types: in the gateway's config file, in flows and in the command line's
// flags, one syntax and one error message everywhere.
package units

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// MaxDays bounds a duration: 36,500 days, a hundred years.
const MaxDays = 36500

// maxDuration is MaxDays as a duration.
const maxDuration = MaxDays * 24 * time.Hour

// ParseDuration reads a duration of zero or more: Go's syntax (500ms, 1m30s,
// 36h), optionally led by a whole number of days (90d, 1d12h), at most
// MaxDays.
func ParseDuration(s string) (time.Duration, error) {
	bad := fmt.Errorf("%q is not a duration (like 500ms, 30s, 36h or 90d)", clip(s))
	days, hasDays := int64(0), false
	rest := s
	if i := strings.IndexByte(s, 'd'); i > 0 {
		hasDays = true
		n, err := strconv.ParseInt(s[:i], 10, 64)
		if err != nil || n < 0 {
			return 0, bad
		}
		if n > MaxDays {
			return 0, fmt.Errorf("%q is more than %dd", clip(s), MaxDays)
		}
		days, rest = n, s[i+1:]
	}
	var t time.Duration
	if rest != "" || !hasDays {
		var err error
		if t, err = time.ParseDuration(rest); err != nil || t < 0 {
			return 0, bad
		}
		if t > maxDuration {
			return 0, fmt.Errorf("%q is more than %dd", clip(s), MaxDays)
		}
	}
	d := time.Duration(days)*24*time.Hour + t
	if d > maxDuration {
		return 0, fmt.Errorf("%q is more than %dd", clip(s), MaxDays)
	}
	return d, nil
}

// sizeUnits are the suffixes a size may have, largest first.
var sizeUnits = [...]struct {
	suffix string
	shift  uint
}{{"GiB", 30}, {"MiB", 20}, {"KiB", 10}}

// ParseSize reads a byte count: digits, optionally followed by KiB, MiB or
// GiB (16MiB, 512KiB, 1048576), at most max bytes. Decimal units (MB) are
// refused rather than guessed.
func ParseSize(s string, max int64) (int64, error) {
	digits, shift := s, uint(0)
	for _, u := range sizeUnits {
		if d, ok := strings.CutSuffix(s, u.suffix); ok {
			digits, shift = d, u.shift
			break
		}
	}
	n, err := strconv.ParseUint(digits, 10, 63)
	if err != nil {
		return 0, fmt.Errorf("%q is not a size (like 16MiB, 512KiB or 1048576)", clip(s))
	}
	if n > uint64(max)>>shift {
		return 0, fmt.Errorf("%s is more than %s", clip(s), FormatSize(max))
	}
	return int64(n << shift), nil
}

// FormatSize writes n in the largest unit that divides it: 16MiB, 1500.
func FormatSize(n int64) string {
	for _, u := range sizeUnits {
		if n > 0 && n%(1<<u.shift) == 0 {
			return strconv.FormatInt(n>>u.shift, 10) + u.suffix
		}
	}
	return strconv.FormatInt(n, 10)
}

// clip shortens what an error message quotes back.
func clip(s string) string {
	if len(s) > 64 {
		return s[:64] + "..."
	}
	return s
}

// MaxSize is the largest size a flag takes: math.MaxInt64 bytes.
const MaxSize = math.MaxInt64
