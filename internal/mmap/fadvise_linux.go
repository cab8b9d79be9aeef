//go:build linux && !nommap

package mmap

import "golang.org/x/sys/unix"

const (
	fadvWillNeed   = unix.FADV_WILLNEED
	fadvSequential = unix.FADV_SEQUENTIAL
)

func fadvise(fd int, off, n int64, advice int) error { return unix.Fadvise(fd, off, n, advice) }
