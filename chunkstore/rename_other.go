//go:build !linux

package chunkstore

import "errors"

// exchange is not available here; replaceDir falls back to two renames.
func exchange(a, b string) error { return errors.ErrUnsupported }
