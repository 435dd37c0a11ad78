package exepages

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
)

const (
	madvRandom  = 1  // MADV_RANDOM: no read-ahead or read-around on later faults
	madvPageout = 21 // MADV_PAGEOUT (Linux 5.4): reclaim the pages now
)

// Release advises the kernel that the binary's read-only mappings (text,
// read-only data, function tables) are read at random from now on,
// reclaims their resident pages, and drops the pages of the binary that
// the page cache holds but no process maps (what start-up's read-ahead
// brought in and never used): on a later fault the kernel maps, besides
// the page faulted, every neighbour within 64 KiB that the cache holds
// (fault-around), so those pages would come back into the resident set
// without being used. Pages shared with another process that maps the
// same file stay. It is safe at any time: a page needed later is read
// back on its first touch.
func Release() (Stats, error) {
	var st Stats
	exe, err := os.Stat("/proc/self/exe")
	if err != nil {
		return st, fmt.Errorf("exepages: %w", err)
	}
	sys, ok := exe.Sys().(*syscall.Stat_t)
	if !ok {
		return st, ErrUnsupported
	}
	ranges, err := binaryRanges(sys.Ino)
	if err != nil {
		return st, err
	}
	if len(ranges) == 0 {
		return st, fmt.Errorf("exepages: no mapping of the binary (inode %d) in /proc/self/maps", sys.Ino)
	}
	st.Before = rssFile()
	for _, r := range ranges {
		st.Mapped += int64(r[1] - r[0])
		if err := madvise(r, madvRandom); err != nil {
			return st, err
		}
		if err := madvise(r, madvPageout); err != nil {
			if err == syscall.EINVAL {
				return st, fmt.Errorf("%w (MADV_PAGEOUT needs Linux 5.4)", ErrUnsupported)
			}
			return st, err
		}
	}
	if err := dropCached("/proc/self/exe"); err != nil {
		return st, err
	}
	st.After = rssFile()
	return st, nil
}

func madvise(r [2]uintptr, advice uintptr) error {
	_, _, e := syscall.Syscall(syscall.SYS_MADVISE, r[0], r[1]-r[0], advice)
	if e != 0 {
		return e
	}
	return nil
}

// binaryRanges reads /proc/self/maps for the read-only mappings of the
// file with inode ino: "start-end perms offset dev inode path".
func binaryRanges(ino uint64) ([][2]uintptr, error) {
	data, err := os.ReadFile("/proc/self/maps")
	if err != nil {
		return nil, fmt.Errorf("exepages: %w", err)
	}
	return parseMaps(data, ino), nil
}

// parseMaps returns the address ranges of the mappings of inode ino that
// are not writable (writable ones hold the binary's data, copied on write).
func parseMaps(data []byte, ino uint64) [][2]uintptr {
	var out [][2]uintptr
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 6 || len(f[1]) < 2 || f[1][1] == 'w' {
			continue
		}
		if n, err := strconv.ParseUint(f[4], 10, 64); err != nil || n != ino {
			continue
		}
		lo, hi, ok := strings.Cut(f[0], "-")
		if !ok {
			continue
		}
		a, err1 := strconv.ParseUint(lo, 16, 64)
		b, err2 := strconv.ParseUint(hi, 16, 64)
		if err1 != nil || err2 != nil || b <= a {
			continue
		}
		out = append(out, [2]uintptr{uintptr(a), uintptr(b)})
	}
	return out
}

// rssFile is the process's RssFile from /proc/self/status in bytes, or -1.
func rssFile() int64 {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return -1
	}
	for _, line := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, "RssFile:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			if err != nil {
				return -1
			}
			return kb << 10
		}
	}
	return -1
}
