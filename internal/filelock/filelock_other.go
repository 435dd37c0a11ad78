//go:build !unix

package filelock

import "os"

// TryLock does not lock where flock is missing: a second process using the
// same file is not detected there (see Supported).
func TryLock(*os.File) error { return nil }

// Unlock is TryLock's counterpart; nothing to release here.
func Unlock(*os.File) error { return nil }

// Supported reports whether TryLock really locks on this system.
const Supported = false
