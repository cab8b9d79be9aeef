package fileutil

import (
	"bytes"
	"errors"
	"fmt"
	"io"
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
	Kind  string `json:"kind"`  // what proved it falkon-ooc's (see Owned)
}

func (l Leftover) String() string {
	return fmt.Sprintf("%s (%s, from process %d, no longer running)", l.Path, FormatBytes(l.Bytes), l.Owner.PID)
}

// ParseTemp reports whether name (a base name) is a temporary name made by
// TempName, "." + BASE + ".falkon-tmp-PID-START-RAND", and its owner. old
// is true for the older shape "." + BASE + ".tmp-PID-START-RAND". Either
// is only a candidate, which a user may write too: it is removed only when
// its content proves it falkon-ooc's (Owned).
func ParseTemp(name string) (o Owner, old, ok bool) {
	if !strings.HasPrefix(name, ".") {
		return Owner{}, false, false
	}
	mark := tmpMark
	i := strings.LastIndex(name, mark)
	if i < 0 {
		mark, old = oldTmpMark, true
		i = strings.LastIndex(name, mark)
	}
	if i <= 0 {
		return Owner{}, false, false
	}
	parts := strings.Split(name[i+len(mark):], "-")
	if len(parts) != 3 {
		return Owner{}, false, false
	}
	for _, p := range parts {
		if p == "" || strings.Trim(p, "0123456789") != "" {
			return Owner{}, false, false
		}
	}
	pid, err1 := strconv.Atoi(parts[0])
	start, err2 := strconv.ParseUint(parts[1], 10, 64)
	_, err3 := strconv.ParseUint(parts[2], 10, 64)
	if err1 != nil || err2 != nil || err3 != nil || pid <= 0 {
		return Owner{}, false, false
	}
	return Owner{PID: pid, Start: start}, old, true
}

// magics are the first bytes of the files falkon-ooc writes in binary:
// models ("FKOM", ooc/model.go), checkpoints ("FKCP", ooc/checkpoint.go),
// Nyström bases kept beside them ("FKNB", ooc/basiscache.go) and chunk
// store segments ("FOOC", chunkstore/format.go), named by magicKinds.
// Tests in those packages check that Owned recognises their files.
var (
	magics     = [][]byte{[]byte("FKOM"), []byte("FKCP"), []byte("FKNB"), []byte("FOOC")}
	magicKinds = []string{"model", "checkpoint", "Nyström basis", "segment"}
)

// Owned reports whether the temporary entry at path (a name that
// ParseTemp accepts) is provably falkon-ooc's, and what it is. Only
// content proves it, never a name, a size or an extension:
//
//   - a directory holding DirMarker with its text ("temporary
//     directory"): every temporary directory (MkdirTemp), and every file
//     WriteFile writes, which it builds inside such a directory;
//   - a directory holding a store's files and nothing else: at least one
//     segment (magic "FOOC"), a meta.json that is a JSON object, empty
//     files and directories of the same kind ("store": a store moved
//     aside while a new one takes its place);
//   - a regular file starting with a model's, checkpoint's, Nyström
//     basis's or segment's magic number ("model", "checkpoint", …).
//
// Links, empty files, files of any other content (a user's
// .data.csv.falkon-tmp-1-2-3 as much as a text output of an older
// version) and anything else are never falkon-ooc's, whichever name
// shape they have.
func Owned(path string) (kind string, ok bool) {
	st, err := os.Lstat(path)
	if err != nil {
		return "", false
	}
	switch {
	case st.IsDir():
		if b, err := os.ReadFile(filepath.Join(path, DirMarker)); err == nil && string(b) == dirMarkerText {
			return "temporary directory", true
		}
		if segs, ok := storeLike(path, 0); ok && segs > 0 {
			return "store", true
		}
		return "", false
	case st.Mode().IsRegular():
		if k := magicKind(path); k != "" {
			return k, true
		}
	}
	return "", false
}

