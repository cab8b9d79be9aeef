package ingest

import (
	"bufio"
	"bytes"
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	arrowcsv "github.com/apache/arrow-go/v18/arrow/csv"
	"github.com/falkon-ooc/falkon-ooc/internal/table"
	"github.com/falkon-ooc/falkon-ooc/internal/textlimit"
	"github.com/klauspost/compress/gzip"
	"golang.org/x/sync/errgroup"
)

const (
	// sniffBytes and sniffRows bound the first block of a text file, from
	// which its delimiter and column types are inferred.
	sniffBytes = 1 << 20
	sniffRows  = 1000
)

// textFile is an open text file: r reads its decompressed bytes, with a
// UTF-8 byte order mark removed.
type textFile struct {
	c    io.Closer // the file, or nil for bytes in memory
	gz   *gzip.Reader
	cnt  *countingReader
	r    *bufio.Reader
	gzip bool
}

type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

// openText opens the text input fi: its bytes in memory (fi.mem, for tests
// and fuzzing) or else the file at fi.path.
func openText(fi *fileInfo) (*textFile, error) {
	if fi.mem != nil {
		return newTextFile(fi.path, bytes.NewReader(fi.mem), nil, int64(len(fi.mem)))
	}
	if fi.remote != nil {
		f, err := openRemote(fi)
		if err != nil {
			return nil, err
		}
		return newTextFile(fi.path, f, f, fi.size)
	}
	f, err := os.Open(fi.path)
	if err != nil {
		return nil, err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	return newTextFile(fi.path, f, f, st.Size())
}

// newTextFile reads delimited text from raw, a stream of size bytes (gzip
// compressed or not), closing c (if not nil) on Close. Buffers grow with
// the input up to 1 MiB, so that a small input costs little.
func newTextFile(path string, raw io.Reader, c io.Closer, size int64) (*textFile, error) {
	t := &textFile{c: c, cnt: &countingReader{r: raw}}
	br := bufio.NewReaderSize(t.cnt, int(min(max(size, 4<<10), 1<<20)))
	if magic, _ := br.Peek(2); len(magic) == 2 && magic[0] == 0x1f && magic[1] == 0x8b {
		var err error
		t.gz, err = gzip.NewReader(br)
		if err != nil {
			t.Close()
			// Not a line of text: the gzip header itself (a bare
			// "unexpected EOF" once left the user guessing).
			return nil, fmt.Errorf("%s: starts like a gzip file, but its gzip header is damaged or cut short: %w", path, err)
		}
		t.gzip = true
		t.r = bufio.NewReaderSize(textlimit.Gunzipped(t.gz), 64<<10)
	} else {
		t.r = br
	}
	if bom, _ := t.r.Peek(3); bytes.Equal(bom, []byte{0xef, 0xbb, 0xbf}) {
		t.r.Discard(3)
	}
	return t, nil
}

func (t *textFile) Close() error {
	if t.gz != nil {
		t.gz.Close()
	}
	if t.c != nil {
		return t.c.Close()
	}
	return nil
}

// inspectText reads the first block of a text file: its delimiter, column
// names and types.
func (s *session) inspectText(fi *fileInfo) error {
	t, err := openText(fi)
	if err != nil {
		return err
	}
	defer t.Close()
	fi.gzip = t.gzip
	if len(s.cfg.Columns) == 0 && !s.cfg.NoHeader {
		// A header name longer than table.MaxName is refused from the
		// first bytes, before a line of hundreds of megabytes is read.
		peek, _ := t.r.Peek(t.r.Size())
		if err := table.LongHeaderName(fi.path, t.r, peek, len(peek) < t.r.Size()); err != nil {
			return err
		}
	}
	head, _, truncated, err := sniffHead(t.r, fi.path, s.cfg.MaxLine)
	if err != nil {
		return err
	}
	if len(bytes.TrimSpace(head)) == 0 {
		return fmt.Errorf("%s: empty file", fi.path)
	}
	if err := table.CheckHead(fi.path, head); err != nil {
		return err
	}
	fi.comma = table.SniffComma(fi.path, head)

	cr := csv.NewReader(bytes.NewReader(head))
	cr.Comma = fi.comma
	cr.FieldsPerRecord = -1
	var recs [][]string
	for len(recs) <= sniffRows {
		rec, err := cr.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			if truncated {
				break // the block cut a record short
			}
			return fmt.Errorf("%s: %w", fi.path, err)
		}
		recs = append(recs, rec)
	}
	if truncated && len(recs) > 2 {
		// The last may be cut short by the end of the block; the first
		// two records are complete (see sniffHead).
		recs = recs[:len(recs)-1]
	}
	if len(recs) == 0 {
		return fmt.Errorf("%s: no rows in the first %d bytes", fi.path, len(head))
	}
	ncol := len(recs[0])
	data := recs
	switch {
	case len(s.cfg.Columns) > 0:
		if len(s.cfg.Columns) != ncol {
			return fmt.Errorf("%s: %d column names given, but the first line has %d fields", fi.path, len(s.cfg.Columns), ncol)
		}
		fi.names = append([]string(nil), s.cfg.Columns...)
	case s.cfg.NoHeader:
		for i := range ncol {
			fi.names = append(fi.names, "c"+strconv.Itoa(i))
		}
	default:
		fi.header = true
		fi.names = append([]string(nil), recs[0]...)
		data = recs[1:]
		if err := table.CheckNames(fi.path, fi.names, " (use --no-header if the file has no header)"); err != nil {
			return err
		}
	}
	if len(data) == 0 && !truncated {
		// arrow's inferring csv reader panics on a file without data rows,
		// and there is nothing to infer column types from.
		return fmt.Errorf("%s: no data rows (the file holds only a header line)", fi.path)
	}
	for i, rec := range data {
		if len(rec) != ncol {
			return fmt.Errorf("%s: %s has %d fields, but the first line has %d", fi.path, rowPhrase(int64(i+1), fi.header), len(rec), ncol)
		}
	}
	fi.types = make([]colType, ncol)
	for c := range ncol {
		fi.types[c] = inferText(data, c)
	}
	fi.rows = -1 // unknown until read
	return nil
}

