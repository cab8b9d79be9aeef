package fileutil

import (
	"errors"
	"fmt"
)

// ErrLocked is matched (errors.Is) by the error of Lock when another
// process holds the lock.
var ErrLocked = errors.New("locked by another process")

// LockedError says that Path is locked by another process, PID if known
// (0 otherwise).
type LockedError struct {
	Path string
	PID  int
}

func (e *LockedError) Error() string {
	if e.PID > 0 {
		return fmt.Sprintf("%s is locked by process %d", e.Path, e.PID)
	}
	return fmt.Sprintf("%s is locked by another process", e.Path)
}

// Is makes errors.Is(err, ErrLocked) true.
func (e *LockedError) Is(target error) bool { return target == ErrLocked }
