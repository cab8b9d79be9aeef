//go:build unix && !linux

package fileutil

import "golang.org/x/sys/unix"

// startTime cannot read start times here; it only tells whether pid exists.
func startTime(pid int) (uint64, procState) {
	err := unix.Kill(pid, 0)
	if err == unix.ESRCH {
		return 0, procGone
	}
	if err == nil || err == unix.EPERM {
		return 0, procFound
	}
	return 0, procUnknown
}