// sniffHead returns the first two records of r whatever their length (up
// to maxLine each: a header and a data row, or two data rows) followed by
// up to sniffBytes more bytes, and whether r goes on beyond them. A read
// error (damaged gzip data, the record limit) names the line it stopped
// in.
func sniffHead(r *bufio.Reader, path string, maxLine int) (head []byte, first int, truncated bool, err error) {
	rl := newRecordLimiter(r, path, maxLine)
	lim := bufio.NewReaderSize(rl, 64<<10)
	fail := func(err error) ([]byte, int, bool, error) {
		var le *LineTooLongError
		if errors.As(err, &le) {
			return nil, 0, false, fmt.Errorf("%s: %w", path, lineTooLong{le})
		}
		return nil, 0, false, fmt.Errorf("%s: line %d: %w", path, rl.Line(), err)
	}
	head, err = readRecord(lim)
	if err == io.EOF {
		return head, len(head), false, nil
	}
	if err != nil {
		return fail(err)
	}
	first = len(head)
	rec, err := readRecord(lim)
	head = append(head, rec...)
	if err == io.EOF {
		return head, first, false, nil
	}
	if err != nil {
		return fail(err)
	}
	first = len(head)
	buf := bytes.NewBuffer(head)
	n, err := buf.ReadFrom(io.LimitReader(lim, sniffBytes))
	if err != nil {
		return fail(err)
	}
	return buf.Bytes(), first, n == sniffBytes, nil
}

// lineTooLong is a *LineTooLongError shown without its file name.
type lineTooLong struct{ e *LineTooLongError }

func (l lineTooLong) Error() string {
	return strings.TrimPrefix(l.e.Error(), l.e.File+": ")
}
func (l lineTooLong) Unwrap() error { return l.e }

// inferText infers the type of column c from the sample rows
// (table.Infer, as predict's reader does).
func inferText(rows [][]string, c int) colType {
	switch table.Infer(func(yield func(string) bool) {
		for _, r := range rows {
			if !yield(r[c]) {
				return
			}
		}
	}) {
	case table.Number:
		return textNumeric
	case table.Bool:
		return textBool
	case table.Date:
		return textDate
	default:
		t := textString
		t.stray = strayOf(rows, c)
		return t
	}
}

// strayValue is a value of a text column of numbers that is not one: a
// typo, a unit, a marker for missing data that is not a NULL token.
type strayValue struct {
	row   int64 // 1-based data row within the file
	value string
	count int // such values among the sampled rows
}

