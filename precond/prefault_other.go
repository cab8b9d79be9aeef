//go:build !linux

package precond

import "os"

// prefault is a no-op off Linux.
func prefault[E any](buf []E, workers int) {}

// DiskFree reports the bytes free to this user in the file system of
// dir: -1 (unknown off Linux) when dir is a directory, else the error.
func DiskFree(dir string) (int64, error) {
	if _, err := os.Stat(dir); err != nil {
		return 0, err
	}
	return -1, nil
}
