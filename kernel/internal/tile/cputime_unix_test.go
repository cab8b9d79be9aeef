//go:build unix

package tile

import "syscall"

// cpuSeconds returns the process's user + system CPU time. On a shared
// machine it excludes the time other processes held the core, which the
// wall clock of a benchmark does not.
func cpuSeconds() float64 {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return float64(ru.Utime.Sec+ru.Stime.Sec) + float64(ru.Utime.Usec+ru.Stime.Usec)*1e-6
}
