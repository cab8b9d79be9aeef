package fileutil

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
)

// tmpMark separates the prefix of a temporary name from its owner tag:
// ".falkon-tmp-", a shape no user writes (a user's "photos.tmp-2023-12-25"
// matched the ".tmp-" of rounds 1–4, oldTmpMark).
const (
	tmpMark    = ".falkon-tmp-"
	oldTmpMark = ".tmp-"
)

// TempName returns a fresh temporary name for base in the form
// "." + base + ".falkon-tmp-PID-START-RAND" (no directory), owned by this
// process.
func TempName(base string) string {
	return "." + base + tmpMark + selfTag() + "-" + strconv.FormatUint(rand.Uint64()%1e10, 10)
}

// DirMarker is the file MkdirTemp writes first in every temporary
// directory, holding dirMarkerText: Clean removes a dead owner's
// temporary directory only when it proves the directory is falkon-ooc's
// (see Owned). Unmark removes it before the directory takes its final
// name.
const (
	DirMarker     = ".falkon-tmp"
	dirMarkerText = "falkon-ooc temporary directory: removed by 'falkon-ooc clean' once its owner has died\n"
)

// Unmark removes the DirMarker of a temporary directory made by MkdirTemp,
// before it is renamed to its final name. A missing marker is no error.
func Unmark(dir string) error {
	return ignoreNotExist(os.Remove(filepath.Join(dir, DirMarker)))
}

// MkdirTemp creates a new temporary directory in parent for the final name
// base, with a name from TempName and the permissions of os.Mkdir(name,
// 0o777) (so the umask applies, as it does to the files written in it),
// since the directory becomes the final one, and writes DirMarker in it
// (call Unmark before the rename to the final name).
func MkdirTemp(parent, base string) (string, error) {
	for range 100 {
		name := filepath.Join(parent, TempName(base))
		err := os.Mkdir(name, 0o777)
		if err == nil {
			if err := os.WriteFile(filepath.Join(name, DirMarker), []byte(dirMarkerText), 0o644); err != nil {
				os.RemoveAll(name)
				return "", err
			}
			return name, nil
		}
		if !errors.Is(err, fs.ErrExist) {
			return "", err
		}
	}
	return "", fmt.Errorf("cannot create a temporary directory in %s", parent)
}

// WriteFile creates or replaces path with what fn writes, through a
// file built inside a temporary directory beside path (MkdirTemp, whose
// DirMarker proves the leftover of a killed run falkon-ooc's whatever the
// file holds), fsynced and renamed over path; the directory is then
// fsynced and the temporary directory removed. On any error, including
// one returned by fn, the temporary directory is removed and path is left
// as it was. perm applies to a newly created file.
func WriteFile(path string, perm os.FileMode, fn func(w io.Writer) error) (err error) {
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	tmpDir, err := MkdirTemp(dir, base)
	if err != nil {
		return fmt.Errorf("create %s: %w", path, err)
	}
	defer func() {
		if rerr := os.RemoveAll(tmpDir); err == nil && rerr != nil {
			err = fmt.Errorf("write %s: %w", path, rerr)
		}
	}()
	tmp := filepath.Join(tmpDir, base)
	f, err := os.OpenFile(tmp, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return fmt.Errorf("create %s: %w", path, err)
	}
	bw := bufio.NewWriterSize(f, 1<<20)
	if err := fn(bw); err != nil {
		f.Close()
		return err
	}
	if err := bw.Flush(); err != nil {
		f.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := f.Chmod(perm); err != nil {
		f.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return fmt.Errorf("sync %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("close %s: %w", path, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("rename into %s: %w", path, err)
	}
	return SyncDir(dir)
}

// SyncDir fsyncs a directory, so that renames and new files in it are
// durable. File systems that cannot sync directories (EINVAL, ENOTSUP) are
// accepted as they are.
func SyncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("sync directory %s: %w", dir, err)
	}
	err = d.Sync()
	if errors.Is(err, syscall.EINVAL) || errors.Is(err, errors.ErrUnsupported) {
		err = nil
	}
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("sync directory %s: %w", dir, err)
	}
	return nil
}

func ignoreNotExist(err error) error {
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	return err
}
