package ingest

import (
	"bufio"
	"fmt"
	"io"
	"unicode/utf8"
)

// DefaultMaxLine is the longest text record (a line, or several lines
// joined by a quoted field) that ingest reads when Config.MaxLine is 0.
const DefaultMaxLine = 16 << 20

// LineTooLongError reports a text record longer than Config.MaxLine.
type LineTooLongError struct {
	File  string
	Line  int64 // 1-based line where the record starts
	Limit int
}

func (e *LineTooLongError) Error() string {
	return fmt.Sprintf("%s: line %d is longer than %s (--max-line); a text file this wide is more likely damaged or not a CSV file, else raise --max-line",
		e.File, e.Line, byteSize(e.Limit))
}

func byteSize(n int) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	default:
		return fmt.Sprintf("%d bytes", n)
	}
}

// recordLimiter passes bytes through and fails with a *LineTooLongError
// once a record exceeds limit bytes. A record ends at a newline outside
// double quotes, so a quoted field spanning lines counts as one record, as
// encoding/csv reads it; a field is never longer than its record. With the
// limit in place the csv reader's buffers stay within a small multiple of
// it, however long a decompressed line would be.
type recordLimiter struct {
	r       io.Reader
	file    string
	limit   int
	n       int   // bytes of the current record so far
	line    int64 // lines begun so far (1-based line of the current byte)
	start   int64 // line where the current record started
	inQuote bool
	err     error
}

func newRecordLimiter(r io.Reader, file string, limit int) *recordLimiter {
	if limit <= 0 {
		limit = DefaultMaxLine
	}
	return &recordLimiter{r: r, file: file, limit: limit, line: 1, start: 1}
}

func (l *recordLimiter) Read(p []byte) (int, error) {
	if l.err != nil {
		return 0, l.err
	}
	n, err := l.r.Read(p)
	for i, c := range p[:n] {
		l.n++
		switch c {
		case '"':
			l.inQuote = !l.inQuote
		case '\n':
			l.line++
			if !l.inQuote {
				l.n = 0
				l.start = l.line
				continue
			}
		}
		if l.n > l.limit {
			l.err = &LineTooLongError{File: l.file, Line: l.start, Limit: l.limit}
			return i, l.err
		}
	}
	return n, err
}

// readRecord reads the first record of r (up to and including its
// newline, if any): what a header is made of, whatever its length up to
// the limiter's.
func readRecord(r *bufio.Reader) ([]byte, error) {
	var rec []byte
	inQuote := false
	for {
		b, err := r.ReadSlice('\n')
		rec = append(rec, b...)
		for _, c := range b {
			if c == '"' {
				inQuote = !inQuote
			}
		}
		switch {
		case err == bufio.ErrBufferFull:
			continue
		case err != nil:
			return rec, err
		case !inQuote:
			return rec, nil
		}
	}
}

// maxQuote is how much of a user's value an error message quotes.
const maxQuote = 200

// clip shortens s to at most maxQuote bytes (at a rune boundary), marking
// the cut and the full length.
func clip(s string) string {
	if len(s) <= maxQuote {
		return s
	}
	i := maxQuote
	for i > 0 && !utf8.RuneStart(s[i]) {
		i--
	}
	return fmt.Sprintf("%s… (%d bytes)", s[:i], len(s))
}
