package precond

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

// prefault asks the kernel to back buf with huge pages where it can and
// to fault it in with one call: the per-λ buffers of WithLambdas are
// fresh memory, and touching them 4 KiB page by page costs more than the
// copy. Errors (an old kernel, no THP) are ignored: the pages then fault
// on first touch as usual.
func prefault[E any](buf []E) {
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
