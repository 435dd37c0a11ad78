//go:build !linux

package exepages

// Release gives nothing back outside Linux.
func Release() (Stats, error) { return Stats{}, ErrUnsupported }
