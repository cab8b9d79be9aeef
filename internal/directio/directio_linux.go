//go:build linux

package directio

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// File is a file opened for O_DIRECT reads.
type File struct{ fd int }

// Open opens path read-only with O_DIRECT. It fails (EINVAL) on file
// systems that do not support O_DIRECT.
func Open(path string) (*File, error) {
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_DIRECT|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, &os.PathError{Op: "open O_DIRECT", Path: path, Err: err}
	}
	return &File{fd: fd}, nil
}

// ReadAt reads len(p) bytes at off, bypassing the page cache. p (address
// and length) and off must be Align-aligned. It returns fewer bytes than
// len(p), and a nil error, only at the end of the file. A file system that
// refuses O_DIRECT reads gives EINVAL.
func (f *File) ReadAt(p []byte, off int64) (int, error) {
	got := 0
	for got < len(p) {
		n, err := unix.Pread(f.fd, p[got:], off+int64(got))
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return got, err
		}
		if n == 0 {
			break
		}
		got += n
		if got%Align != 0 {
			break // the end of the file
		}
	}
	return got, nil
}

// Close closes the file.
func (f *File) Close() error { return unix.Close(f.fd) }

// CacheRoom reports how many bytes of page cache the calling process can
// keep: MemAvailable from /proc/meminfo or, if smaller, the memory limit
// of the process's cgroup (the tightest of its ancestors': cgroup v1
// hierarchical_memory_limit, cgroup v2 memory.max) less the cgroup's
// anonymous memory (v1 total_rss, v2 anon). ok is false if MemAvailable
// cannot be read.
func CacheRoom() (n int64, ok bool) {
	b, err := os.ReadFile("/proc/meminfo")
	if err != nil {
		return 0, false
	}
	avail, ok := statValue(b, "MemAvailable")
	if !ok {
		return 0, false
	}
	limit, anon := cgroupLimit()
	return room(avail, limit, anon), true
}

// cgroupLimit returns this process's cgroup memory limit and anonymous
// memory (limit 0 if none is found).
func cgroupLimit() (limit, anon int64) {
	b, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return 0, 0
	}
	p, v2, ok := cgroupPath(b)
	if !ok {
		return 0, 0
	}
	if !v2 {
		// The mount may show the whole hierarchy or (in a cgroup
		// namespace) only this process's part of it.
		for _, dir := range []string{filepath.Join("/sys/fs/cgroup/memory", p), "/sys/fs/cgroup/memory"} {
			st, err := os.ReadFile(filepath.Join(dir, "memory.stat"))
			if err != nil {
				continue
			}
			limit, _ = statValue(st, "hierarchical_memory_limit")
			anon, _ = statValue(st, "total_rss")
			return limit, anon
		}
		return 0, 0
	}
	dir := filepath.Join("/sys/fs/cgroup", p)
	if st, err := os.ReadFile(filepath.Join(dir, "memory.stat")); err == nil {
		anon, _ = statValue(st, "anon")
	}
	for ; strings.HasPrefix(dir, "/sys/fs/cgroup"); dir = filepath.Dir(dir) {
		mb, err := os.ReadFile(filepath.Join(dir, "memory.max"))
		if err == nil {
			if v, err := strconv.ParseInt(strings.TrimSpace(string(mb)), 10, 64); err == nil && (limit == 0 || v < limit) {
				limit = v
			}
		}
		if dir == "/sys/fs/cgroup" {
			break
		}
	}
	return limit, anon
}
