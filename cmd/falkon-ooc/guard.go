package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"strings"

	"github.com/falkon-ooc/falkon-ooc/chunkstore"
	"github.com/falkon-ooc/falkon-ooc/chunkstore/ingest"
	"github.com/falkon-ooc/falkon-ooc/internal/fileutil"
)

// Guards that run before the first pass over the data: an output that
// would clobber an input or a store is refused, an output that cannot be
// written is found at once, and what killed runs left in the output's
// directory is removed.

// prepareOut checks --out (flag names it in messages) against the inputs
// (from inputPaths) and its directory before any work (checkOutPath), then
// that its directory is writable (a temporary file is created and removed
// there). Then the leftovers of dead processes in that directory are
// removed and listed on stderr.
func prepareOut(e *env, flag, out string, dirOK bool, inputs ...string) error {
	if out == "" || out == "-" {
		return nil
	}
	if err := checkOutPath(flag, out, dirOK, inputs); err != nil {
		return err
	}
	abs, err := filepath.Abs(out)
	if err != nil {
		return fmt.Errorf("%s %s: %w", flag, clipArg(out), err)
	}
	dir := filepath.Dir(abs)
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
		fmt.Fprintf(e.stderr, "falkon-ooc: removed leftover %s\n", oneLine(l.String()))
	}
	if err != nil {
		fmt.Fprintf(e.stderr, "falkon-ooc: warning: %s\n", oneLine(err.Error()))
	}
	return nil
}

