// Package directio reads files with O_DIRECT, bypassing the page cache,
// where the system allows it, and reports how much page cache the calling
// process can keep (CacheRoom), so that a reader can choose between the
// two ways of reading.
//
// O_DIRECT reads need their buffer's address, their length and their file
// offset to be multiples of the device's logical block size; this package
// uses Align (4096, a multiple of every common block size) for all three.
package directio

import (
	"bufio"
	"bytes"
	"errors"
	"strconv"
	"strings"
	"unsafe"
)

// Align is the alignment of buffers, lengths and offsets of ReadAt.
const Align = 4096

// ErrUnsupported is returned by Open where O_DIRECT does not exist.
var ErrUnsupported = errors.New("directio: O_DIRECT is not supported on this system")

// Buffer returns a slice of n bytes, n rounded up to a multiple of Align,
// whose first byte is Align-aligned.
func Buffer(n int) []byte {
	n = (n + Align - 1) &^ (Align - 1)
	b := make([]byte, n+Align)
	off := int(uintptr(unsafe.Pointer(unsafe.SliceData(b))) & (Align - 1))
	if off != 0 {
		off = Align - off
	}
	return b[off : off+n : off+n]
}

// Aligned reports whether p's address and length are multiples of Align.
func Aligned(p []byte) bool {
	return len(p)%Align == 0 && uintptr(unsafe.Pointer(unsafe.SliceData(p)))%Align == 0
}

// noLimit is above any real memory limit: cgroup v1 writes an unlimited
// limit as 2⁶³ rounded down to a page.
const noLimit = 1 << 60

// statValue returns the value of the line "key value" in a
// memory.stat-style or /proc/meminfo-style file (the value times 1024 if
// it is followed by "kB").
func statValue(b []byte, key string) (int64, bool) {
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 2 || strings.TrimSuffix(f[0], ":") != key {
			continue
		}
		v, err := strconv.ParseInt(f[1], 10, 64)
		if err != nil {
			return 0, false
		}
		if len(f) > 2 && f[2] == "kB" {
			v <<= 10
		}
		return v, true
	}
	return 0, false
}

// cgroupPath returns the path of this process's cgroup from the contents
// of /proc/self/cgroup: for cgroup v1 the memory controller's ("N:memory:/p"
// or with memory among several controllers), for v2 the unified one
// ("0::/p"), and which of the two it found.
func cgroupPath(procSelfCgroup []byte) (path string, v2, ok bool) {
	for _, l := range strings.Split(string(procSelfCgroup), "\n") {
		f := strings.SplitN(l, ":", 3)
		if len(f) != 3 {
			continue
		}
		for _, c := range strings.Split(f[1], ",") {
			if c == "memory" {
				return f[2], false, true
			}
		}
		if f[0] == "0" && f[1] == "" {
			path, v2, ok = f[2], true, true
		}
	}
	return path, v2, ok
}

// room combines MemAvailable and a cgroup's limit and anonymous memory
// into the page cache the process can keep (limit ≤ 0: no cgroup limit).
func room(avail, limit, anon int64) int64 {
	if limit <= 0 || limit >= noLimit {
		return avail
	}
	return min(avail, max(limit-anon, 0))
}
