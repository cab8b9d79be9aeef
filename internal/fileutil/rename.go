package fileutil

import (
	"errors"
	"io/fs"
	"os"
)

type linkError = os.LinkError

// renameCheck is RenameNoReplace without system support.
func renameCheck(from, to string) error {
	if _, err := os.Lstat(to); err == nil {
		return &linkError{Op: "rename", Old: from, New: to, Err: fs.ErrExist}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return os.Rename(from, to)
}
