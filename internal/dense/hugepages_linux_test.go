package dense

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

// hugePages backs buf with transparent huge pages where the kernel
// allows it, as package precond does for its buffer (and numpy for large
// arrays): benchmarks of M × M routines then see the TLB behaviour of
// production. Errors are ignored.
func hugePages[E any](buf []E) {
	if len(buf) == 0 {
		return
	}
	var z E
	n := uintptr(len(buf)) * unsafe.Sizeof(z)
	start := uintptr(unsafe.Pointer(&buf[0]))
	pg := uintptr(unix.Getpagesize())
	lo, hi := (start+pg-1)&^(pg-1), (start+n)&^(pg-1)
	if hi <= lo {
		return
	}
	b := unsafe.Slice((*byte)(unsafe.Pointer(&buf[0])), n)[lo-start : hi-start]
	_ = unix.Madvise(b, unix.MADV_HUGEPAGE)
	_ = unix.Madvise(b, unix.MADV_POPULATE_WRITE)
}
