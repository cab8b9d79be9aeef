//go:build !linux

package precond

// prefault is a no-op off Linux.
func prefault[E any](buf []E, workers int) {}

// DiskFree reports the bytes free to this user in the file system of dir;
// -1 when it cannot tell (off Linux).
func DiskFree(dir string) int64 { return -1 }
