package main

import (
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"

	"github.com/falkon-ooc/falkon-ooc/chunkstore"
	"github.com/falkon-ooc/falkon-ooc/internal/fileutil"
)

// Guards that run before the first pass over the data: an output that
// would clobber an input or a store is refused, an output that cannot be
// written is found at once, and what killed runs left in the output's
// directory is removed.

// prepareOut checks --out (flag names it in messages) against the inputs
// and its directory before any work: it must not be, or lie inside, an
// input or a store (compared by device and inode after resolving links);
// it must not be a directory unless dirOK; its directory must be writable
// (a temporary file is created and removed there). Then the leftovers of
// dead processes in that directory are removed and listed on stderr.
func prepareOut(e *env, flag, out string, dirOK bool, inputs ...string) error {
	if out == "" || out == "-" {
		return nil
	}
	abs, err := filepath.Abs(out)
	if err != nil {
		return fmt.Errorf("%s %s: %w", flag, clipArg(out), err)
	}
	dir := filepath.Dir(abs)
	if st, err := os.Stat(abs); err == nil {
		if st.IsDir() && !dirOK {
			return fmt.Errorf("%s %s is a directory; name a file", flag, clipArg(out))
		}
		for _, in := range inputs {
			if ist, err := os.Stat(in); err == nil && os.SameFile(st, ist) {
				return fmt.Errorf("%s %s is the input %s: writing it would destroy the input; choose another --out", flag, clipArg(out), clipArg(in))
			}
		}
	}
	// Every directory above --out, links resolved, against the inputs and
	// stores.
	real, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return fmt.Errorf("%s %s: its directory: %w", flag, clipArg(out), err)
	}
	for d := real; ; d = filepath.Dir(d) {
		st, err := os.Stat(d)
		if err == nil {
			if m, err := os.Stat(filepath.Join(d, chunkstore.ManifestName)); err == nil && m.Mode().IsRegular() {
				return fmt.Errorf("%s %s lies inside the store %s, which it would damage; choose another --out", flag, clipArg(out), d)
			}
			for _, in := range inputs {
				if ist, err := os.Stat(in); err == nil && ist.IsDir() && os.SameFile(st, ist) {
					return fmt.Errorf("%s %s lies inside the input %s; choose another --out", flag, clipArg(out), clipArg(in))
				}
			}
		}
		if filepath.Dir(d) == d {
			break
		}
	}
	f, err := fileutil.CreateTemp(dir, filepath.Base(abs))
	if err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return fmt.Errorf("%s %s: cannot write in %s: %w", flag, clipArg(out), filepath.Dir(out), err)
	}
	f.Close()
	os.Remove(f.Name())
	removed, err := fileutil.Clean(dir)
	for _, l := range removed {
		fmt.Fprintf(e.stderr, "falkon-ooc: removed leftover %s\n", l)
	}
	if err != nil {
		fmt.Fprintf(e.stderr, "falkon-ooc: warning: %v\n", err)
	}
	return nil
}

// maxTarget bounds |y|: the fit sums squares of targets and residuals
// over up to ~1e8 rows, which overflows float64 beyond about 1e150.
const maxTarget = 1e150

// checkTargets refuses targets whose squares would overflow in the fit,
// before its first pass (once: NaN at save, after every iteration).
func checkTargets(r *chunkstore.Reader, storePath string) error {
	for _, c := range r.Manifest().Targets {
		if a := math.Max(math.Abs(c.Min), math.Abs(c.Max)); a > maxTarget {
			return fmt.Errorf("store %s: target %q reaches %g; beyond %g its squares overflow float64 in the fit: rescale it (divide by a power of ten) and ingest again", storePath, clipArg(c.Name), a, maxTarget)
		}
	}
	return nil
}

// clipArg shortens a user value to at most 200 bytes for a message.
func clipArg(s string) string {
	const max = 200
	if len(s) <= max {
		return s
	}
	i := max
	for i > 0 && s[i]&0xC0 == 0x80 {
		i--
	}
	return fmt.Sprintf("%s… (%d bytes)", s[:i], len(s))
}
