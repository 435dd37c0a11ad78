package main

import (
	"os"
	"syscall"
)

// evict drops the file's pages from the page cache (posix_fadvise
// POSIX_FADV_DONTNEED, once written back), so that a process started from
// it maps what it reads and the kernel's read-ahead around that, not
// whatever of the file the cache still held.
func evict(f *os.File) error {
	if err := f.Sync(); err != nil {
		return err
	}
	const fadvDontNeed = 4
	if _, _, e := syscall.Syscall6(syscall.SYS_FADVISE64, f.Fd(), 0, 0, fadvDontNeed, 0, 0); e != 0 {
		return e
	}
	return nil
}
