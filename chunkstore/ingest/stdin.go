package ingest

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// spoolPipes copies each input that is not a regular file or a directory
// ("-" for standard input, /dev/stdin, a named pipe, a process
// substitution) to a temporary file beside out, since Parquet needs random
// access and ingest opens an input more than once (to inspect it, then to
// read it: reading a pipe twice was the cause of the false "has 4 fields,
// but the first line has 2" from /dev/stdin). The format is then detected
// from the file's first bytes, as for any input. It returns the inputs with
// the spooled ones replaced, and the temporary paths with the names to
// show for them; the caller removes the files.
func spoolPipes(inputs []string, out string) ([]string, map[string]string, error) {
	spooled := map[string]string{}
	res := make([]string, len(inputs))
	stdin := false
	for i, in := range inputs {
		res[i] = in
		var src io.Reader
		name := in
		if in == "-" {
			name = "stdin"
			src = os.Stdin
		} else {
			st, err := os.Stat(in)
			if err != nil || st.Mode().IsRegular() || st.IsDir() {
				continue // not a pipe; expandInputs reports a missing file
			}
			f, err := os.Open(in)
			if err != nil {
				return nil, spooled, err
			}
			defer f.Close()
			src = f
		}
		if in == "-" || in == "/dev/stdin" {
			if stdin {
				return nil, spooled, errors.New("standard input is named twice among the inputs")
			}
			stdin = true
		}
		p, err := spool(src, out)
		if p != "" {
			spooled[p] = name
		}
		if err != nil {
			return nil, spooled, fmt.Errorf("%s: %w", name, err)
		}
		res[i] = p
	}
	return res, spooled, nil
}

// spool copies src to a new hidden file in out's directory.
func spool(src io.Reader, out string) (string, error) {
	out = filepath.Clean(out)
	f, err := os.CreateTemp(filepath.Dir(out), "."+filepath.Base(out)+".input-")
	if err != nil {
		return "", fmt.Errorf("spool to a temporary file: %w", err)
	}
	if _, err := io.Copy(f, src); err != nil {
		f.Close()
		return f.Name(), fmt.Errorf("spool to %s: %w", f.Name(), err)
	}
	return f.Name(), f.Close()
}

// renameSpooled replaces the temporary names of spooled inputs in err by
// the names the user gave.
func renameSpooled(err error, spooled map[string]string) error {
	var ve *ValueError
	if errors.As(err, &ve) {
		if n, ok := spooled[ve.File]; ok {
			ve.File = n
		}
	}
	var pe *ParseError
	if errors.As(err, &pe) {
		if n, ok := spooled[pe.File]; ok {
			pe.File = n
		}
	}
	msg := err.Error()
	for p, n := range spooled {
		msg = strings.ReplaceAll(msg, p, n)
	}
	if msg == err.Error() {
		return err
	}
	return &renamedError{msg: msg, err: err}
}

type renamedError struct {
	msg string
	err error
}

func (e *renamedError) Error() string { return e.msg }
func (e *renamedError) Unwrap() error { return e.err }
