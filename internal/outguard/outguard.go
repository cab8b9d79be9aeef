package outguard

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/falkon-ooc/falkon-ooc/chunkstore"
	"github.com/falkon-ooc/falkon-ooc/chunkstore/ingest"
	"github.com/falkon-ooc/falkon-ooc/internal/fileutil"
	"github.com/falkon-ooc/falkon-ooc/internal/table"
)

// Kind is what an existing file at an output's path must hold to be
// replaced without force: the proof, by content, that falkon-ooc wrote it.
type Kind int

const (
	// Any: replaced whatever it holds (falkon-ooc predict --out FILE, as
	// cp replaces its target; inputs are still refused).
	Any Kind = iota
	// Model: a falkon-ooc model, magic "FKOM".
	Model
	// Summary: a model's JSON summary, "format": "falkon-ooc model".
	Summary
	// Checkpoint: a fit's checkpoint, magic "FKCP".
	Checkpoint
	// Basis: a Nyström basis kept beside a checkpoint, magic "FKNB".
	Basis
	// Store: a chunk store directory with the key fit writes beside it
	// (Path + ".key").
	Store
	// StoreKey: that key, 16 lower-case hex digits and a newline.
	StoreKey
	// PNG: a PNG image (a plot).
	PNG
	// Predictions: a Parquet file with falkon-ooc's predictions key in
	// its footer (table.IsPredictions).
	Predictions
)

// what names the kind in a refusal: "… exists and is not a falkon-ooc
// model".
var what = [...]string{
	Any:         "",
	Model:       "a falkon-ooc model",
	Summary:     "the summary of a falkon-ooc model",
	Checkpoint:  "a falkon-ooc checkpoint",
	Basis:       "a falkon-ooc Nyström basis",
	Store:       "fit's",
	StoreKey:    "a key written by fit",
	PNG:         "a PNG image",
	Predictions: "predictions written by falkon-ooc",
}

// Output is a file or directory a command writes.
type Output struct {
	// Path is where it is written.
	Path string
	// Flag names the flag it comes from: "--out", "--plot".
	Flag string
	// Value is that flag's value when Path is a side file derived from it
	// (MODEL.json beside --out MODEL), and What what the side file holds
	// ("summary"); both "" for the flag's own file.
	Value, What string
	// Kind is what an existing file there must hold to be replaced
	// without force.
	Kind Kind
	// Dir says that the output is a directory the command replaces (a
	// store): a directory may stand there, and one that holds an input is
	// refused.
	Dir bool
}

// describe names the output in a message: "--out m.csv", or for a side
// file "--out m: its summary m.json".
func (o Output) describe() string {
	if o.What == "" {
		return fmt.Sprintf("%s %s", o.Flag, Clip(o.Path))
	}
	return fmt.Sprintf("%s %s: its %s %s", o.Flag, Clip(o.Value), o.What, Clip(o.Path))
}

// Error is a refusal of Check or Prepare. Usage marks a mistake on the
// command line (the commands exit 2); the others exit 1.
type Error struct {
	Usage bool
	msg   string
}

func (e *Error) Error() string { return e.msg }

func usagef(format string, a ...any) error {
	return &Error{Usage: true, msg: fmt.Sprintf(format, a...)}
}
func errorf(format string, a ...any) error { return &Error{msg: fmt.Sprintf(format, a...)} }

// FitOutputs lists what fit and tune write for --out MODEL: the model,
// its summary MODEL.json, with checkpoint its checkpoint MODEL.ckpt and
// the Nyström basis MODEL.ckpt.basis, with store the store of ingested
// inputs MODEL.store and its key MODEL.store.key, and plot (--plot; ""
// for none).
func FitOutputs(model, plot string, checkpoint, store bool) []Output {
	side := func(suffix, what string, k Kind, dir bool) Output {
		return Output{Path: model + suffix, Flag: "--out", Value: model, What: what, Kind: k, Dir: dir}
	}
	outs := []Output{{Path: model, Flag: "--out", Kind: Model}, side(".json", "summary", Summary, false)}
	if checkpoint {
		outs = append(outs, side(".ckpt", "checkpoint", Checkpoint, false), side(".ckpt.basis", "Nyström basis", Basis, false))
	}
	if store {
		outs = append(outs, side(".store", "store of the ingested inputs", Store, true), side(".store.key", "store's key", StoreKey, false))
	}
	if plot != "" {
		outs = append(outs, Output{Path: plot, Flag: "--plot", Kind: PNG})
	}
	return outs
}

