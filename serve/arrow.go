package serve

import (
	"errors"
	"fmt"
	"io"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/falkon-ooc/falkon-ooc/featenc"
	"github.com/falkon-ooc/falkon-ooc/internal/table"
)

// ArrowStream is the media type of an Arrow IPC stream.
const ArrowStream = "application/vnd.apache.arrow.stream"

// errArrowMemory is the panic of limitAlloc past its limit.
var errArrowMemory = errors.New("serve: Arrow buffers past the limit")

// limitAlloc is a Go allocator that refuses (by a panic that decodeArrow
// recovers) to hold more than limit bytes at once, so a stream whose
// headers claim huge buffers (a compressed body's stated length) cannot
// make the server allocate them.
type limitAlloc struct {
	mem      memory.Allocator
	held     int
	limit    int
	exceeded bool
}

func (a *limitAlloc) Allocate(size int) []byte {
	if a.held+size > a.limit {
		a.exceeded = true
		panic(errArrowMemory)
	}
	a.held += size
	return a.mem.Allocate(size)
}

func (a *limitAlloc) Reallocate(size int, b []byte) []byte {
	if a.held-len(b)+size > a.limit {
		a.exceeded = true
		panic(errArrowMemory)
	}
	a.held += size - len(b)
	return a.mem.Reallocate(size, b)
}

func (a *limitAlloc) Free(b []byte) {
	a.held -= len(b)
	a.mem.Free(b)
}

// decodeArrow reads an Arrow IPC stream of one or more record batches
// into rb: one column per feature, matched by name, of any integer or
// floating-point type; a null, NaN or infinite value is read by the null
// policy.
func (dc *decoder) decodeArrow(body io.Reader, rb *rowBuf, maxBody int64) (err error) {
	alloc := &limitAlloc{mem: memory.DefaultAllocator, limit: int(min(maxBody, 1<<40)) + 1<<20}
	defer func() {
		if r := recover(); r != nil {
			if r != errArrowMemory {
				panic(r)
			}
			err = arrowTooBig(maxBody)
		}
	}()
	rd, err := ipc.NewReader(body, ipc.WithAllocator(alloc), ipc.WithMetadataSizeLimit(1<<20), ipc.WithBodySizeLimit(maxBody))
	if err != nil {
		return dc.arrowErr(err, alloc, maxBody)
	}
	defer rd.Release()
	cols, err := dc.arrowSchema(rd.Schema())
	if err != nil {
		return err
	}
	features := dc.inputs
	for rd.Next() {
		rec := rd.RecordBatch()
		n := int(rec.NumRows())
		base := rb.n
		for range n {
			if _, err := rb.addRow(); err != nil {
				return err
			}
		}
		d := len(features)
		for c, j := range cols {
			if j < 0 {
				continue
			}
			if err := dc.arrowColumn(rec.Column(c), rb.x[base*d:], base, j); err != nil {
				return err
			}
		}
	}
	if err := rd.Err(); err != nil {
		return dc.arrowErr(err, alloc, maxBody)
	}
	return nil
}

func arrowTooBig(maxBody int64) error {
	return &RequestError{Status: 413, Row: -1, Msg: fmt.Sprintf("the Arrow stream's buffers exceed %d bytes (--max-body)", maxBody)}
}

func (dc *decoder) arrowErr(err error, alloc *limitAlloc, maxBody int64) error {
	if alloc.exceeded {
		return arrowTooBig(maxBody)
	}
	var re *RequestError
	if errors.As(err, &re) {
		return re
	}
	if rerr := readError(err); rerr != nil {
		if re, ok := rerr.(*RequestError); ok && re.Status != 400 {
			return re
		}
	}
	return &RequestError{Status: 400, Row: -1, Msg: fmt.Sprintf("malformed Arrow IPC stream: %v", err)}
}

// arrowSchema maps the stream's columns to the request's columns (-1:
// none) and checks that every one is there once, of a type it can be
// read from: a number (or a date, timestamp, bool or decimal) for a
// feature or a time column, strings, binary or integers (or a
// dictionary of them) for a categorical column.
func (dc *decoder) arrowSchema(s *arrow.Schema) ([]int, error) {
	features := dc.inputs
	dc.stamp++
	cols := make([]int, s.NumFields())
	for c, f := range s.Fields() {
		j, ok := dc.index[f.Name]
		if !ok {
			return nil, badRequest(f.Name, "column %q is not %s of the model (%s)", f.Name, dc.one, dc.featureList)
		}
		if dc.seen[j] == dc.stamp {
			return nil, badRequest(f.Name, "column %q appears twice", f.Name)
		}
		dc.seen[j] = dc.stamp
		switch {
		case dc.kinds != nil && dc.kinds[j] == inCategory:
			if !levelType(f.Type) {
				return nil, badRequest(f.Name, "column %q is of type %s, not a level (strings or integers)", f.Name, f.Type)
			}
		case !table.Numeric(f.Type):
			if dc.kinds != nil && dc.kinds[j] == inTime {
				return nil, badRequest(f.Name, "column %q is of type %s, not a date, a timestamp or a number of days", f.Name, f.Type)
			}
			return nil, badRequest(f.Name, "column %q is of type %s, not a number", f.Name, f.Type)
		}
		cols[c] = j
	}
	for j, f := range features {
		if dc.seen[j] != dc.stamp {
			return nil, badRequest(f, "column %q is missing (the stream has %d of the model's %d %s)", f, s.NumFields(), len(features), dc.what)
		}
	}
	return cols, nil
}

