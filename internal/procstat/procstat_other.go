//go:build !unix

package procstat

func cpuSeconds() float64 { return 0 }
func peakRSS() int64      { return 0 }
