package ingest

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/falkon-ooc/falkon-ooc/internal/table"
)

// format is the kind of an input file.
type format int

const (
	formatParquet format = iota + 1
	formatText           // CSV, TSV or other delimited text, maybe gzip-compressed
)

// dataExts are the file name endings a directory listing picks up, with or
// without a further ".gz".
var dataExts = []string{".parquet", ".parq", ".pq", ".csv", ".tsv"}

// isDataName reports whether a file name found in a directory is a data file.
func isDataName(name string) bool {
	if strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") {
		return false // hidden files, _SUCCESS and similar markers
	}
	lower := strings.ToLower(strings.TrimSuffix(strings.ToLower(name), ".gz"))
	for _, ext := range dataExts {
		if strings.HasSuffix(lower, ext) {
			return true
		}
	}
	return false
}

// expandInputs turns the command-line inputs (files, directories and glob
// patterns) into the list of files to read, in order: each input in the
// order given, a directory's data files sorted by name, a glob's matches
// sorted by name. Files found by a directory walk or a glob that
// falkon-ooc wrote as predictions (table.IsPredictions) are left out and
// returned as skipped; a file named as an input is always read. An entry
// found that way that is not a regular file (a named pipe, a socket, a
// device), which could block a read forever, is an error naming it; a
// named pipe given as an input is read (ingest spools it first).
func expandInputs(inputs []string) (files, skipped []string, err error) {
	if len(inputs) == 0 {
		return nil, nil, fmt.Errorf("no inputs")
	}
	// found adds a file that a walk or a glob found.
	found := func(p string) error {
		st, err := os.Stat(p)
		if err != nil {
			return err
		}
		if !st.Mode().IsRegular() {
			return notRegular(p, st.Mode())
		}
		if table.IsPredictions(p) {
			skipped = append(skipped, p)
			return nil
		}
		files = append(files, p)
		return nil
	}
	for _, in := range inputs {
		if IsURL(in) {
			files = append(files, in) // one object (see Remote)
			continue
		}
		st, err := os.Stat(in)
		switch {
		case err == nil && st.IsDir():
			got, err := dirFiles(in)
			if err != nil {
				return nil, nil, err
			}
			for _, p := range got {
				if err := found(p); err != nil {
					return nil, nil, err
				}
			}
		case err == nil:
			files = append(files, in)
		case os.IsNotExist(err) && strings.ContainsAny(in, "*?["):
			matches, gerr := glob(in)
			if gerr != nil {
				return nil, nil, fmt.Errorf("bad pattern %q: %w", in, gerr)
			}
			if len(matches) == 0 {
				return nil, nil, fmt.Errorf("no files match %q", in)
			}
			sort.Strings(matches)
			for _, m := range matches {
				if strings.HasPrefix(filepath.Base(m), ".") && !strings.HasPrefix(filepath.Base(in), ".") {
					continue // as in the shell, * does not match a leading dot
				}
				st, err := os.Stat(m)
				if err != nil {
					return nil, nil, err
				}
				if st.IsDir() {
					got, err := dirFiles(m)
					if err != nil {
						return nil, nil, err
					}
					for _, p := range got {
						if err := found(p); err != nil {
							return nil, nil, err
						}
					}
					continue
				}
				if err := found(m); err != nil {
					return nil, nil, err
				}
			}
		default:
			return nil, nil, err // *fs.PathError: "stat x: no such file or directory"
		}
	}
	if len(files) == 0 && len(skipped) > 0 {
		return nil, skipped, fmt.Errorf("%s: %s, and no other data files", strings.Join(inputs, " "), SkippedNote(len(skipped)))
	}
	return files, skipped, nil
}

// notRegular is the refusal of an entry found in an input folder that is
// not a regular file.
func notRegular(path string, mode fs.FileMode) error {
	what := "not a regular file"
	switch {
	case mode&fs.ModeNamedPipe != 0:
		what = "a named pipe (FIFO), not a regular file"
	case mode&fs.ModeSocket != 0:
		what = "a socket, not a regular file"
	case mode&fs.ModeDevice != 0:
		what = "a device, not a regular file"
	}
	return fmt.Errorf("%s is %s: reading it could wait forever; move it out of the input folder, or name the files to read", path, what)
}

