package precond

import (
	"os"
	"sync"
	"unsafe"

	"golang.org/x/sys/unix"
)

// hugePage is the transparent huge page size on amd64 and arm64 with
// 4 KiB base pages.
const hugePage = 2 << 20

// prefault asks the kernel to back buf with huge pages where it can and
// to fault it in, on up to workers goroutines (one per 16 MiB at most):
// the per-λ buffers of WithLambdas are fresh memory, and touching them
// 4 KiB page by page costs more than the copy. Errors (an old kernel, no
// THP) are ignored: the pages then fault on first touch as usual.
//
// In parallel because faulting in huge pages can be slow on a virtual
// machine: a guest that hands free memory back to its host (free page
// reporting, which reports free blocks of huge-page size and more) has
// its next huge pages backed again by the host on first touch. On this
// project's 2-vCPU VM, 800 MiB took 1.9 s on one thread after 25 s idle
// (0.10–0.16 s back to back), 1.1 s on two (round 11); an M = 10⁴
// float64 fit's K_MM phase stalled so in its first run after a pause.
func prefault[E any](buf []E, workers int) {
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
	parts := populateParts(lo, hi, workers)
	if len(parts) == 1 {
		_ = unix.Madvise(b, unix.MADV_POPULATE_WRITE)
		return
	}
	var wg sync.WaitGroup
	for _, p := range parts {
		wg.Go(func() { _ = unix.Madvise(b[p[0]-lo:p[1]-lo], unix.MADV_POPULATE_WRITE) })
	}
	wg.Wait()
}

// populateParts splits the page-aligned range [lo, hi) into at most
// workers parts of at least 16 MiB, every inner boundary on a huge page,
// so that no huge page is faulted by two of them.
func populateParts(lo, hi uintptr, workers int) [][2]uintptr {
	w := max(1, min(workers, int((hi-lo)/(16<<20))))
	parts := make([][2]uintptr, 0, w)
	per := (hi - lo) / uintptr(w)
	a := lo
	for i := 1; i < w; i++ {
		b := (lo + uintptr(i)*per + hugePage - 1) &^ (hugePage - 1)
		if b <= a || b >= hi {
			continue
		}
		parts = append(parts, [2]uintptr{a, b})
		a = b
	}
	return append(parts, [2]uintptr{a, hi})
}

// DiskFree reports the bytes free to this user in the file system of
// dir (statfs), or the error of reading them (dir does not exist, …).
func DiskFree(dir string) (int64, error) {
	var s unix.Statfs_t
	if err := unix.Statfs(dir, &s); err != nil {
		return 0, &os.PathError{Op: "statfs", Path: dir, Err: err}
	}
	return int64(s.Bavail) * int64(s.Bsize), nil
}
