// Package textlimit bounds the memory of reading delimited text: a Limiter
// fails with a *LineTooLongError once a record grows longer than a limit,
// so a csv reader above it never buffers more than a small multiple of the
// limit, however long a (decompressed) line would be. It also holds the
// quoting rule of error messages (Clip). chunkstore/ingest and tabular
// share it, so both read text under the same --max-line.
package textlimit

import (
	"bufio"
	"fmt"
	"io"
	"unicode/utf8"
)

// DefaultMaxLine is the longest text record (a line, or several lines
// joined by a quoted field) read when no limit is given.
const DefaultMaxLine = 16 << 20

// LineTooLongError reports a text record longer than the limit (--max-line).
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

// Limiter passes bytes through and fails with a *LineTooLongError once a
// record exceeds its limit. A record ends at a newline outside double
// quotes, so a quoted field spanning lines counts as one record, as
// encoding/csv reads it; a field is never longer than its record.
type Limiter struct {
	r       io.Reader
	file    string
	limit   int
	n       int   // bytes of the current record so far
	line    int64 // lines begun so far (1-based line of the current byte)
	start   int64 // line where the current record started
	inQuote bool
	err     error
}

// NewLimiter reads r, named file in its errors, with records of at most
// limit bytes (DefaultMaxLine if limit ≤ 0).
func NewLimiter(r io.Reader, file string, limit int) *Limiter {
	if limit <= 0 {
		limit = DefaultMaxLine
	}
	return &Limiter{r: r, file: file, limit: limit, line: 1, start: 1}
}

// Line is the 1-based line of the next byte to be read.
func (l *Limiter) Line() int64 { return l.line }

// Err is the *LineTooLongError the limiter stopped with, or nil (a
// reader above may have wrapped or replaced it).
func (l *Limiter) Err() error { return l.err }

func (l *Limiter) Read(p []byte) (int, error) {
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

// ReadRecord reads the first record of r (up to and including its
// newline, if any): what a header is made of, whatever its length up to
// the limiter's below r.
func ReadRecord(r *bufio.Reader) ([]byte, error) {
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

// MaxQuote is how much of a user's value an error message quotes.
const MaxQuote = 200

// Clip shortens s to at most MaxQuote bytes (at a rune boundary), marking
// the cut and the full length.
func Clip(s string) string {
	return ClipPrefix(s, len(s))
}

// ClipPrefix is Clip of a value of total bytes of which s is the start
// (at least MaxQuote+1 bytes of it, or all of it), for a value too long
// to copy into a string.
func ClipPrefix(s string, total int) string {
	if total <= MaxQuote {
		return s
	}
	i := min(MaxQuote, len(s)-1)
	for i > 0 && !utf8.RuneStart(s[i]) {
		i--
	}
	return fmt.Sprintf("%s… (%d bytes)", s[:i], total)
}
