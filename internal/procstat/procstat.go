// Package procstat reads what the operating system knows of this
// process's use of the machine: its CPU seconds (user and system, all
// threads) and its peak resident memory. Fit and Tune record both per
// phase (ooc.Phase), so a user sees where a long job spent its time and
// its memory without a profiler.
//
// # Concurrency
//
// Every function is safe for concurrent use.
package procstat

// CPUSeconds returns the user plus system CPU time of the whole process
// so far, in seconds (0 where the platform does not say).
func CPUSeconds() float64 { return cpuSeconds() }

// PeakRSS returns the peak resident set size of the process so far, in
// bytes (0 where the platform does not say).
func PeakRSS() int64 { return peakRSS() }
