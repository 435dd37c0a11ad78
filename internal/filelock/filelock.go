// Package filelock takes the advisory, whole-file locks (flock) that keep
// two processes from writing one data directory or one audit journal.
package filelock

import "errors"

// ErrHeld is TryLock's answer for a file another process has locked.
var ErrHeld = errors.New("filelock: the file is locked by another process")
