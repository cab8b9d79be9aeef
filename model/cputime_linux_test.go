package model_test

import (
	"syscall"
	"time"
)

// threadCPU returns the CPU time of the calling OS thread (the caller
// locks its goroutine to it), or 0 when it cannot be read.
func threadCPU() time.Duration {
	const rusageThread = 1 // RUSAGE_THREAD
	var ru syscall.Rusage
	if syscall.Getrusage(rusageThread, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