// magicKind names the file at path by its first four bytes, or returns "".
func magicKind(path string) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	var b [4]byte
	if _, err := io.ReadFull(f, b[:]); err != nil {
		return ""
	}
	for i, m := range magics {
		if bytes.Equal(b[:], m) {
			return magicKinds[i]
		}
	}
	return ""
}

// storeLike reports whether every entry under dir is a store's: segment
// files (magic "FOOC"), a meta.json that is a JSON object, empty files,
// DirMarker, and directories of the same kind (at most 3 levels: ingest
// builds a store inside a temporary directory), and how many segments it
// holds.
func storeLike(dir string, depth int) (segments int, ok bool) {
	if depth > 3 {
		return 0, false
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		return 0, false
	}
	for _, e := range ents {
		p := filepath.Join(dir, e.Name())
		switch {
		case e.IsDir():
			n, ok := storeLike(p, depth+1)
			if !ok {
				return 0, false
			}
			segments += n
		case e.Type().IsRegular():
			if e.Name() == DirMarker {
				continue
			}
			if magicKind(p) == "segment" {
				segments++
				continue
			}
			fi, err := e.Info()
			if err != nil {
				return 0, false
			}
			if fi.Size() == 0 {
				continue
			}
			if e.Name() == "meta.json" {
				b, err := os.ReadFile(p)
				if err == nil && bytes.HasPrefix(bytes.TrimSpace(b), []byte("{")) {
					continue
				}
			}
			return 0, false
		default:
			return 0, false
		}
	}
	return segments, true
}

// Leftovers lists what Clean would remove in dir (not its subdirectories):
// temporary names (ParseTemp) whose owner is dead and whose entry is
// provably falkon-ooc's (Owned), and lock files (LockSuffix) that no
// process holds. It never lists a live process's files, nor a user's: a
// name that merely looks temporary is left alone. It removes nothing.
func Leftovers(dir string) ([]Leftover, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var out []Leftover
	for _, e := range ents {
		p := filepath.Join(dir, e.Name())
		if l, ok := staleLock(p, e); ok {
			out = append(out, l)
			continue
		}
		o, _, ok := ParseTemp(e.Name())
		if !ok || o.Alive() {
			continue
		}
		kind, ok := Owned(p)
		if !ok {
			continue
		}
		out = append(out, Leftover{Path: p, Owner: o, Bytes: size(p), Kind: kind})
	}
	return out, nil
}

// staleLock reports whether the entry at p is a lock file made by Lock
// (".NAME" + LockSuffix, a regular file holding a process id) that no
// process holds.
func staleLock(p string, e fs.DirEntry) (Leftover, bool) {
	name := e.Name()
	if !strings.HasPrefix(name, ".") || !strings.HasSuffix(name, LockSuffix) || !e.Type().IsRegular() {
		return Leftover{}, false
	}
	fi, err := e.Info()
	if err != nil || fi.Size() > 32 {
		return Leftover{}, false
	}
	b, err := os.ReadFile(p)
	if err != nil {
		return Leftover{}, false
	}
	s := strings.TrimSpace(string(b))
	pid, err := strconv.Atoi(s)
	if s != "" && (err != nil || pid <= 0) {
		return Leftover{}, false // not a lock file's content
	}
	if held, err := lockHeld(p); err != nil || held {
		return Leftover{}, false
	}
	return Leftover{Path: p, Owner: Owner{PID: pid}, Bytes: int64(len(b)), Kind: "lock"}, true
}

// Clean removes what Leftovers lists in dir and returns what it removed.
// It holds a lock on dir meanwhile, so two Cleans do not report the same
// leftover; each entry is checked again just before its removal. On an
// error it returns what it removed until then.
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
		if l.Kind == "lock" {
			lk, err := Lock(l.Path)
			if err != nil {
				continue // taken meanwhile, or gone
			}
			if err := lk.Release(); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return done, fmt.Errorf("clean %s: %w", dir, err)
			}
		} else if err := os.RemoveAll(l.Path); err != nil {
			return done, fmt.Errorf("clean %s: %w", dir, err)
		}
		done = append(done, l)
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