// levelType reports whether table.Levels reads categorical levels from
// columns of type dt.
func levelType(dt arrow.DataType) bool {
	switch dt.ID() {
	case arrow.STRING, arrow.LARGE_STRING, arrow.STRING_VIEW, arrow.BINARY, arrow.LARGE_BINARY, arrow.BINARY_VIEW,
		arrow.FIXED_SIZE_BINARY, arrow.INT8, arrow.INT16, arrow.INT32, arrow.INT64,
		arrow.UINT8, arrow.UINT16, arrow.UINT32, arrow.UINT64:
		return true
	case arrow.DICTIONARY:
		return levelType(dt.(*arrow.DictionaryType).ValueType)
	}
	return false
}

// arrowColumn writes column col (request column j) into x, row-major,
// the first of its rows being the request's row base. Values are
// converted as predict converts a file's columns: numbers, bool, dates
// and timestamps, decimals and dictionaries of them by table.Convert;
// a categorical column's levels by table.Levels, a null being the NULL
// level.
func (dc *decoder) arrowColumn(col arrow.Array, x []float64, base, j int) error {
	d := len(dc.inputs)
	n := col.Len()
	if dc.kinds != nil && dc.kinds[j] == inCategory {
		var err error
		dc.lbuf, err = table.Levels(col, dc.lbuf, func(i int, l []byte, null bool) {
			if null {
				x[i*d+j] = featenc.NullCode
			} else {
				x[i*d+j] = featenc.CodeBytes(l)
			}
		})
		if err != nil {
			return badRequest(dc.inputs[j], "column %q: %v", dc.inputs[j], err)
		}
		return nil
	}
	if cap(dc.col) < n {
		dc.col = make([]float64, n)
	}
	vals := dc.col[:n]
	if err := table.Convert(col, vals, func(int, string) {}); err != nil {
		return badRequest(dc.inputs[j], "column %q: %v", dc.inputs[j], err)
	}
	for i, v := range vals {
		var err error
		if col.IsNull(i) {
			v, err = dc.nulls.null(base+i, j, dc.inputs)
		} else {
			v, err = dc.nulls.value(v, base+i, j, dc.inputs)
		}
		if err != nil {
			return err
		}
		x[i*d+j] = v
	}
	return nil
}

// writeArrow writes the answer's columns as an Arrow IPC stream of one
// record batch: float64 columns, and the labels of a labelled
// classifier's prediction as strings.
func writeArrow(w io.Writer, info *Info, p plan, z []float64, it *item) error {
	fields := make([]arrow.Field, len(p))
	arrs := make([]arrow.Array, len(p))
	mem := memory.DefaultAllocator
	n := it.rows
	defer func() {
		for _, a := range arrs {
			if a != nil {
				a.Release()
			}
		}
	}()
	vals := make([]float64, n)
	for c, col := range p {
		name := col.name
		if col.src == srcClass && info.Labeled {
			b := array.NewStringBuilder(mem)
			for i := range n {
				b.Append(info.ClassNames[it.res.Class[i]])
			}
			fields[c] = arrow.Field{Name: name, Type: arrow.BinaryTypes.String}
			arrs[c] = b.NewArray()
			b.Release()
			continue
		}
		for i := range n {
			if col.src == srcClass {
				vals[i] = info.classValue(it.res.Class[i])
			} else {
				vals[i] = it.value(info, col, z, i)
			}
		}
		b := array.NewFloat64Builder(mem)
		b.AppendValues(vals, nil)
		fields[c] = arrow.Field{Name: name, Type: arrow.PrimitiveTypes.Float64}
		arrs[c] = b.NewArray()
		b.Release()
	}
	schema := arrow.NewSchema(fields, nil)
	rec := array.NewRecordBatch(schema, arrs, int64(n))
	defer rec.Release()
	wr := ipc.NewWriter(w, ipc.WithSchema(schema), ipc.WithAllocator(mem))
	if err := wr.Write(rec); err != nil {
		wr.Close()
		return err
	}
	return wr.Close()
}
