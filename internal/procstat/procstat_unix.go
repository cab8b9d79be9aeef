//go:build unix

package procstat

import (
	"runtime"
	"syscall"
)

func rusage() (syscall.Rusage, bool) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return ru, false
	}
	return ru, true
}

func cpuSeconds() float64 {
	ru, ok := rusage()
	if !ok {
		return 0
	}
	tv := func(t syscall.Timeval) float64 { return float64(t.Sec) + float64(t.Usec)/1e6 }
	return tv(ru.Utime) + tv(ru.Stime)
}

func peakRSS() int64 {
	ru, ok := rusage()
	if !ok {
		return 0
	}
	if runtime.GOOS == "darwin" || runtime.GOOS == "ios" {
		return int64(ru.Maxrss) // bytes there
	}
	return int64(ru.Maxrss) << 10 // kilobytes on Linux and the BSDs
}
