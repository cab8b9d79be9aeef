//go:build !linux

package fileutil

import "errors"

// Exchange is not available here: it returns errors.ErrUnsupported.
func Exchange(a, b string) error { return errors.ErrUnsupported }

// RenameNoReplace renames from to to, failing with an error matching
// fs.ErrExist if to exists. Here it checks, then renames; that leaves a
// window of a few microseconds in which a concurrent writer may win.
func RenameNoReplace(from, to string) error { return renameCheck(from, to) }
