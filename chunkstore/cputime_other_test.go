//go:build !linux

package chunkstore

func cpuSeconds() float64 { return 0 }
func sysSeconds() float64 { return 0 }
