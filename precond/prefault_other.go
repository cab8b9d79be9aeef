//go:build !linux

package precond

// prefault is a no-op off Linux.
func prefault[E any](buf []E, workers int) {}