// IsURL reports whether path names an object (s3://, gs://, …), which
// Check leaves to the command.
func IsURL(path string) bool { return ingest.IsURL(path) }

// Check refuses, before any work and writing nothing, outputs that would
// destroy an input, a store, each other, or (unless force) a file that is
// not falkon-ooc's own kind of output: see the package doc. inputs come
// from Inputs. An output whose Flag's own file (What "") is a directory
// is refused unless Dir.
func Check(outs []Output, inputs []string, force bool) error {
	for i, a := range outs {
		if IsURL(a.Path) {
			continue
		}
		for _, b := range outs[i+1:] {
			if !IsURL(b.Path) && same(a.Path, b.Path) {
				return usagef("%s and %s name the same file: one would overwrite the other; choose another %s", a.describe(), b.describe(), b.Flag)
			}
		}
	}
	for _, o := range outs {
		if o.What == "" && !IsURL(o.Path) {
			if err := checkPath(o, inputs); err != nil {
				return err
			}
		}
	}
	for _, o := range outs {
		if err := checkClobber(o, inputs); err != nil {
			return err
		}
	}
	if force {
		return nil
	}
	for _, o := range outs {
		if err := checkOwn(o); err != nil {
			return err
		}
	}
	return nil
}

// same reports whether a and b name the same file: the same absolute
// path, or the same device and inode.
func same(a, b string) bool {
	aa, err1 := filepath.Abs(a)
	ab, err2 := filepath.Abs(b)
	if err1 == nil && err2 == nil && aa == ab {
		return true
	}
	sa, err1 := os.Stat(a)
	sb, err2 := os.Stat(b)
	return err1 == nil && err2 == nil && os.SameFile(sa, sb)
}

// checkPath makes the checks of o's own path that write nothing: it must
// not be a directory unless o.Dir, nor be, or hold, an input, nor lie
// inside an input or a store (compared by device and inode after
// resolving links).
func checkPath(o Output, inputs []string) error {
	abs, err := filepath.Abs(o.Path)
	if err != nil {
		return errorf("%s %s: %v", o.Flag, Clip(o.Path), err)
	}
	dir := filepath.Dir(abs)
	if st, err := os.Stat(abs); err == nil {
		if st.IsDir() && !o.Dir {
			return errorf("%s %s is a directory; name a file", o.Flag, Clip(o.Path))
		}
		if err := checkClobber(o, inputs); err != nil {
			return err
		}
	}
	// Every directory above the output, links resolved, against the
	// inputs and stores.
	real, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return errorf("%s %s: its directory: %v", o.Flag, Clip(o.Path), unwrapPath(err))
	}
	for d := real; ; d = filepath.Dir(d) {
		st, err := os.Stat(d)
		if err == nil {
			if m, err := os.Stat(filepath.Join(d, chunkstore.ManifestName)); err == nil && m.Mode().IsRegular() {
				return errorf("%s %s lies inside the store %s, which it would damage; choose another %s", o.Flag, Clip(o.Path), d, o.Flag)
			}
			for _, in := range inputs {
				if ist, err := os.Stat(in); err == nil && ist.IsDir() && os.SameFile(st, ist) {
					return errorf("%s %s lies inside the input %s; choose another %s", o.Flag, Clip(o.Path), Clip(in), o.Flag)
				}
			}
		}
		if filepath.Dir(d) == d {
			break
		}
	}
	return nil
}

// checkClobber refuses an output that is one of the inputs (device and
// inode compared, so links and other spellings count) or a directory it
// replaces that holds one.
func checkClobber(o Output, inputs []string) error {
	if IsURL(o.Path) {
		return nil
	}
	st, err := os.Stat(o.Path)
	if err != nil {
		return nil // nothing there yet: nothing to destroy
	}
	for _, in := range inputs {
		ist, err := os.Stat(in)
		if err != nil {
			continue
		}
		if os.SameFile(st, ist) {
			return usagef("%s is the input %s: writing it would destroy the input; choose another %s", o.describe(), Clip(in), o.Flag)
		}
		if !st.IsDir() || !o.Dir {
			continue // a directory where a file goes is refused by checkPath
		}
		real, err := filepath.EvalSymlinks(in)
		if err != nil {
			continue
		}
		for d := filepath.Dir(real); ; d = filepath.Dir(d) {
			if dst, err := os.Stat(d); err == nil && os.SameFile(st, dst) {
				return usagef("%s holds the input %s: replacing it would destroy the input; choose another %s", o.describe(), Clip(in), o.Flag)
			}
			if filepath.Dir(d) == d {
				break
			}
		}
	}
	return nil
}

