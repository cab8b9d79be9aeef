package ingest

import (
	"context"
	"fmt"

	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"golang.org/x/sync/errgroup"
)

// parquetBufferSize is the read buffer of each column's buffered stream.
const parquetBufferSize = 256 << 10

func (s *session) readerProps() *parquet.ReaderProperties {
	props := parquet.NewReaderProperties(s.mem)
	props.BufferedStreamEnabled = true
	props.BufferSize = parquetBufferSize
	return props
}

// readParquet streams the chosen columns of a Parquet file, batch by batch,
// decoding the columns of a batch in parallel.
func (s *session) readParquet(ctx context.Context, f *fileInfo, out chan<- *batch) error {
	rdr, err := file.OpenParquetFile(f.path, false, file.WithReadProps(s.readerProps()))
	if err != nil {
		return fmt.Errorf("%s: not a readable Parquet file: %w", f.path, err)
	}
	defer rdr.Close()
	fr, err := pqarrow.NewFileReader(rdr, pqarrow.ArrowReadProperties{Parallel: true, BatchSize: int64(s.batchRows)}, s.mem)
	if err != nil {
		return fmt.Errorf("%s: %w", f.path, err)
	}
	// Flat columns of plain numeric types are decoded by Parquet's typed
	// column readers straight into the batch (directColumn); the others
	// (decimals, timestamps, dictionaries, …) go through pqarrow.
	readers := make([]*pqarrow.ColumnReader, len(s.names))
	direct := make([]*directColumn, len(s.names))
	anyDirect := false
	defer func() {
		for _, r := range readers {
			if r != nil {
				r.Release()
			}
		}
		for _, d := range direct {
			if d != nil {
				d.close()
			}
		}
	}()
	for j, name := range s.names {
		i := f.index[name]
		if fld := fr.Manifest.Fields[i]; !s.cfg.noDirect && fld.IsLeaf() && len(fld.Children) == 0 {
			descr := rdr.MetaData().Schema.Column(fld.ColIndex)
			if descr.MaxRepetitionLevel() == 0 && descr.MaxDefinitionLevel() <= 1 {
				if k := directKindOf(fld.Field.Type, descr.PhysicalType()); k != 0 {
					direct[j] = &directColumn{name: name, rdr: rdr, leaf: fld.ColIndex, kind: k, maxDef: descr.MaxDefinitionLevel()}
					anyDirect = true
					continue
				}
			}
		}
		readers[j], err = fr.GetColumn(ctx, i)
		if err != nil {
			return fmt.Errorf("%s: column %q: %w", f.path, name, err)
		}
	}
	// Batches end at row-group boundaries when a column is read directly.
	var rgEnds []int64
	var end int64
	for k := range rdr.NumRowGroups() {
		if n := rdr.MetaData().RowGroup(k).NumRows(); n > 0 {
			end += n
			rgEnds = append(rgEnds, end)
		}
	}
	groups := rowGroups(rdr)

	total := rdr.NumRows()
	if total != f.rows {
		return fmt.Errorf("%s: the file changed while ingesting (%d rows, then %d)", f.path, f.rows, total)
	}
	if end != total {
		return fmt.Errorf("%s: corrupt footer: its row groups hold %d rows, but it says %d", f.path, end, total)
	}
	bads := make([]bad, len(s.names))
	var done int64
	for done < total {
		if err := ctx.Err(); err != nil {
			return err
		}
		want := int(min(int64(s.batchRows), total-done))
		if anyDirect {
			for len(rgEnds) > 0 && rgEnds[0] <= done {
				rgEnds = rgEnds[1:]
			}
			want = int(min(int64(want), rgEnds[0]-done))
		}
		b := s.getBatch()
		b.n = want
		for j := range bads {
			bads[j] = bad{rows: bads[j].rows[:0]}
		}
		var g errgroup.Group
		g.SetLimit(s.workers)
		for j := range readers {
			g.Go(func() (err error) {
				// arrow-go panics on some malformed pages (a page header
				// without the header of its type dereferences nil): say
				// which column and row group.
				defer func() {
					if p := recover(); p != nil {
						err = panicError(s.names[j], groups.span(done, want), p)
					}
				}()
				if direct[j] != nil {
					return direct[j].read(want, b.cols[j][:want], &bads[j])
				}
				return readColumnBatch(readers[j], s.labels[j], want, b.cols[j][:want], &bads[j])
			})
		}
		if err := g.Wait(); err != nil {
			return fmt.Errorf("%s: %w (at rows %d–%d of the file)", f.path, err, done+1, done+int64(want))
		}
		if err := s.finish(f, b, done, bads); err != nil {
			return err
		}
		b.bytesIn = f.size*(done+int64(want))/total - f.size*done/total
		if err := send(ctx, out, b); err != nil {
			return err
		}
		done += int64(want)
	}
	return nil
}

