//go:build !unix

package tile

func cpuSeconds() float64 { return 0 }
