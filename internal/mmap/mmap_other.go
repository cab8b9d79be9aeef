//go:build !unix || nommap

package mmap

import "os"

// File is a read-only view of a file: mapped into memory where the platform
// allows it, else read through the open file.
type File struct {
	data []byte // always nil here
	f    *os.File
	size int64
}

// Open opens path for reading. This build does not map files: Bytes returns
// nil and callers use ReadAt.
func Open(path string) (*File, error) {
	fh, size, err := openFile(path)
	if err != nil {
		return nil, err
	}
	return &File{f: fh, size: size}, nil
}

// OpenRead opens path for reading through ReadAt, like Open in this build.
func OpenRead(path string) (*File, error) { return Open(path) }

// Close closes the file. Calling it twice is harmless.
func (f *File) Close() error {
	if f.f == nil {
		return nil
	}
	err := f.f.Close()
	f.f = nil
	return err
}

// DontNeed does nothing in this build.
func (f *File) DontNeed(off, n int64) error { return nil }

// WillNeed does nothing in this build.
func (f *File) WillNeed(off, n int64) error { return nil }

// Sequential does nothing in this build.
func (f *File) Sequential() error { return nil }