// checkOwn refuses to replace an existing file or directory at o.Path
// that does not hold o.Kind.
func checkOwn(o Output) error {
	if o.Kind == Any || IsURL(o.Path) {
		return nil
	}
	st, err := os.Lstat(o.Path)
	if err != nil {
		return nil // absent: nothing to lose
	}
	fix := "pass --force to replace it"
	regular := st.Mode().IsRegular()
	var ok bool
	switch o.Kind {
	case Model:
		if st.IsDir() {
			return nil // refused by checkPath: "is a directory"
		}
		ok = regular && hasPrefix(o.Path, "FKOM")
	case Summary:
		ok = regular && isModelSummary(o.Path)
	case Checkpoint:
		ok = regular && hasPrefix(o.Path, "FKCP")
	case Basis:
		ok = regular && hasPrefix(o.Path, "FKNB")
	case Store:
		ok = st.IsDir() && IsStoreKey(o.Path+".key")
		if !ok {
			return errorf("%s exists and is not fit's (no %s beside it): not replacing it; pass --cache DIR to keep fit's store elsewhere, --force to replace it, or choose another %s",
				o.describe(), Clip(o.Path+".key"), o.Flag)
		}
	case StoreKey:
		ok = regular && IsStoreKey(o.Path)
	case PNG:
		ok = regular && hasPrefix(o.Path, "\x89PNG")
	case Predictions:
		ok = regular && table.IsPredictions(o.Path)
	}
	if ok {
		return nil
	}
	return errorf("%s exists and is not %s: not replacing it; %s, or choose another %s", o.describe(), what[o.Kind], fix, o.Flag)
}

// hasPrefix reports whether the file at path starts with prefix.
func hasPrefix(path, prefix string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	b := make([]byte, len(prefix))
	_, err = io.ReadFull(f, b)
	return err == nil && string(b) == prefix
}

// isModelSummary reports whether path holds a model's summary: a JSON
// object whose "format" is "falkon-ooc model".
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

// IsStoreKey reports whether path holds a key as fit writes it beside the
// store it ingests: 16 lower-case hex digits and a newline.
func IsStoreKey(path string) bool {
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

// Prepare runs, for an output about to be written, Check's path checks
// again (a store or input may have appeared since), then checks that its
// directory is writable (a temporary directory is made and removed there),
// then removes the leftovers of dead runs in that directory
// (fileutil.Clean) and returns them for the command to list. A failure
// to clean is returned as warn: the output can still be written.
func Prepare(o Output, inputs []string) (removed []fileutil.Leftover, warn, err error) {
	if o.Path == "" || o.Path == "-" || IsURL(o.Path) {
		return nil, nil, nil
	}
	if err := checkPath(o, inputs); err != nil {
		return nil, nil, err
	}
	abs, err := filepath.Abs(o.Path)
	if err != nil {
		return nil, nil, errorf("%s %s: %v", o.Flag, Clip(o.Path), err)
	}
	dir := filepath.Dir(abs)
	tmp, err := fileutil.MkdirTemp(dir, filepath.Base(abs))
	if err != nil {
		return nil, nil, errorf("%s %s: cannot write in %s: %v", o.Flag, Clip(o.Path), filepath.Dir(o.Path), unwrapPath(err))
	}
	os.RemoveAll(tmp)
	removed, warn = fileutil.Clean(dir)
	return removed, warn, nil
}

// unwrapPath returns the cause of a *fs.PathError, whose path the message
// names already.
func unwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// Inputs returns every path the command's arguments name, for Check: each
// argument as given (a file, a directory, a store or a model), then the
// files a directory walk or a glob expands it into (ingest.Files, the
// list the commands read). "-" (standard input), "" and URLs name no
// local file. An argument that expands to nothing is kept as given: the
// command reports it later.
func Inputs(args ...string) []string {
	var out []string
	for _, a := range args {
		if a == "" || a == "-" || IsURL(a) {
			continue
		}
		out = append(out, a)
		if _, err := os.Stat(filepath.Join(a, chunkstore.ManifestName)); err == nil {
			continue // a store: its files are not data files
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

// Clip shortens a user value to at most 200 bytes for a message.
func Clip(s string) string {
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
