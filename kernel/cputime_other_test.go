//go:build !unix

package kernel

func cpuSeconds() float64 { return 0 }
