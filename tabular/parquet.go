package tabular

import (
	"context"
	"fmt"
	"os"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"github.com/falkon-ooc/falkon-ooc/featenc"
	"github.com/falkon-ooc/falkon-ooc/internal/table"
)

// parquetFile reads the chosen columns of a Parquet file, each through its
// own pqarrow column reader, batch by batch.
type parquetFile struct {
	path   string
	rdr    *file.Reader
	num    []*pqarrow.ColumnReader // numeric columns, in batch order
	keep   []*pqarrow.ColumnReader
	total  int64
	done   int64
	groups table.RowGroupEnds
	// labels maps a string column (by index in num) to its label
	// indices (Options.Labels).
	labels map[int]map[string]int
	known  map[int][]string
	cat    map[int]bool // Options.Categorical, by index in num
	buf    []byte
}

func (r *Reader) openParquet(path string) (fileReader, []string, error) {
	return r.openParquetFrom(path, nil, 0)
}

// openParquetFrom opens the Parquet file held by src (size bytes), or the
// file at path when src is nil.
func (r *Reader) openParquetFrom(path string, src parquet.ReaderAtSeeker, size int64) (fr fileReader, names []string, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("%s: internal error while reading the Parquet footer: %v", path, p)
		}
	}()
	// The footer is checked as chunkstore/ingest checks it (one reader,
	// STYLE.md §2c): a forged row count is refused, not believed.
	cols := len(r.columns()) + len(r.opt.Keep)
	var rdr *file.Reader
	if src != nil {
		rdr, err = table.OpenParquetFrom(path, src, size, cols, r.mem)
	} else {
		var st os.FileInfo
		if st, err = os.Stat(path); err != nil {
			return nil, nil, err
		}
		rdr, err = table.OpenParquet(path, st.Size(), cols, r.mem)
	}
	if err != nil {
		return nil, nil, err
	}
	pf := &parquetFile{path: path, rdr: rdr, total: rdr.NumRows(), groups: table.RowGroups(rdr)}
	ok := false
	defer func() {
		if !ok {
			pf.Close()
		}
	}()
	pq, err := pqarrow.NewFileReader(rdr, pqarrow.ArrowReadProperties{BatchSize: int64(r.opt.BatchRows)}, r.mem)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", path, err)
	}
	sc, err := pq.Schema()
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", path, err)
	}
	index := map[string]int{}
	for i, f := range sc.Fields() {
		names = append(names, f.Name)
		index[f.Name] = i
	}
	all, hive, err := r.fromPath(path, names)
	if err != nil {
		return nil, nil, err
	}
	get := func(name string) (*pqarrow.ColumnReader, error) {
		cr, err := pq.GetColumn(context.Background(), index[name])
		if err != nil {
			return nil, fmt.Errorf("%s: column %q: %w", path, name, err)
		}
		return cr, nil
	}
	for _, c := range r.columns() {
		if !ownColumn(names, c) {
			pf.num = append(pf.num, nil) // a key of the path, added by hive
			continue
		}
		cr, err := get(c)
		if err != nil {
			return nil, nil, err
		}
		pf.num = append(pf.num, cr)
		if idx, ok := r.labels[c]; ok && stringType(cr.Field().Type) {
			if pf.labels == nil {
				pf.labels, pf.known = map[int]map[string]int{}, map[int][]string{}
			}
			j := len(pf.num) - 1
			pf.labels[j], pf.known[j] = idx, r.opt.Labels[c]
			continue
		}
		if r.cat[c] {
			if pf.cat == nil {
				pf.cat = map[int]bool{}
			}
			pf.cat[len(pf.num)-1] = true
			continue
		}
		if !numericType(cr.Field().Type) {
			return nil, nil, fmt.Errorf("%s: column %q has type %s, which is not numeric", path, c, cr.Field().Type)
		}
	}
	for _, c := range r.opt.Keep {
		if !ownColumn(names, c) {
			pf.keep = append(pf.keep, nil) // a key of the path, added by hive
			if len(r.keepType) < len(r.opt.Keep) {
				r.keepType = append(r.keepType, arrow.BinaryTypes.String)
			}
			continue
		}
		cr, err := get(c)
		if err != nil {
			return nil, nil, err
		}
		pf.keep = append(pf.keep, cr)
		if len(r.keepType) < len(r.opt.Keep) {
			r.keepType = append(r.keepType, cr.Field().Type)
		}
	}
	ok = true
	if hive != nil {
		hive.fileReader = pf
		return hive, all, nil
	}
	return pf, all, nil
}

