//go:build linux && (amd64 || arm64 || riscv64 || ppc64le || s390x || loong64)

package exepages

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"unsafe"
)

// dropCached empties the page cache of a written-back file that no
// process maps, so that a later fault finds no neighbours to map with it.
func TestDropCachedEmptiesTheFilesPageCache(t *testing.T) {
	dir := t.TempDir()
	var fs syscall.Statfs_t
	if err := syscall.Statfs(dir, &fs); err != nil {
		t.Fatal(err)
	}
	if fs.Type == 0x01021994 { // TMPFS_MAGIC: its pages are the file
		t.Skip("the temporary directory is on tmpfs, whose pages cannot be dropped")
	}
	path := filepath.Join(dir, "f")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write(make([]byte, 64<<10)); err != nil {
		t.Fatal(err)
	}
	if err := f.Sync(); err != nil {
		t.Fatal(err)
	}
	if _, err := f.ReadAt(make([]byte, 64<<10), 0); err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if n := cachedPages(t, f); n == 0 {
		t.Skip("the file system keeps no page cache for a file just written and read")
	}
	if err := dropCached(path); err != nil {
		t.Fatalf("dropCached: %v", err)
	}
	if n := cachedPages(t, f); n != 0 {
		t.Errorf("%d pages of the file still cached after dropCached", n)
	}
}

// cachedPages counts the pages of f the page cache holds (mincore on a
// mapping of it, which itself touches none).
func cachedPages(t *testing.T, f *os.File) int {
	t.Helper()
	st, err := f.Stat()
	if err != nil {
		t.Fatal(err)
	}
	m, err := syscall.Mmap(int(f.Fd()), 0, int(st.Size()), syscall.PROT_READ, syscall.MAP_SHARED)
	if err != nil {
		t.Fatal(err)
	}
	defer syscall.Munmap(m)
	pg := os.Getpagesize()
	vec := make([]byte, (len(m)+pg-1)/pg)
	if _, _, e := syscall.Syscall(syscall.SYS_MINCORE, uintptr(unsafe.Pointer(&m[0])), uintptr(len(m)), uintptr(unsafe.Pointer(&vec[0]))); e != 0 {
		t.Fatalf("mincore: %v", e)
	}
	n := 0
	for _, v := range vec {
		n += int(v & 1)
	}
	return n
}