// readColumnBatch reads the next want values of one column into dst: as
// numbers, or, when l is not nil, a string target's values as class codes.
// DESIGN.md: an unsupported encoding can make a Parquet column reader return
// fewer (or zero) values and no error, so the count is checked.
func readColumnBatch(r *pqarrow.ColumnReader, l *labelSet, want int, dst []float64, b *bad) error {
	name := r.Field().Name
	chunked, err := r.NextBatch(int64(want))
	if err != nil {
		return fmt.Errorf("column %q: %w", name, err)
	}
	defer chunked.Release()
	if got := chunked.Len(); got != want {
		return fmt.Errorf("column %q: read %d values where the file metadata promises %d (an unsupported encoding or a corrupt file)", name, got, want)
	}
	off := 0
	for _, arr := range chunked.Chunks() {
		n := arr.Len()
		var cb bad
		if l != nil {
			// The label set's errors name the column already.
			if err := l.encode(arr, dst[off:off+n], &cb); err != nil {
				return err
			}
		} else if err := convertArray(arr, dst[off:off+n], &cb); err != nil {
			return fmt.Errorf("column %q: %w", name, err)
		}
		b.merge(off, &cb)
		off += n
	}
	return nil
}

// checkChunkMeta checks what the footer says of each column chunk before
// any page is read: sizes and offsets that are negative or reach beyond
// the file (a chunk claiming size -5 once made arrow-go's reader panic in
// makeslice). It names the file, the row group and the column.
func checkChunkMeta(path string, rdr *file.Reader, size int64) error {
	md := rdr.MetaData()
	for g := range md.NumRowGroups() {
		rg := md.RowGroup(g)
		if rg.NumRows() < 0 {
			return fmt.Errorf("%s: damaged Parquet metadata: row group %d claims %d rows", path, g, rg.NumRows())
		}
		for c := range rg.NumColumns() {
			cc, err := rg.ColumnChunk(c)
			if err != nil {
				return fmt.Errorf("%s: damaged Parquet metadata: row group %d, column %d: %w", path, g, c, err)
			}
			bad := func(what string, v int64) error {
				return fmt.Errorf("%s: damaged Parquet metadata: row group %d, column %q: %s %d", path, g, clip(cc.PathInSchema().String()), what, v)
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
	return nil
}

// rowGroupEnds lists, for each row group of a file, the row where it
// ends: row group k holds rows [ends[k-1], ends[k]) (0-based).
type rowGroupEnds []int64

func rowGroups(rdr *file.Reader) rowGroupEnds {
	ends := make(rowGroupEnds, rdr.NumRowGroups())
	var end int64
	for k := range ends {
		end += rdr.MetaData().RowGroup(k).NumRows()
		ends[k] = end
	}
	return ends
}

// span names the row groups that rows [first, first+n) (0-based) lie in:
// "row group 3" or "row groups 3–4".
func (e rowGroupEnds) span(first int64, n int) string {
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

// panicError turns a panic of arrow-go while reading a column into an
// error naming the column and the row groups read.
func panicError(column, groups string, p any) error {
	return fmt.Errorf("column %q, %s: damaged or unsupported Parquet data; the Parquet reader panicked: %s",
		clip(column), groups, clip(fmt.Sprint(p)))
}