func (p *parquetFile) header() bool    { return false }
func (p *parquetFile) rowsRead() int64 { return p.done }

func (p *parquetFile) read(ctx context.Context, n int, cols [][]float64, bads []bad) (keep []arrow.Array, rows int, err error) {
	want := int(min(int64(n), p.total-p.done))
	if want <= 0 {
		return nil, 0, nil
	}
	at := func(err error) error {
		return fmt.Errorf("%s: %w (at rows %d–%d of the file)", p.path, err, p.done+1, p.done+int64(want))
	}
	// arrow-go panics on some malformed pages (a page header without the
	// header of its type dereferences nil): say which column and row
	// group.
	var cur *pqarrow.ColumnReader
	defer func() {
		if e := recover(); e != nil {
			releaseAll(keep)
			name := "?"
			if cur != nil {
				name = cur.Field().Name
			}
			keep, rows, err = nil, 0, at(table.PanicError(name, p.groups.Span(p.done, want), e))
		}
	}()
	for j, cr := range p.num {
		if cr == nil {
			continue // a key of the path
		}
		cur = cr
		chunked, err := cr.NextBatch(int64(want))
		if err != nil {
			return nil, 0, at(fmt.Errorf("column %q: %w", cr.Field().Name, err))
		}
		if got := chunked.Len(); got != want {
			chunked.Release()
			return nil, 0, at(fmt.Errorf("column %q: read %d values where the file metadata promises %d (an unsupported encoding or a corrupt file)", cr.Field().Name, got, want))
		}
		off := 0
		for _, a := range chunked.Chunks() {
			if p.cat[j] {
				dst := cols[j][off : off+a.Len()]
				var err error
				p.buf, err = table.Levels(a, p.buf, func(i int, l []byte, null bool) {
					if null {
						dst[i] = featenc.NullCode
					} else {
						dst[i] = featenc.CodeBytes(l)
					}
				})
				if err != nil {
					chunked.Release()
					return nil, 0, at(fmt.Errorf("column %q: %w", cr.Field().Name, err))
				}
				off += a.Len()
				continue
			}
			if idx, ok := p.labels[j]; ok {
				if row, err := toCode(a, cols[j][off:off+a.Len()], idx, p.known[j], &bads[j], off); err != nil {
					chunked.Release()
					return nil, 0, fmt.Errorf("%s: %s: column %q: %w", p.path, rowPhrase(p.done+int64(off+row)+1, false), cr.Field().Name, err)
				}
				off += a.Len()
				continue
			}
			if err := toFloat(a, cols[j][off:off+a.Len()], &bads[j], off); err != nil {
				chunked.Release()
				return nil, 0, at(fmt.Errorf("column %q: %w", cr.Field().Name, err))
			}
			off += a.Len()
		}
		chunked.Release()
	}
	for _, cr := range p.keep {
		if cr == nil {
			keep = append(keep, nil) // a key of the path
			continue
		}
		cur = cr
		chunked, err := cr.NextBatch(int64(want))
		if err != nil {
			releaseAll(keep)
			return nil, 0, at(fmt.Errorf("column %q: %w", cr.Field().Name, err))
		}
		if got := chunked.Len(); got != want {
			chunked.Release()
			releaseAll(keep)
			return nil, 0, at(fmt.Errorf("column %q: read %d values where the file metadata promises %d (an unsupported encoding or a corrupt file)", cr.Field().Name, got, want))
		}
		a, err := concat(chunked.Chunks())
		chunked.Release()
		if err != nil {
			releaseAll(keep)
			return nil, 0, at(fmt.Errorf("column %q: %w", cr.Field().Name, err))
		}
		keep = append(keep, a)
	}
	p.done += int64(want)
	return keep, want, nil
}

func (p *parquetFile) Close() error {
	for _, cr := range append(p.num, p.keep...) {
		if cr != nil {
			cr.Release()
		}
	}
	p.num, p.keep = nil, nil
	return p.rdr.Close()
}
