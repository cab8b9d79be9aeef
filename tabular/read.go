package tabular

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// Options says which columns a Reader reads and how. A zero field means
// its default.
type Options struct {
	// Numeric names the columns read as float64, in this order. Each must
	// be present in every file.
	Numeric []string
	// Optional names further float64 columns, read only when the first
	// file has all of them (see Reader.HasOptional). A NULL, NaN or ±Inf
	// there is NaN in the batch, never an error or a dropped row.
	Optional []string
	// Keep names columns of any type copied unchanged into each batch.
	Keep []string
	// Labels gives, for a Numeric or Optional column that holds string
	// labels (class names), the labels in order: a value is read as its
	// index in the list, and a value not in it is an error naming the
	// file, row and column (a *LabelError). A Parquet column of another
	// type than string is read as numbers.
	Labels map[string][]string
	// Categorical names Numeric columns read as the codes of their
	// categorical levels (featenc.Code of the level table.Levels reads,
	// featenc.NullCode for NULL, never a bad value), as chunkstore/ingest
	// stores them before expanding them into one-hot features.
	Categorical []string
	// Nulls says what a NULL, NaN or ±Inf in a Numeric column does:
	// "error" (the default) stops with a *ValueError, "drop" leaves the
	// row out, "zero" reads it as 0, "fill" reads it as the column's
	// value in Fill.
	Nulls string
	// Fill holds, for Nulls "fill", one value per Numeric column (a
	// model's training means, for instance).
	Fill []float64
	// NoHeader says that text inputs have no header row; their columns are
	// c0, c1, … unless Names names them. Parquet files are not affected.
	NoHeader bool
	// Names names the columns of headerless text inputs (implies
	// NoHeader); it must list every column.
	Names []string
	// MaxLine is the longest text record read, in bytes: a line, or lines
	// joined by a quoted field. A longer one is a
	// *LineTooLongError naming the file and line, so memory
	// stays bounded whatever the input. 0: 16 MiB, as chunkstore/ingest.
	MaxLine int
	// BatchRows is the most rows in a batch. 0: 8192.
	BatchRows int
	// Stdin is read, as delimited text, for the input "-".
	Stdin io.Reader

	// mem, in tests and fuzzing, holds the bytes of inputs by name, read
	// instead of the file system.
	mem map[string][]byte
}

// Batch is a block of consecutive input rows.
type Batch struct {
	Rows int
	// Cols holds the Numeric columns, then the Optional ones when present,
	// each of length Rows.
	Cols [][]float64
	// Dropped counts the input rows left out of this batch (Nulls "drop").
	Dropped int
	// File is the input the rows come from; FirstRow is the 1-based row
	// within it of the batch's first input row.
	File     string
	FirstRow int64

	keep []arrow.Array // the Keep columns, each of length Rows
}

// Release frees the memory of the kept columns; the batch must not be
// written afterwards. Calling it is optional (the garbage collector frees
// it too) and lets a long stream reuse memory sooner.
func (b *Batch) Release() {
	for _, a := range b.keep {
		a.Release()
	}
	b.keep = nil
}

// ValueError reports a NULL, NaN or ±Inf in a Numeric column.
type ValueError struct {
	File   string
	Column string
	Row    int64  // 1-based within File; a text file's header not counted
	Value  string // "NULL", "NaN", "+Inf" or "-Inf"
	Header bool   // File is a text file with a header line
}

func (e *ValueError) Error() string {
	return fmt.Sprintf("%s: %s: column %q is %s", e.File, rowPhrase(e.Row, e.Header), e.Column, e.Value)
}

func rowPhrase(row int64, header bool) string {
	if header {
		return fmt.Sprintf("row %d (1-based, counted within this file, header line not counted)", row)
	}
	return fmt.Sprintf("row %d (1-based, counted within this file)", row)
}

// Reader streams batches of rows from a list of files.
type Reader struct {
	opt      Options
	files    []string
	names    []string                  // columns of the first file
	optional bool                      // the Optional columns are read
	keepType []arrow.DataType          // of the Keep columns, from the first file
	labels   map[string]map[string]int // Options.Labels: column → label → index
	cat      map[string]bool           // Options.Categorical
	mem      memory.Allocator

	next int        // index of the next file to open
	cur  fileReader // the open file, nil between files
	b    *Batch
	err  error
}

// fileReader reads one input file.
type fileReader interface {
	// read fills the numeric columns of up to n rows into cols (each of
	// length ≥ n) and returns the kept columns, the number of rows read
	// and the bad values found, or 0 rows at the end of the file.
	read(ctx context.Context, n int, cols [][]float64, bads []bad) (keep []arrow.Array, rows int, err error)
	header() bool
	rowsRead() int64 // rows returned so far
	Close() error
}

// bad records the rows of a column in a batch that hold a NULL, NaN or
// ±Inf, and what the first one is.
type bad struct {
	rows  []int
	first string
}

func (b *bad) add(i int, what string) {
	if len(b.rows) == 0 {
		b.first = what
	}
	b.rows = append(b.rows, i)
}

