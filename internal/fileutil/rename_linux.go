//go:build linux

package fileutil

import "golang.org/x/sys/unix"

// Exchange atomically swaps the directories (or files) a and b
// (renameat2 RENAME_EXCHANGE). It fails on file systems that do not
// support it, and with errors.ErrUnsupported off Linux.
func Exchange(a, b string) error {
	return unix.Renameat2(unix.AT_FDCWD, a, unix.AT_FDCWD, b, unix.RENAME_EXCHANGE)
}

// RenameNoReplace renames from to to, failing with an error matching
// fs.ErrExist if to exists (renameat2 RENAME_NOREPLACE). Where the system
// cannot do this atomically it checks, then renames; that leaves a window
// of a few microseconds in which a concurrent writer may win.
func RenameNoReplace(from, to string) error {
	err := unix.Renameat2(unix.AT_FDCWD, from, unix.AT_FDCWD, to, unix.RENAME_NOREPLACE)
	if err == unix.EINVAL || err == unix.ENOSYS || err == unix.ENOTSUP {
		return renameCheck(from, to)
	}
	if err != nil {
		return &linkError{Op: "rename", Old: from, New: to, Err: err}
	}
	return nil
}
