//go:build unix

package dense

import (
	"syscall"
	"time"
)

// cpuTime returns the CPU time (user + system, all threads) the process
// has used.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
