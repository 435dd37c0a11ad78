package units

import "time"

// DurationFlag is a command-line flag (pflag.Value) that reads
// ParseDuration's syntax, days included, into a time.Duration.
type DurationFlag struct{ p *time.Duration }

// Duration sets *p to def and returns the flag that changes it.
func Duration(p *time.Duration, def time.Duration) *DurationFlag {
	*p = def
	return &DurationFlag{p}
}

// Set reads s.
func (f *DurationFlag) Set(s string) error {
	d, err := ParseDuration(s)
	if err != nil {
		return err
	}
	*f.p = d
	return nil
}

// String writes the value as Go does (1h30m0s), which Set reads back.
func (f *DurationFlag) String() string { return f.p.String() }

// Type names the value in the usage text.
func (f *DurationFlag) Type() string { return "duration" }

// SizeFlag is a command-line flag (pflag.Value) that reads ParseSize's
// syntax (16MiB, 512KiB or bytes) into an int or int64.
type SizeFlag[T ~int | ~int64] struct {
	p   *T
	max int64
}

// Size sets *p to def and returns the flag that changes it; values above
// max are refused.
func Size[T ~int | ~int64](p *T, def T, max int64) *SizeFlag[T] {
	*p = def
	return &SizeFlag[T]{p, max}
}

// Set reads s.
func (f *SizeFlag[T]) Set(s string) error {
	n, err := ParseSize(s, f.max)
	if err != nil {
		return err
	}
	*f.p = T(n)
	return nil
}

// String writes the value in the largest unit that divides it.
func (f *SizeFlag[T]) String() string { return FormatSize(int64(*f.p)) }

// Type names the value in the usage text.
func (f *SizeFlag[T]) Type() string { return "size" }
