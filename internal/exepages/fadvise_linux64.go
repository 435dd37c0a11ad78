//go:build linux && (amd64 || arm64 || riscv64 || ppc64le || s390x || loong64)

package exepages

import (
	"fmt"
	"os"
	"syscall"
)

// fadvDontNeed is POSIX_FADV_DONTNEED: drop the file's clean cached pages
// that no process maps.
const fadvDontNeed = 4

// dropCached asks the kernel to drop the page cache's clean pages of the
// file at path that no process maps; mapped, dirty and locked pages stay.
// (On these architectures fadvise64 takes the offset and length as one
// register each.)
func dropCached(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("exepages: %w", err)
	}
	defer f.Close()
	if _, _, e := syscall.Syscall6(syscall.SYS_FADVISE64, f.Fd(), 0, 0, fadvDontNeed, 0, 0); e != 0 {
		return fmt.Errorf("exepages: dropping the binary's cached pages: %w", e)
	}
	return nil
}
