package fileutil

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// LockSuffix ends the names of lock files made by LockPath.
const LockSuffix = ".falkon-lock"

// LockPath returns the lock file that guards the output path: a hidden
// file beside it, "." + base + LockSuffix.
func LockPath(path string) string {
	dir, base := filepath.Split(filepath.Clean(path))
	return filepath.Join(dir, "."+base+LockSuffix)
}

// Leftover is a temporary file or directory whose owner has died, or a lock
// file that nobody holds.
type Leftover struct {
	Path  string `json:"path"`
	Owner Owner  `json:"owner"`
	Bytes int64  `json:"bytes"` // size of the files, recursively
}

func (l Leftover) String() string {
	return fmt.Sprintf("%s (%s, from process %d, no longer running)", l.Path, FormatBytes(l.Bytes), l.Owner.PID)
}

// ParseTemp reports whether name (a base name) is a temporary name made by
// TempName, and its owner.
func ParseTemp(name string) (Owner, bool) {
	i := strings.LastIndex(name, tmpMark)
	if i <= 0 {
		return Owner{}, false
	}
	parts := strings.Split(name[i+len(tmpMark):], "-")
	if len(parts) != 3 {
		return Owner{}, false
	}
	pid, err1 := strconv.Atoi(parts[0])
	start, err2 := strconv.ParseUint(parts[1], 10, 64)
	_, err3 := strconv.ParseUint(parts[2], 10, 64)
	if err1 != nil || err2 != nil || err3 != nil || pid <= 0 {
		return Owner{}, false
	}
	return Owner{PID: pid, Start: start}, true
}

// Leftovers lists the temporary names in dir (not its subdirectories) whose
// owner is dead. It never lists a live process's files.
func Leftovers(dir string) ([]Leftover, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var out []Leftover
	for _, e := range ents {
		o, ok := ParseTemp(e.Name())
		if !ok || o.Alive() {
			continue
		}
		p := filepath.Join(dir, e.Name())
		out = append(out, Leftover{Path: p, Owner: o, Bytes: size(p)})
	}
	return out, nil
}

// Clean removes the leftovers of dead processes in dir (see Leftovers) and
// the lock files (LockSuffix) that no process holds, and returns what it
// removed. It holds a lock on dir meanwhile, so two Cleans do not report
// the same leftover. On an error it returns what it removed until then.
func Clean(dir string) ([]Leftover, error) {
	unlock, err := lockDir(dir)
	if err != nil {
		return nil, fmt.Errorf("clean %s: %w", dir, err)
	}
	defer unlock()
	left, err := Leftovers(dir)
	if err != nil {
		return nil, fmt.Errorf("clean %s: %w", dir, err)
	}
	var done []Leftover
	for _, l := range left {
		if err := os.RemoveAll(l.Path); err != nil {
			return done, fmt.Errorf("clean %s: %w", dir, err)
		}
		done = append(done, l)
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		return done, fmt.Errorf("clean %s: %w", dir, err)
	}
	for _, e := range ents {
		if !strings.HasPrefix(e.Name(), ".") || !strings.HasSuffix(e.Name(), LockSuffix) || !e.Type().IsRegular() {
			continue
		}
		p := filepath.Join(dir, e.Name())
		b, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
		l, err := Lock(p)
		if err != nil {
			continue // held, or gone
		}
		if err := l.Release(); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return done, fmt.Errorf("clean %s: %w", dir, err)
		}
		done = append(done, Leftover{Path: p, Owner: Owner{PID: pid}, Bytes: int64(len(b))})
	}
	return done, nil
}

// size is the total size of the regular files at p, recursively, without
// following links.
func size(p string) int64 {
	var n int64
	filepath.WalkDir(p, func(_ string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if d.Type().IsRegular() {
			if fi, err := d.Info(); err == nil {
				n += fi.Size()
			}
		}
		return nil
	})
	return n
}

// FormatBytes formats a byte count in B, kB, MB or GB (powers of 10).
func FormatBytes(n int64) string {
	switch {
	case n < 1e3:
		return fmt.Sprintf("%d B", n)
	case n < 1e6:
		return fmt.Sprintf("%.1f kB", float64(n)/1e3)
	case n < 1e9:
		return fmt.Sprintf("%.1f MB", float64(n)/1e6)
	default:
		return fmt.Sprintf("%.2f GB", float64(n)/1e9)
	}
}
