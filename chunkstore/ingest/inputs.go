package ingest

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
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
// sorted by name.
func expandInputs(inputs []string) ([]string, error) {
	if len(inputs) == 0 {
		return nil, fmt.Errorf("no inputs")
	}
	var files []string
	for _, in := range inputs {
		st, err := os.Stat(in)
		switch {
		case err == nil && st.IsDir():
			got, err := dirFiles(in)
			if err != nil {
				return nil, err
			}
			files = append(files, got...)
		case err == nil:
			files = append(files, in)
		case os.IsNotExist(err) && strings.ContainsAny(in, "*?["):
			matches, gerr := filepath.Glob(in)
			if gerr != nil {
				return nil, fmt.Errorf("bad pattern %q: %w", in, gerr)
			}
			if len(matches) == 0 {
				return nil, fmt.Errorf("no files match %q", in)
			}
			sort.Strings(matches)
			for _, m := range matches {
				if strings.HasPrefix(filepath.Base(m), ".") && !strings.HasPrefix(filepath.Base(in), ".") {
					continue // as in the shell, * does not match a leading dot
				}
				st, err := os.Stat(m)
				if err != nil {
					return nil, err
				}
				if st.IsDir() {
					got, err := dirFiles(m)
					if err != nil {
						return nil, err
					}
					files = append(files, got...)
					continue
				}
				files = append(files, m)
			}
		default:
			return nil, err // *fs.PathError: "stat x: no such file or directory"
		}
	}
	return files, nil
}

// dirFiles lists the data files directly inside dir, sorted by name.
func dirFiles(dir string) ([]string, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var files []string
	for _, e := range ents {
		if e.IsDir() || !isDataName(e.Name()) {
			continue
		}
		files = append(files, filepath.Join(dir, e.Name()))
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("directory %s holds no data files (%s, optionally .gz)", dir, strings.Join(dataExts, ", "))
	}
	sort.Strings(files) // ReadDir sorts already; keep the order explicit
	return files, nil
}

// sniffFormat tells a Parquet file (magic "PAR1" at the start) from
// anything else, which is read as delimited text.
func sniffFormat(path string) (format, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	var head [4]byte
	n, err := io.ReadFull(f, head[:])
	if err != nil && err != io.ErrUnexpectedEOF && err != io.EOF {
		return 0, err
	}
	if n == 4 && bytes.Equal(head[:], []byte("PAR1")) {
		return formatParquet, nil
	}
	return formatText, nil
}
