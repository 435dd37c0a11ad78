// Package exepages gives back to the kernel the pages of the running
// program's own binary that only its start-up touched.
//
// A Go binary's text, read-only data and function tables are mapped from
// its file, and every page a process touches stays resident (and counted
// in its RSS) with, by the kernel's read-ahead and fault-around, up to
// 64 KiB of neighbours. Package initialisation and start-up (flag and
// config parsing, connecting upstreams) touch pages all over a large
// binary that a long-running daemon never needs again. Release evicts
// them, and the pages of the binary that read-ahead left in the page cache
// without any process mapping them (which fault-around would otherwise
// map on a later fault nearby); the pages the daemon then runs are read
// back one by one, so what stays resident is what it uses.
package exepages

import "errors"

// ErrUnsupported is returned by Release where the platform cannot give
// the pages back (anything but Linux 5.4 or later).
var ErrUnsupported = errors.New("exepages: releasing the binary's pages is not supported on this platform")

// Stats is what Release did: the process's file-backed resident memory
// (RssFile) before and after, and the bytes of the binary's mappings it
// advised.
type Stats struct {
	Before, After int64 // RssFile in bytes
	Mapped        int64 // bytes of the binary's read-only mappings
}