// Open starts reading files (see Options). It reads the first file's
// header or footer: a missing Numeric or Keep column is an error naming
// the file and its columns.
func Open(files []string, opt Options) (*Reader, error) {
	switch opt.Nulls {
	case "":
		opt.Nulls = "error"
	case "error", "drop", "zero":
	case "fill":
		if len(opt.Fill) != len(opt.Numeric) {
			return nil, fmt.Errorf("tabular: Nulls fill needs one Fill value per Numeric column: %d values for %d columns", len(opt.Fill), len(opt.Numeric))
		}
	default:
		return nil, fmt.Errorf("tabular: Nulls must be error, drop, zero or fill, not %q", opt.Nulls)
	}
	if len(files) == 0 {
		return nil, errors.New("tabular: no input files")
	}
	if len(opt.Names) > 0 {
		opt.NoHeader = true
	}
	if opt.BatchRows <= 0 {
		opt.BatchRows = 8192
	}
	for _, f := range files[1:] {
		if f == "-" {
			return nil, errors.New("tabular: standard input (-) must be the only input")
		}
	}
	r := &Reader{opt: opt, files: files, mem: memory.DefaultAllocator}
	for _, c := range opt.Categorical {
		if r.cat == nil {
			r.cat = map[string]bool{}
		}
		r.cat[c] = true
	}
	if len(opt.Labels) > 0 {
		r.labels = map[string]map[string]int{}
		for c, ls := range opt.Labels {
			r.labels[c] = map[string]int{}
			for i, l := range ls {
				r.labels[c][l] = i
			}
		}
	}
	fr, names, err := r.open(files[0])
	if err != nil {
		return nil, err
	}
	r.names = names
	r.cur, r.next = fr, 1
	return r, nil
}

// Names returns the columns of the first file, in file order, then the
// Hive partition keys of its path (key=value folders).
func (r *Reader) Names() []string { return slices.Clone(r.names) }

// HasOptional reports whether the Optional columns are read: whether the
// first file has every one of them.
func (r *Reader) HasOptional() bool { return r.optional }

// choose settles, from the first file's columns, whether the Optional
// columns are read, and checks that a file has the chosen columns. The
// file readers call it once they know the columns.
func (r *Reader) choose(path string, names []string) error {
	if r.names == nil {
		r.names = names
		r.optional = len(r.opt.Optional) > 0
		for _, c := range r.opt.Optional {
			r.optional = r.optional && slices.Contains(names, c)
		}
	}
	var missing []string
	want := append(slices.Clone(r.opt.Numeric), r.opt.Keep...)
	if r.optional {
		want = append(want, r.opt.Optional...)
	}
	for _, c := range want {
		if !slices.Contains(names, c) && !slices.Contains(missing, c) {
			missing = append(missing, c)
		}
	}
	if len(missing) > 0 {
		return &MissingError{File: path, Missing: missing, Have: names}
	}
	return nil
}

// MissingError reports chosen columns that an input lacks.
type MissingError struct {
	File    string
	Missing []string
	Have    []string
}

func (e *MissingError) Error() string {
	q := make([]string, len(e.Have))
	for i, n := range e.Have {
		q[i] = fmt.Sprintf("%q", n)
	}
	have := strings.Join(q, ", ")
	if len(q) > 20 {
		have = strings.Join(q[:20], ", ") + fmt.Sprintf(", … (%d in all)", len(q))
	}
	return fmt.Sprintf("%s: no column(s) %q; its columns are: %s", e.File, e.Missing, have)
}

// columns returns the chosen numeric columns, in batch order.
func (r *Reader) columns() []string {
	cols := slices.Clone(r.opt.Numeric)
	if r.optional {
		cols = append(cols, r.opt.Optional...)
	}
	return cols
}

