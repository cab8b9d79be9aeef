package ingest

import (
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/file"
)

// directKind says how the physical values of a directly read column become
// float64.
type directKind int

const (
	directF64  directKind = iota + 1 // DOUBLE
	directF32                        // FLOAT
	directI32                        // INT32 as int8…int32, uint8, uint16, date32 (days)
	directU32                        // INT32 holding a uint32
	directI64                        // INT64
	directU64                        // INT64 holding a uint64
	directBool                       // BOOLEAN
)

// directKindOf returns how to read a top-level column of the given Arrow
// type (as pqarrow maps it) and Parquet column directly, or 0 when the
// column must go through pqarrow (decimals, timestamps, dictionaries,
// INT96, nested columns, …).
func directKindOf(dt arrow.DataType, phys parquet.Type) directKind {
	switch {
	case dt.ID() == arrow.FLOAT64 && phys == parquet.Types.Double:
		return directF64
	case dt.ID() == arrow.FLOAT32 && phys == parquet.Types.Float:
		return directF32
	case phys == parquet.Types.Int32:
		switch dt.ID() {
		case arrow.INT8, arrow.INT16, arrow.INT32, arrow.UINT8, arrow.UINT16, arrow.DATE32:
			return directI32
		case arrow.UINT32:
			return directU32
		}
	case phys == parquet.Types.Int64:
		switch dt.ID() {
		case arrow.INT64:
			return directI64
		case arrow.UINT64:
			return directU64
		}
	case dt.ID() == arrow.BOOL && phys == parquet.Types.Boolean:
		return directBool
	}
	return 0
}

// directColumn reads one flat column row group by row group with Parquet's
// typed column readers, decoding straight into the batch's float64 buffer:
// no Arrow arrays, no per-batch allocation. DESIGN.md: an unsupported
// encoding can make ReadBatch return zero values and a nil error, so every
// read is checked against the count asked for and the reader's Err.
type directColumn struct {
	name   string
	rdr    *file.Reader
	leaf   int
	kind   directKind
	maxDef int16

	rg   int                    // next row group to open
	cur  file.ColumnChunkReader // current row group's reader
	left int64                  // rows left in the current row group

	def  []int16
	f64  []float64
	f32  []float32
	i32  []int32
	i64  []int64
	bits []bool
}

// read reads the next want rows of the column, which must not cross the
// current row group's end, into dst, recording NULLs, NaNs and infinities
// in b.
func (d *directColumn) read(want int, dst []float64, b *bad) error {
	for d.left == 0 { // skipping empty row groups
		if d.rg >= d.rdr.NumRowGroups() {
			return fmt.Errorf("column %q: no rows left, %d wanted", d.name, want)
		}
		if err := d.close(); err != nil {
			return fmt.Errorf("column %q, row group %d: %w", d.name, d.rg-1, err)
		}
		rg := d.rdr.RowGroup(d.rg)
		cr, err := rg.Column(d.leaf)
		if err != nil {
			return fmt.Errorf("column %q, row group %d: %w", d.name, d.rg, err)
		}
		d.cur, d.left = cr, rg.NumRows()
		d.rg++
	}
	if int64(want) > d.left {
		return fmt.Errorf("internal error: column %q: %d rows wanted, %d left in the row group", d.name, want, d.left)
	}
	if d.maxDef > 0 && len(d.def) < want {
		d.def = make([]int16, want)
	}
	got := 0
	for got < want {
		n, vals, err := d.readBatch(want-got, dst[got:want])
		if err == nil && n == 0 {
			err = d.cur.Err()
			if err == nil {
				err = fmt.Errorf("read %d of %d values (an unsupported encoding or a corrupt file)", got, want)
			}
		}
		if err != nil {
			return fmt.Errorf("column %q, row group %d: %w", d.name, d.rg-1, err)
		}
		if d.maxDef == 0 && vals != n {
			return fmt.Errorf("column %q, row group %d: decoded %d values for %d rows (an unsupported encoding or a corrupt file)", d.name, d.rg-1, vals, n)
		}
		if d.maxDef > 0 {
			if err := d.spread(n, vals, dst[got:got+n], b, got); err != nil {
				return fmt.Errorf("column %q, row group %d: %w", d.name, d.rg-1, err)
			}
		}
		got += n
	}
	d.left -= int64(want)
	if d.maxDef == 0 && d.kind != directBool {
		scanFiniteFrom(dst[:want], b, 0)
	}
	return nil
}