// strayOf returns the first value of column c of the sample rows that is
// not a number when nearly all the others are: at least 90 % of the
// non-NULL values numbers, and at most max(3, 1 %) not. Such a column is
// read as strings, and so would become categorical, because of a few
// values; ingest refuses it (a chosen feature) unless it is named
// categorical.
func strayOf(rows [][]string, c int) *strayValue {
	var st *strayValue
	nonNull, strays := 0, 0
	for i, r := range rows {
		s := r[c]
		if table.IsNull(s) {
			continue
		}
		nonNull++
		if _, err := table.ParseNumber(s); err != nil && !errors.Is(err, table.ErrCut) {
			strays++
			if st == nil {
				st = &strayValue{row: int64(i + 1), value: s}
			}
		}
	}
	if st == nil || strays*10 > nonNull || strays > max(3, nonNull/100) {
		return nil
	}
	st.count = strays
	return st
}

func isNullToken(s string) bool { return table.IsNull(s) }

// readText streams the chosen columns of a text file through arrow's csv
// reader, which hands them over as strings, parsed here with row numbers
// for errors.
func (s *session) readText(ctx context.Context, f *fileInfo, out chan<- *batch) error {
	t, err := openText(f)
	if err != nil {
		return err
	}
	defer t.Close()
	arrowName := func(i int) string {
		if f.header {
			return f.names[i]
		}
		return "f" + strconv.Itoa(i) // arrow's csv reader names headerless columns f0, f1, …
	}
	include := make([]string, len(s.names))
	types := map[string]arrow.DataType{}
	coltypes := make([]colType, len(s.names))
	for j, n := range s.names {
		i := f.index[n]
		include[j] = arrowName(i)
		types[include[j]] = arrow.BinaryTypes.String
		coltypes[j] = f.types[i]
	}
	lim := newRecordLimiter(t.r, f.path, s.cfg.MaxLine)
	r := arrowcsv.NewInferringReader(lim,
		arrowcsv.WithAllocator(s.mem),
		arrowcsv.WithComma(f.comma),
		arrowcsv.WithHeader(f.header),
		arrowcsv.WithChunk(s.batchRows),
		arrowcsv.WithIncludeColumns(include),
		arrowcsv.WithColumnTypes(types),
		arrowcsv.WithNullReader(true, table.NullTokens...),
	)
	defer r.Release()

	bads := make([]bad, len(s.names))
	perrs := make([]*parseError, len(s.names))
	var done, counted int64
	for r.Next() {
		if err := r.Err(); err != nil {
			break
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		rec := r.RecordBatch()
		n := int(rec.NumRows())
		if n > s.batchRows || int(rec.NumCols()) != len(s.names) {
			return fmt.Errorf("%s: internal error: csv batch of %d×%d", f.path, n, rec.NumCols())
		}
		b := s.getBatch()
		b.n = n
		for j := range bads {
			bads[j] = bad{rows: bads[j].rows[:0]}
			perrs[j] = nil
		}
		var g errgroup.Group
		g.SetLimit(s.workers)
		for j := range s.names {
			g.Go(guard(func() error {
				var err error
				perrs[j], err = parseText(rec.Column(j), coltypes[j], b.cols[j][:n], &bads[j])
				return err
			}))
		}
		if err := g.Wait(); err != nil {
			return fmt.Errorf("%s: %w", f.path, err)
		}
		col := -1
		for j, pe := range perrs {
			if pe != nil && (col < 0 || pe.row < perrs[col].row) {
				col = j
			}
		}
		if col >= 0 {
			pe := perrs[col]
			// A NULL, NaN or Inf earlier in the batch is reported first.
			if s.cfg.Nulls != "drop" {
				for j := range bads {
					if len(bads[j].rows) > 0 && bads[j].rows[0] < pe.row {
						return s.finish(f, b, done, bads)
					}
				}
			}
			return &ParseError{File: f.path, Column: s.names[col], Row: done + int64(pe.row) + 1,
				Value: pe.value, Want: pe.want, Header: f.header}
		}
		if err := s.finish(f, b, done, bads); err != nil {
			return err
		}
		b.bytesIn = t.cnt.n - counted
		counted = t.cnt.n
		if err := send(ctx, out, b); err != nil {
			return err
		}
		done += int64(n)
	}
	if err := r.Err(); err != nil {
		if lerr := lim.Err(); lerr != nil {
			return lerr // the record limit, whatever arrow made of it
		}
		var pe *csv.ParseError
		if errors.As(err, &pe) {
			return fmt.Errorf("%s: %w", f.path, err)
		}
		return fmt.Errorf("%s: after %s: %w", f.path, rowPhrase(done, f.header), err)
	}
	f.rows = done
	return nil
}
