//go:build unix && !linux && !nommap

package mmap

const (
	fadvWillNeed   = 0
	fadvSequential = 0
)

// fadvise does nothing on this system.
func fadvise(fd int, off, n int64, advice int) error { return nil }
