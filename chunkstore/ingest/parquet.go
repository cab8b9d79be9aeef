package ingest

import (
	"bytes"
	"context"
	"fmt"

	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"golang.org/x/sync/errgroup"

	"github.com/falkon-ooc/falkon-ooc/internal/table"
)

// openParquet opens the Parquet input f for reading cols columns at once:
// its bytes in memory (f.mem, for tests and fuzzing: no file), or the file.
func (s *session) openParquet(f *fileInfo, cols int) (*file.Reader, error) {
	if f.mem != nil {
		return table.OpenParquetFrom(f.path, bytes.NewReader(f.mem), int64(len(f.mem)), cols, s.mem)
	}
	if f.remote != nil {
		rf, err := openRemote(f)
		if err != nil {
			return nil, err
		}
		rdr, err := table.OpenParquetFrom(f.path, rf, f.size, cols, s.mem)
		if err != nil {
			rf.Close()
		}
		return rdr, err
	}
	return table.OpenParquet(f.path, f.size, cols, s.mem)
}

// readParquet streams the chosen columns of a Parquet file, batch by batch,
// decoding the columns of a batch in parallel.
func (s *session) readParquet(ctx context.Context, f *fileInfo, out chan<- *batch) error {
	// The footer is checked again: the file may have changed since
	// inspectParquet.
	rdr, err := s.openParquet(f, len(s.names))
	if err != nil {
		return err
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
	coders := make([]coder, len(s.names))
	for j, name := range s.names {
		i := f.index[name]
		coders[j] = s.coderOf(f, j)
		if fld := fr.Manifest.Fields[i]; !s.cfg.noDirect && coders[j] == nil && fld.IsLeaf() && len(fld.Children) == 0 {
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
	groups := table.RowGroups(rdr)

	total := rdr.NumRows()
	if total != f.rows {
		return fmt.Errorf("%s: the file changed while ingesting (%d rows, then %d)", f.path, f.rows, total)
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
						err = table.PanicError(s.names[j], groups.Span(done, want), p)
					}
				}()
				if direct[j] != nil {
					return direct[j].read(want, b.cols[j][:want], &bads[j])
				}
				return readColumnBatch(readers[j], coders[j], want, b.cols[j][:want], &bads[j])
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
// numbers, or, when l is not nil, as l's codes (class labels, categorical
// levels).
// DESIGN.md: an unsupported encoding can make a Parquet column reader return
// fewer (or zero) values and no error, so the count is checked.
func readColumnBatch(r *pqarrow.ColumnReader, l coder, want int, dst []float64, b *bad) error {
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
			// The coder's errors name the column already.
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