// close releases the current row group's reader: its page buffers.
func (d *directColumn) close() error {
	if d.cur == nil {
		return nil
	}
	c, ok := d.cur.(interface{ Close() error }) // not in file.ColumnChunkReader
	d.cur = nil
	if ok {
		return c.Close()
	}
	return nil
}

// readBatch reads up to n rows. For a required column the values land in
// dst; for a nullable one they are packed at the start of a scratch slice
// (or dst for DOUBLE) with d.def holding the definition levels, and spread
// then places them.
func (d *directColumn) readBatch(n int, dst []float64) (rows, vals int, err error) {
	var defs []int16
	if d.maxDef > 0 {
		defs = d.def[:n]
	}
	var total int64
	switch d.kind {
	case directF64:
		total, vals, err = d.cur.(*file.Float64ColumnChunkReader).ReadBatch(int64(n), dst[:n], defs, nil)
		return int(total), vals, err
	case directF32:
		d.f32 = grow(d.f32, n)
		total, vals, err = d.cur.(*file.Float32ColumnChunkReader).ReadBatch(int64(n), d.f32[:n], defs, nil)
		for i, v := range d.f32[:vals] {
			dst[i] = float64(v)
		}
	case directI32:
		d.i32 = grow(d.i32, n)
		total, vals, err = d.cur.(*file.Int32ColumnChunkReader).ReadBatch(int64(n), d.i32[:n], defs, nil)
		for i, v := range d.i32[:vals] {
			dst[i] = float64(v)
		}
	case directU32:
		d.i32 = grow(d.i32, n)
		total, vals, err = d.cur.(*file.Int32ColumnChunkReader).ReadBatch(int64(n), d.i32[:n], defs, nil)
		for i, v := range d.i32[:vals] {
			dst[i] = float64(uint32(v))
		}
	case directI64:
		d.i64 = grow(d.i64, n)
		total, vals, err = d.cur.(*file.Int64ColumnChunkReader).ReadBatch(int64(n), d.i64[:n], defs, nil)
		for i, v := range d.i64[:vals] {
			dst[i] = float64(v)
		}
	case directU64:
		d.i64 = grow(d.i64, n)
		total, vals, err = d.cur.(*file.Int64ColumnChunkReader).ReadBatch(int64(n), d.i64[:n], defs, nil)
		for i, v := range d.i64[:vals] {
			dst[i] = float64(uint64(v))
		}
	case directBool:
		d.bits = grow(d.bits, n)
		total, vals, err = d.cur.(*file.BooleanColumnChunkReader).ReadBatch(int64(n), d.bits[:n], defs, nil)
		for i, v := range d.bits[:vals] {
			dst[i] = 0
			if v {
				dst[i] = 1
			}
		}
	default:
		return 0, 0, fmt.Errorf("internal error: direct kind %d", d.kind)
	}
	return int(total), vals, err
}

// spread moves the vals packed values at the start of dst (len(dst) ==
// rows) to the rows whose definition level is the maximum, and records the
// other rows as NULL and non-finite values, at offset off of the batch.
func (d *directColumn) spread(rows, vals int, dst []float64, b *bad, off int) error {
	defs := d.def[:rows]
	present := 0
	for _, l := range defs {
		if l == d.maxDef {
			present++
		}
	}
	if present != vals {
		return fmt.Errorf("decoded %d values where the definition levels promise %d (an unsupported encoding or a corrupt file)", vals, present)
	}
	if present == rows {
		scanFiniteFrom(dst, b, off)
		return nil
	}
	k := vals - 1
	for i := rows - 1; i >= 0; i-- { // backwards: a value only moves right
		if defs[i] == d.maxDef {
			dst[i] = dst[k]
			k--
		} else {
			dst[i] = 0
		}
	}
	for i, l := range defs {
		if l != d.maxDef {
			b.add(off+i, "NULL")
		} else if v := dst[i]; v-v != 0 {
			b.add(off+i, nonFinite(v))
		}
	}
	return nil
}

// scanFiniteFrom records the NaNs and infinities of dst, at offset off.
func scanFiniteFrom(dst []float64, b *bad, off int) {
	for i, v := range dst {
		if v-v != 0 {
			b.add(off+i, nonFinite(v))
		}
	}
}

func grow[T any](s []T, n int) []T {
	if cap(s) >= n {
		return s[:n]
	}
	return make([]T, n)
}
