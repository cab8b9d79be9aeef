//go:build !linux

package dense

func hugePages[E any](buf []E) {}
