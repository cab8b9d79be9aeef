// Package mmap maps files read-only into memory, with a portable fallback.
//
// On unix systems (unless built with the nommap tag) Open maps the whole file
// with mmap(2) and Bytes returns the mapping; advice calls become madvise(2).
// OpenRead, and Open elsewhere, keep the *os.File: Bytes returns nil and
// callers read through ReadAt (pread) into their own buffers; advice calls
// become fadvise(2) on Linux and do nothing elsewhere.
//
// A *File is safe for concurrent use, except that Close must not run
// concurrently with any other method.
package mmap

import (
	"errors"
	"io"
	"os"
)

// ErrClosed is returned by ReadAt after Close.
var ErrClosed = errors.New("mmap: file closed")

var _ io.ReaderAt = (*File)(nil)

// Size reports the file's size at Open.
func (f *File) Size() int64 { return f.size }

// Mapped reports whether the file is memory-mapped (Bytes is non-nil for a
// non-empty file).
func (f *File) Mapped() bool { return f.data != nil }

// Bytes returns the mapped bytes, or nil if the file is not mapped. The slice
// is valid until Close and must not be written.
func (f *File) Bytes() []byte { return f.data }

// ReadAt implements io.ReaderAt.
func (f *File) ReadAt(p []byte, off int64) (int, error) {
	if f.data != nil {
		if off < 0 {
			return 0, errors.New("mmap: negative offset")
		}
		if off >= int64(len(f.data)) {
			return 0, io.EOF
		}
		n := copy(p, f.data[off:])
		if n < len(p) {
			return n, io.EOF
		}
		return n, nil
	}
	if f.f == nil {
		return 0, ErrClosed
	}
	return f.f.ReadAt(p, off)
}

func openFile(path string) (*os.File, int64, error) {
	fh, err := os.Open(path)
	if err != nil {
		return nil, 0, err
	}
	st, err := fh.Stat()
	if err != nil {
		fh.Close()
		return nil, 0, err
	}
	if !st.Mode().IsRegular() {
		fh.Close()
		return nil, 0, &os.PathError{Op: "mmap", Path: path, Err: errors.New("not a regular file")}
	}
	return fh, st.Size(), nil
}

// pageRange widens [off, off+n) to whole pages within [0, size).
func pageRange(off, n, size int64, page int64) (int64, int64) {
	if off < 0 {
		n += off
		off = 0
	}
	end := off + n
	if end > size {
		end = size
	}
	start := off &^ (page - 1)
	if end <= start {
		return 0, 0
	}
	// A madvise length need not be a page multiple; the kernel rounds it up.
	return start, end - start
}
