package table

import (
	"fmt"

	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/file"

	"github.com/falkon-ooc/falkon-ooc/internal/textlimit"
)

// ParquetBufferSize is the largest read buffer of a column's buffered
// stream, and ParquetBuffers bounds their sum: a file read by many
// columns at once gets smaller buffers (ParquetBufferFor).
const (
	ParquetBufferSize = 256 << 10
	ParquetBuffers    = 64 << 20
	minParquetBuffer  = 16 << 10
)

// ParquetBufferFor returns the read buffer of each column's stream when
// cols columns are read at once: ParquetBufferSize, or less so that the
// buffers hold ParquetBuffers in all, but at least 16 KiB (a read of a
// page larger than its buffer goes past it).
func ParquetBufferFor(cols int) int {
	return min(ParquetBufferSize, max(minParquetBuffer, ParquetBuffers/max(cols, 1)))
}

// OpenParquet opens the Parquet file at path, of size bytes, for reading
// cols columns at once (0: only the footer), each through a buffered
// stream of ParquetBufferFor(cols), and checks its footer before any page
// is read (CheckFooter). A panic of the Parquet library on a damaged
// footer is returned as an error. Errors name path.
func OpenParquet(path string, size int64, cols int, mem memory.Allocator) (*file.Reader, error) {
	return openParquet(path, nil, size, cols, mem)
}

// OpenParquetFrom is OpenParquet of a file held by r (such as the bytes of
// a file in memory, for tests and fuzzing), named path in errors.
func OpenParquetFrom(path string, r parquet.ReaderAtSeeker, size int64, cols int, mem memory.Allocator) (*file.Reader, error) {
	return openParquet(path, r, size, cols, mem)
}

func openParquet(path string, r parquet.ReaderAtSeeker, size int64, cols int, mem memory.Allocator) (rdr *file.Reader, err error) {
	defer func() {
		if p := recover(); p != nil {
			if rdr != nil {
				rdr.Close()
			}
			rdr, err = nil, fmt.Errorf("%s: internal error while reading the Parquet footer: %v", path, p)
		}
	}()
	props := parquet.NewReaderProperties(mem)
	props.BufferedStreamEnabled = true
	props.BufferSize = int64(ParquetBufferFor(cols))
	if r != nil {
		rdr, err = file.NewParquetReader(r, file.WithReadProps(props))
	} else {
		rdr, err = file.OpenParquetFile(path, false, file.WithReadProps(props))
	}
	if err != nil {
		return nil, fmt.Errorf("%s: not a readable Parquet file: %w", path, err)
	}
	if err := CheckFooter(path, rdr, size); err != nil {
		rdr.Close()
		return nil, err
	}
	return rdr, nil
}

// CheckFooter checks what a Parquet footer says before any page is read:
// the row count of each row group (never negative) and of the file (the
// sum of its row groups': a footer claiming 1000 rows over row groups of
// 2000 once made predict write 1000 predictions and exit 0), and each
// column chunk's sizes and offsets, which must be non-negative and lie
// within the file of size bytes (a chunk claiming size -5 once made
// arrow-go's reader panic in makeslice). It names the file, the row group
// and the column.
func CheckFooter(path string, rdr *file.Reader, size int64) error {
	md := rdr.MetaData()
	var sum int64
	for g := range md.NumRowGroups() {
		rg := md.RowGroup(g)
		if rg.NumRows() < 0 {
			return fmt.Errorf("%s: damaged Parquet metadata: row group %d claims %d rows", path, g, rg.NumRows())
		}
		sum += rg.NumRows()
		for c := range rg.NumColumns() {
			cc, err := rg.ColumnChunk(c)
			if err != nil {
				return fmt.Errorf("%s: damaged Parquet metadata: row group %d, column %d: %w", path, g, c, err)
			}
			bad := func(what string, v int64) error {
				return fmt.Errorf("%s: damaged Parquet metadata: row group %d, column %q: %s %d", path, g, textlimit.Clip(cc.PathInSchema().String()), what, v)
			}
			switch {
			case cc.TotalCompressedSize() < 0:
				return bad("negative compressed size", cc.TotalCompressedSize())
			case cc.TotalUncompressedSize() < 0:
				return bad("negative uncompressed size", cc.TotalUncompressedSize())
			case cc.NumValues() < 0:
				return bad("negative value count", cc.NumValues())
			case cc.DataPageOffset() < 0:
				return bad("negative data page offset", cc.DataPageOffset())
			case cc.HasDictionaryPage() && cc.DictionaryPageOffset() < 0:
				return bad("negative dictionary page offset", cc.DictionaryPageOffset())
			}
			start := cc.DataPageOffset()
			if cc.HasDictionaryPage() && cc.DictionaryPageOffset() > 0 && cc.DictionaryPageOffset() < start {
				start = cc.DictionaryPageOffset()
			}
			if start > size || cc.TotalCompressedSize() > size-start {
				return bad(fmt.Sprintf("chunk at offset %d extends beyond the end of the %d-byte file: size", start, size), cc.TotalCompressedSize())
			}
		}
	}
	if total := rdr.NumRows(); sum != total {
		return fmt.Errorf("%s: corrupt footer: its row groups hold %d rows, but it says %d", path, sum, total)
	}
	return nil
}

// RowGroupEnds lists, for each row group of a file, the row where it
// ends: row group k holds rows [ends[k-1], ends[k]) (0-based).
type RowGroupEnds []int64

// RowGroups returns the row group ends of rdr.
func RowGroups(rdr *file.Reader) RowGroupEnds {
	ends := make(RowGroupEnds, rdr.NumRowGroups())
	var end int64
	for k := range ends {
		end += rdr.MetaData().RowGroup(k).NumRows()
		ends[k] = end
	}
	return ends
}

// Span names the row groups that rows [first, first+n) (0-based) lie in:
// "row group 3" or "row groups 3–4".
func (e RowGroupEnds) Span(first int64, n int) string {
	at := func(row int64) int {
		for k, end := range e {
			if row < end {
				return k
			}
		}
		return len(e) - 1
	}
	a, b := at(first), at(first+int64(max(n, 1))-1)
	if a == b {
		return fmt.Sprintf("row group %d", a)
	}
	return fmt.Sprintf("row groups %d–%d", a, b)
}

// PanicError turns a panic of arrow-go while reading a column into an
// error naming the column and the row groups read.
func PanicError(column, groups string, p any) error {
	return fmt.Errorf("column %q, %s: damaged or unsupported Parquet data; the Parquet reader panicked: %s",
		textlimit.Clip(column), groups, textlimit.Clip(fmt.Sprint(p)))
}
