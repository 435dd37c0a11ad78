//go:build linux && !(amd64 || arm64 || riscv64 || ppc64le || s390x || loong64)

package exepages

// dropCached leaves the page cache alone on the architectures whose
// fadvise system call splits its 64-bit arguments: the binary's unmapped
// cached pages stay, and fault-around may map some of them again.
func dropCached(string) error { return nil }