// checkOutPath makes prepareOut's checks that write nothing: --out must
// not be, or hold (a directory it replaces), or lie inside, an input, nor
// lie inside a store (compared by device and inode after resolving
// links), and must not be a directory unless dirOK. fit and tune run it
// before any work.
func checkOutPath(flag, out string, dirOK bool, inputs []string) error {
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
		if err := checkClobber(output{out, flag, "", dirOK}, out, inputs); err != nil {
			return err
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

// inputPaths returns every path the inputs name, for the clobber checks:
// each argument as given (a file, a directory or a store), then the files
// a directory walk or a glob expands it into (ingest.Files, the list the
// commands read). "-" (standard input) names no file. An argument that
// expands to nothing is kept as given: the command reports it later.
func inputPaths(args ...string) []string {
	var out []string
	for _, a := range args {
		if a == "" || a == "-" {
			continue
		}
		out = append(out, a)
		if isStore(a) {
			continue
		}
		files, err := ingest.Files([]string{a})
		if err != nil {
			continue
		}
		for _, f := range files {
			if f != a {
				out = append(out, f)
			}
		}
	}
	return out
}

// output is a file or directory a command writes: the flag that names it,
// for a side file (MODEL.json beside --out MODEL) what it holds, and
// whether it is a directory the command replaces (a store).
type output struct {
	path, flag, what string
	dir              bool
}

// describe names the output in a message: "--out m.csv", or for a side
// file "--out m: its summary m.json".
func (o output) describe(flagValue string) string {
	if o.what == "" {
		return fmt.Sprintf("%s %s", o.flag, clipArg(o.path))
	}
	return fmt.Sprintf("%s %s: its %s %s", o.flag, clipArg(flagValue), o.what, clipArg(o.path))
}

// checkClobber refuses, as a usage error and before any work, an output
// that is one of the inputs (device and inode compared, so links and other
// spellings count) or a directory that holds one (a store fit would
// replace). inputs come from inputPaths; flagValue is the value of the
// output's flag.
func checkClobber(out output, flagValue string, inputs []string) error {
	st, err := os.Stat(out.path)
	if err != nil {
		return nil // nothing there yet: nothing to destroy
	}
	for _, in := range inputs {
		ist, err := os.Stat(in)
		if err != nil {
			continue
		}
		if os.SameFile(st, ist) {
			return usagef("%s is the input %s: writing it would destroy the input; choose another %s", out.describe(flagValue), clipArg(in), out.flag)
		}
		if !st.IsDir() || !out.dir {
			continue // a directory where a file goes is refused later
		}
		// An input inside the output directory, links resolved.
		real, err := filepath.EvalSymlinks(in)
		if err != nil {
			continue
		}
		for d := filepath.Dir(real); ; d = filepath.Dir(d) {
			if dst, err := os.Stat(d); err == nil && os.SameFile(st, dst) {
				return usagef("%s holds the input %s: replacing it would destroy the input; choose another %s", out.describe(flagValue), clipArg(in), out.flag)
			}
			if filepath.Dir(d) == d {
				break
			}
		}
	}
	return nil
}

// fitOutputs lists what fit and tune write for --out MODEL: the model, its
// summary MODEL.json, its checkpoint MODEL.ckpt, and with Parquet/CSV
// inputs and no --cache the store they are ingested into, MODEL.store,
// with its key MODEL.store.key.
func (o *fitOpts) fitOutputs(rawInputs bool) []output {
	outs := []output{
		{o.out, "--out", "", false},
		{o.out + ".json", "--out", "summary", false},
	}
	if !o.noCheckpoint {
		outs = append(outs, output{o.out + ".ckpt", "--out", "checkpoint", false},
			output{o.out + ".ckpt.basis", "--out", "Nyström basis", false})
	}
	if rawInputs && o.input.cache == "" {
		outs = append(outs, output{o.out + ".store", "--out", "store of the ingested inputs", true},
			output{o.out + ".store.key", "--out", "store's key", false})
	}
	if o.plot != "" {
		outs = append(outs, output{o.plot, "--plot", "", false})
	}
	return outs
}

// checkFitClobber refuses, before any input is read, a fit or tune whose
// outputs (fitOutputs) would overwrite one of its inputs: the training
// inputs after the directory walk and glob expansion, and --val's.
func (o *fitOpts) checkFitClobber(args []string, rawInputs bool) error {
	inputs := inputPaths(append(append([]string(nil), args...), o.val)...)
	if err := checkOutPath("--out", o.out, false, inputs); err != nil {
		return err
	}
	for _, out := range o.fitOutputs(rawInputs) {
		if err := checkClobber(out, o.out, inputs); err != nil {
			return err
		}
	}
	return nil
}

// notOwnErr is the refusal to replace an existing side file that is not
// fit's own.
func notOwnErr(out output, flagValue, kind, fix string) error {
	return fmt.Errorf("%s exists and is not %s: not replacing it; %s, or choose another %s", out.describe(flagValue), kind, fix, out.flag)
}

// checkOwnOutputs refuses, before any work, a fit or tune that would
// replace an existing file or directory that is not provably its own
// (unless --force): --out must be a model (magic "FKOM"), MODEL.json a
// model summary, MODEL.ckpt a checkpoint ("FKCP"), MODEL.ckpt.basis a
// Nyström basis ("FKNB"), MODEL.store a store
// with MODEL.store.key beside it (the key fit writes), MODEL.store.key
// such a key, --plot a PNG.
func (o *fitOpts) checkOwnOutputs(rawInputs bool) error {
	if o.force {
		return nil
	}
	const force = "pass --force to replace it"
	for _, out := range o.fitOutputs(rawInputs) {
		st, err := os.Lstat(out.path)
		if err != nil {
			continue // absent: nothing to lose
		}
		regular := st.Mode().IsRegular()
		switch {
		case out.path == o.out:
			if st.IsDir() {
				continue // refused by prepareOut: "is a directory"
			}
			if !regular || !hasPrefixFile(out.path, "FKOM") {
				return notOwnErr(out, o.out, "a falkon-ooc model", force)
			}
		case out.path == o.out+".json":
			if !regular || !isModelSummary(out.path) {
				return notOwnErr(out, o.out, "the summary of a falkon-ooc model", force)
			}
		case out.path == o.out+".ckpt":
			if !regular || !hasPrefixFile(out.path, "FKCP") {
				return notOwnErr(out, o.out, "a falkon-ooc checkpoint", force)
			}
		case out.path == o.out+".ckpt.basis":
			if !regular || !hasPrefixFile(out.path, "FKNB") {
				return notOwnErr(out, o.out, "a falkon-ooc Nyström basis", force)
			}
		case out.path == o.out+".store":
			if !st.IsDir() || !isStoreKey(o.out+".store.key") {
				return notOwnErr(out, o.out, "fit's (no "+clipArg(o.out+".store.key")+" beside it)",
					"pass --cache DIR to keep fit's store elsewhere, --force to replace it")
			}
		case out.path == o.out+".store.key":
			if !regular || !isStoreKey(out.path) {
				return notOwnErr(out, o.out, "a key written by fit", force)
			}
		case out.flag == "--plot":
			if !regular || !hasPrefixFile(out.path, "\x89PNG") {
				return notOwnErr(out, o.out, "a PNG image", force)
			}
		}
	}
	return nil
}

// hasPrefixFile reports whether the file at path starts with prefix.
func hasPrefixFile(path, prefix string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	b := make([]byte, len(prefix))
	_, err = io.ReadFull(f, b)
	return err == nil && string(b) == prefix
}

// isModelSummary reports whether path holds a model's summary, as
// saveModel writes it: a JSON object whose "format" is "falkon-ooc model".
func isModelSummary(path string) bool {
	st, err := os.Stat(path)
	if err != nil || st.Size() > 64<<20 {
		return false
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return false
	}
	var v struct {
		Format string `json:"format"`
	}
	return json.Unmarshal(b, &v) == nil && v.Format == "falkon-ooc model"
}

// isStoreKey reports whether path holds a key as trainingStore writes it:
// 16 lower-case hex digits and a newline.
func isStoreKey(path string) bool {
	st, err := os.Stat(path)
	if err != nil || !st.Mode().IsRegular() || st.Size() != 17 {
		return false
	}
	b, err := os.ReadFile(path)
	if err != nil || len(b) != 17 || b[16] != '\n' {
		return false
	}
	return strings.Trim(string(b[:16]), "0123456789abcdef") == ""
}