// open opens one input and returns its reader and column names.
func (r *Reader) open(path string) (fileReader, []string, error) {
	if path == "-" {
		if r.opt.Stdin == nil {
			return nil, nil, errors.New("tabular: input - (standard input) without Options.Stdin")
		}
		return r.openText("-", r.opt.Stdin, nil)
	}
	if data, ok := r.opt.mem[path]; ok {
		if bytes.HasPrefix(data, []byte("PAR1")) {
			return r.openParquetFrom(path, bytes.NewReader(data), int64(len(data)))
		}
		return r.openText(path, bytes.NewReader(data), nil)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	var head [4]byte
	n, _ := io.ReadFull(f, head[:])
	if n == 4 && string(head[:]) == "PAR1" {
		f.Close()
		return r.openParquet(path)
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		f.Close()
		return nil, nil, err
	}
	return r.openText(path, f, f)
}

// Next reads the next batch; it returns false at the end of the input or
// on an error (see Err).
func (r *Reader) Next(ctx context.Context) bool {
	if r.err != nil {
		return false
	}
	r.b = nil
	cols := r.columns()
	nnum := len(r.opt.Numeric)
	for {
		if r.cur == nil {
			if r.next >= len(r.files) {
				return false
			}
			path := r.files[r.next]
			fr, _, err := r.open(path)
			if err != nil {
				r.err = err
				return false
			}
			r.cur = fr
			r.next++
		}
		if err := ctx.Err(); err != nil {
			r.err = err
			return false
		}
		b := &Batch{Cols: make([][]float64, len(cols)), File: r.files[r.next-1]}
		for j := range cols {
			b.Cols[j] = make([]float64, r.opt.BatchRows)
		}
		bads := make([]bad, len(cols))
		keep, n, err := r.cur.read(ctx, r.opt.BatchRows, b.Cols, bads)
		if err != nil {
			r.err = err
			return false
		}
		if n == 0 {
			if err := r.cur.Close(); err != nil {
				r.err = err
				return false
			}
			r.cur = nil
			continue
		}
		first := r.cur.rowsRead() - int64(n) + 1
		b.FirstRow = first
		for j := range b.Cols {
			b.Cols[j] = b.Cols[j][:n]
		}
		b.Rows = n
		if err := r.keepTypes(b.File, keep); err != nil {
			releaseAll(keep)
			r.err = err
			return false
		}
		b.keep = keep
		if err := r.applyNulls(b, bads[:nnum], cols, r.cur.header()); err != nil {
			b.Release()
			r.err = err
			return false
		}
		// Optional columns: a bad value is NaN.
		for j := nnum; j < len(cols); j++ {
			for _, i := range bads[j].rows {
				b.Cols[j][i] = math.NaN()
			}
		}
		r.b = b // possibly with every row dropped: b.Dropped counts them
		return true
	}
}

// Batch returns the batch read by the last successful Next.
func (r *Reader) Batch() *Batch { return r.b }

// Err returns the error that stopped Next, if any.
func (r *Reader) Err() error { return r.err }

// Close closes the open file.
func (r *Reader) Close() error {
	if r.cur == nil {
		return nil
	}
	err := r.cur.Close()
	r.cur = nil
	return err
}

// keepTypes checks that the kept columns of every file have the type they
// have in the first file.
func (r *Reader) keepTypes(file string, keep []arrow.Array) error {
	for j, a := range keep {
		if !arrow.TypeEqual(a.DataType(), r.keepType[j]) {
			return fmt.Errorf("%s: kept column %q has type %s, but %s in the first input", file, r.opt.Keep[j], a.DataType(), r.keepType[j])
		}
	}
	return nil
}

// applyNulls enforces Options.Nulls on the numeric columns' bad values.
func (r *Reader) applyNulls(b *Batch, bads []bad, cols []string, header bool) error {
	anyBad := false
	for j := range bads {
		anyBad = anyBad || len(bads[j].rows) > 0
	}
	if !anyBad {
		return nil
	}
	switch r.opt.Nulls {
	case "zero", "fill":
		for j := range bads {
			v := 0.0
			if r.opt.Nulls == "fill" {
				v = r.opt.Fill[j]
			}
			for _, i := range bads[j].rows {
				b.Cols[j][i] = v
			}
		}
		return nil
	case "error":
		col, row := -1, 0
		for j := range bads {
			if len(bads[j].rows) > 0 && (col < 0 || bads[j].rows[0] < row) {
				col, row = j, bads[j].rows[0]
			}
		}
		return &ValueError{File: b.File, Column: cols[col], Row: b.FirstRow + int64(row), Value: bads[col].first, Header: header}
	}
	drop := make([]bool, b.Rows)
	for j := range bads {
		for _, i := range bads[j].rows {
			drop[i] = true
		}
	}
	k := 0
	for i := range b.Rows {
		if !drop[i] {
			for _, c := range b.Cols {
				c[k] = c[i]
			}
			k++
		}
	}
	for j := range b.Cols {
		b.Cols[j] = b.Cols[j][:k]
	}
	for j, a := range b.keep {
		f, err := filterArray(r.mem, a, drop)
		if err != nil {
			return fmt.Errorf("%s: kept column %q: %w", b.File, r.opt.Keep[j], err)
		}
		a.Release()
		b.keep[j] = f
	}
	b.Dropped = b.Rows - k
	b.Rows = k
	return nil
}

// filterArray returns a without the rows marked in drop: the kept runs,
// concatenated.
func filterArray(mem memory.Allocator, a arrow.Array, drop []bool) (arrow.Array, error) {
	var runs []arrow.Array
	defer func() { releaseAll(runs) }()
	for i := 0; i < len(drop); {
		if drop[i] {
			i++
			continue
		}
		j := i
		for j < len(drop) && !drop[j] {
			j++
		}
		runs = append(runs, array.NewSlice(a, int64(i), int64(j)))
		i = j
	}
	if len(runs) == 0 {
		return array.NewSlice(a, 0, 0), nil
	}
	return array.Concatenate(runs, mem)
}

func releaseAll(as []arrow.Array) {
	for _, a := range as {
		if a != nil {
			a.Release()
		}
	}
}
