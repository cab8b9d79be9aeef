//go:build !linux

package directio

// File is a file opened for O_DIRECT reads (never, on this system).
type File struct{}

// Open returns ErrUnsupported on this system.
func Open(path string) (*File, error) { return nil, ErrUnsupported }

// ReadAt returns ErrUnsupported on this system.
func (f *File) ReadAt(p []byte, off int64) (int, error) { return 0, ErrUnsupported }

// Close does nothing on this system.
func (f *File) Close() error { return nil }

// CacheRoom reports ok = false on this system: readers keep reading
// through the page cache.
func CacheRoom() (int64, bool) { return 0, false }