// SkippedNote says that n files of predictions written by falkon-ooc were
// found among the inputs and skipped: the line every command prints.
func SkippedNote(n int) string {
	files := "files"
	if n == 1 {
		files = "file"
	}
	return fmt.Sprintf("skipped %d %s of predictions written by falkon-ooc (name a file to read it)", n, files)
}

// dirFiles lists the data files inside dir and its subdirectories (Hive
// partitions such as part=3/), sorted by path. Hidden directories and
// those starting with "_" (_temporary, _delta_log) are not entered.
func dirFiles(dir string) ([]string, error) {
	var files []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if p != dir && hiddenName(d.Name()) {
				return fs.SkipDir
			}
			return nil
		}
		if isDataName(d.Name()) {
			files = append(files, p)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("directory %s holds no data files (%s, optionally .gz, in it or its subdirectories)", dir, strings.Join(dataExts, ", "))
	}
	sort.Strings(files) // WalkDir's lexical order; keep the order explicit
	return files, nil
}

func hiddenName(name string) bool {
	return strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_")
}

// glob is filepath.Glob where a path element "**" matches zero or more
// directories (hidden ones excepted), as in shells with globstar.
func glob(pattern string) ([]string, error) {
	if !strings.Contains(pattern, "**") {
		return filepath.Glob(pattern)
	}
	sep := string(filepath.Separator)
	elems := strings.Split(filepath.ToSlash(pattern), "/")
	for _, e := range elems {
		if strings.Contains(e, "**") && e != "**" {
			return nil, fmt.Errorf(`"**" must be a whole path element, as in dir/**/*.parquet`)
		}
		if _, err := filepath.Match(e, ""); err != nil {
			return nil, err
		}
	}
	// The root is the longest leading run of elements without magic.
	k := 0
	for k < len(elems) && !strings.ContainsAny(elems[k], "*?[") {
		k++
	}
	root := strings.Join(elems[:k], sep)
	if root == "" && strings.HasPrefix(pattern, sep) {
		root = sep
	}
	rest := elems[k:]
	walkRoot := root
	if walkRoot == "" {
		walkRoot = "."
	}
	var out []string
	err := filepath.WalkDir(walkRoot, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if p == walkRoot && errors.Is(err, fs.ErrNotExist) {
				return fs.SkipAll
			}
			return err
		}
		if p == walkRoot {
			return nil
		}
		rel, _ := filepath.Rel(walkRoot, p)
		if d.IsDir() && hiddenName(d.Name()) {
			return fs.SkipDir
		}
		if !d.IsDir() && matchElems(rest, strings.Split(filepath.ToSlash(rel), "/")) {
			out = append(out, p)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// matchElems matches path elements against pattern elements, "**"
// standing for zero or more elements.
func matchElems(pat, path []string) bool {
	for len(pat) > 0 {
		if pat[0] == "**" {
			for i := 0; i <= len(path); i++ {
				if matchElems(pat[1:], path[i:]) {
					return true
				}
				if i < len(path) && strings.HasPrefix(path[i], ".") {
					return false // ** does not match a hidden element
				}
			}
			return false
		}
		if len(path) == 0 {
			return false
		}
		if ok, _ := filepath.Match(pat[0], path[0]); !ok {
			return false
		}
		if strings.HasPrefix(path[0], ".") && !strings.HasPrefix(pat[0], ".") {
			return false // as in the shell, * does not match a leading dot
		}
		pat, path = pat[1:], path[1:]
	}
	return len(path) == 0
}

// sniffFormat tells a Parquet file (magic "PAR1" at the start) from
// anything else, which is read as delimited text.
func sniffFormat(fi *fileInfo) (format, error) {
	var head [4]byte
	var n int
	if fi.remote != nil {
		f, err := openRemote(fi)
		if err != nil {
			return 0, err
		}
		n, err = io.ReadFull(f, head[:])
		f.Close()
		if err != nil && err != io.ErrUnexpectedEOF && err != io.EOF {
			return 0, err
		}
	} else {
		f, err := os.Open(fi.path)
		if err != nil {
			return 0, err
		}
		defer f.Close()
		n, err = io.ReadFull(f, head[:])
		if err != nil && err != io.ErrUnexpectedEOF && err != io.EOF {
			return 0, err
		}
	}
	if n == 4 && bytes.Equal(head[:], []byte("PAR1")) {
		return formatParquet, nil
	}
	return formatText, nil
}
