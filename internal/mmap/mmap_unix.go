//go:build unix && !nommap

package mmap

import (
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// File is a read-only view of a file: mapped into memory where the platform
// allows it, else read through the open file.
type File struct {
	data []byte
	f    *os.File // only when not mapped (OpenRead, empty files)
	size int64
}

// OpenRead opens path for reading through ReadAt (pread), without mapping
// it: Bytes is nil, WillNeed and Sequential become fadvise(2) hints to the
// page cache, and DontNeed does nothing (there are no mapped pages, and the
// page cache is the kernel's to manage).
func OpenRead(path string) (*File, error) {
	fh, size, err := openFile(path)
	if err != nil {
		return nil, err
	}
	return &File{f: fh, size: size}, nil
}

// Open maps path read-only. Empty files, and files on file systems that
// cannot be mapped, are not mapped: Bytes is then nil and ReadAt reads the
// file.
func Open(path string) (*File, error) {
	fh, size, err := openFile(path)
	if err != nil {
		return nil, err
	}
	if size == 0 {
		return &File{f: fh}, nil
	}
	if size != int64(int(size)) {
		fh.Close()
		return nil, fmt.Errorf("mmap %s: file too large (%d bytes) for this platform", path, size)
	}
	data, err := unix.Mmap(int(fh.Fd()), 0, int(size), unix.PROT_READ, unix.MAP_SHARED)
	if err != nil {
		// Some file systems (FUSE, some network mounts) cannot map
		// files: read them instead.
		return &File{f: fh, size: size}, nil
	}
	if err := fh.Close(); err != nil { // the mapping keeps the file referenced
		unix.Munmap(data)
		return nil, err
	}
	return &File{data: data, size: size}, nil
}

// Close unmaps the file. Calling it twice is harmless.
func (f *File) Close() error {
	if f.data != nil {
		d := f.data
		f.data = nil
		return unix.Munmap(d)
	}
	if f.f != nil {
		err := f.f.Close()
		f.f = nil
		return err
	}
	return nil
}

var pageSize = int64(os.Getpagesize())

func (f *File) advise(off, n int64, advice int) error {
	if f.data == nil {
		return nil
	}
	s, l := pageRange(off, n, int64(len(f.data)), pageSize)
	if l == 0 {
		return nil
	}
	return unix.Madvise(f.data[s:s+l], advice)
}

// DontNeed tells the kernel the pages covering [off, off+n) will not be
// needed soon, so resident memory can drop; later reads fault them back in
// from the page cache or the file. Pages shared with neighbouring ranges
// are included (harmless: they are re-read on demand).
func (f *File) DontNeed(off, n int64) error { return f.advise(off, n, unix.MADV_DONTNEED) }

// WillNeed asks the kernel to read [off, off+n) ahead asynchronously.
func (f *File) WillNeed(off, n int64) error {
	if f.data == nil {
		return f.fadvise(off, n, fadvWillNeed)
	}
	return f.advise(off, n, unix.MADV_WILLNEED)
}

// Sequential says the whole file will be read mostly in order (for a file
// read through ReadAt, the kernel then reads ahead further).
func (f *File) Sequential() error {
	if f.data == nil {
		return f.fadvise(0, f.size, fadvSequential)
	}
	return f.advise(0, f.size, unix.MADV_SEQUENTIAL)
}

// fadvise gives the page cache advice about [off, off+n) of an unmapped
// file (a no-op where fadvise(2) does not exist).
func (f *File) fadvise(off, n int64, advice int) error {
	if f.f == nil {
		return nil
	}
	s, l := pageRange(off, n, f.size, pageSize)
	if l == 0 {
		return nil
	}
	return fadvise(int(f.f.Fd()), s, l, advice)
}
