//go:build unix

package fileutil

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// Locker is an exclusive lock taken by Lock.
type Locker struct {
	f    *os.File
	path string
}

// Lock takes an exclusive advisory lock (flock) on the file path, which it
// creates if needed and in which it writes this process's id. It does not
// wait: if another process holds the lock it fails at once with a
// *LockedError. Release unlocks and removes the file. The lock ends with
// the process, so a killed holder leaves at most an unlocked file that the
// next Lock reuses.
func Lock(path string) (*Locker, error) {
	for range 100 {
		f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
		if err != nil {
			return nil, err // a *PathError naming the lock file
		}
		err = unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB)
		if errors.Is(err, unix.EWOULDBLOCK) {
			b := make([]byte, 32)
			n, _ := f.ReadAt(b, 0)
			f.Close()
			pid, _ := strconv.Atoi(strings.TrimSpace(string(b[:n])))
			return nil, &LockedError{Path: path, PID: pid}
		}
		if err != nil {
			f.Close()
			return nil, fmt.Errorf("lock %s: %w", path, err)
		}
		// The holder removes the file on Release: if we locked a file
		// that is no longer at path, try again with the new one.
		fst, err1 := f.Stat()
		pst, err2 := os.Stat(path)
		if err1 != nil || err2 != nil || !os.SameFile(fst, pst) {
			f.Close()
			if err2 != nil && !errors.Is(err2, fs.ErrNotExist) {
				return nil, fmt.Errorf("lock %s: %w", path, err2)
			}
			continue
		}
		if err := f.Truncate(0); err == nil {
			f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
		}
		return &Locker{f: f, path: path}, nil
	}
	return nil, fmt.Errorf("lock %s: the lock file keeps changing", path)
}

// Release removes the lock file and unlocks it. Calling it again does
// nothing.
func (l *Locker) Release() error {
	if l == nil || l.f == nil {
		return nil
	}
	err := os.Remove(l.path)
	if errors.Is(err, fs.ErrNotExist) {
		err = nil
	}
	err = errors.Join(err, l.f.Close()) // closing unlocks
	l.f = nil
	return err
}

// lockDir takes a blocking exclusive flock on the directory itself, for
// short critical sections such as Clean.
func lockDir(dir string) (func(), error) {
	f, err := os.Open(dir)
	if err != nil {
		return nil, err
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX); err != nil {
		f.Close()
		return func() {}, nil // a file system without flock: go on unlocked
	}
	return func() { f.Close() }, nil
}

// lockHeld reports whether a process holds the flock on the existing file
// path, without creating, keeping or removing it.
func lockHeld(path string) (bool, error) {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return false, err
	}
	defer f.Close() // closing unlocks
	err = unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB)
	if errors.Is(err, unix.EWOULDBLOCK) {
		return true, nil
	}
	return false, err
}
