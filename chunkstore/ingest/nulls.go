package ingest

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/falkon-ooc/falkon-ooc/chunkstore"
)

// Nulls "mean" in two steps. The first pass stores 0 for a bad feature
// value and marks its place with a 1 in a second store of the features'
// shape (the mask: the same chunk rows, so its chunks line up with the
// first pass's; mostly zeros, it compresses to little). The column's mean
// over its other values is then known from the first pass's statistics,
// and install's copy puts it where the mask says.

// createMask starts the mask store at path, for the features feats.
func (s *session) createMask(path string, feats []chunkstore.ColumnSpec, opt chunkstore.Options) (*chunkstore.Writer, error) {
	w, err := chunkstore.Create(path, feats, nil, chunkstore.Options{ChunkRows: opt.ChunkRows, Codec: opt.Codec, Workers: opt.Workers})
	if err != nil {
		return nil, fmt.Errorf("create the store of NULL places: %w", err)
	}
	s.countNulls(w)
	return w, nil
}

// countNulls makes pump count the bad feature values and hand their
// places to mask.
func (s *session) countNulls(mask sink) {
	s.mask = mask
	s.nulls = make([]int64, s.nfeat)
	s.maskCols = make([][]float64, s.nfeat)
	for j := range s.maskCols {
		s.maskCols[j] = make([]float64, s.batchRows)
	}
}

// markBad applies Nulls "mean" to a batch: a row whose target is bad is
// dropped, as with "drop"; a bad feature value becomes 0 and its row goes
// to b.nullRows.
func (s *session) markBad(f *fileInfo, b *batch, bads []bad) error {
	var drop []bool
	for j := s.nfeat; j < len(bads); j++ {
		for _, r := range bads[j].rows {
			if drop == nil {
				drop = make([]bool, b.n)
			}
			drop[r] = true
		}
	}
	for j := range s.nfeat {
		for _, r := range bads[j].rows {
			b.cols[j][r] = 0
		}
	}
	var at []int // with drops: each kept row's index after them
	if drop != nil {
		s.uncount(f, b, drop)
		at = make([]int, b.n)
		k := 0
		for i := range b.n {
			at[i] = k
			if !drop[i] {
				for _, col := range b.cols {
					col[k] = col[i]
				}
				k++
			}
		}
		b.dropped = b.n - k
		b.n = k
	}
	for j := range s.nfeat {
		for _, r := range bads[j].rows {
			switch {
			case drop == nil:
				b.nullRows[j] = append(b.nullRows[j], r)
			case !drop[r]:
				b.nullRows[j] = append(b.nullRows[j], at[r])
			}
		}
	}
	return nil
}

// appendMask appends the places of b's bad feature values to the mask
// store (Nulls "mean"); the writer calls it after appending b, in order.
func (s *session) appendMask(b *batch) error {
	if s.mask == nil {
		return nil
	}
	cols := s.maskCols
	for j := range cols {
		if cap(cols[j]) < b.n {
			cols[j] = make([]float64, b.n)
		}
		cols[j] = cols[j][:b.n]
		for _, r := range b.nullRows[j] {
			cols[j][r] = 1
		}
		s.nulls[j] += int64(len(b.nullRows[j]))
	}
	err := s.mask.Append(cols)
	for j := range cols {
		for _, r := range b.nullRows[j] {
			cols[j][r] = 0
		}
	}
	return err
}

// meansFunc returns the row count and the mean of every feature of the
// first pass (bad values as 0).
type meansFunc func() (count int64, means []float64, err error)

// fillValues returns, with Nulls "mean", the value of each kept feature
// with bad values (indexed as s.names; NaN elsewhere): the mean of its
// other values, from the statistics of the first pass (where the bad
// values are 0: mean × rows / (rows − bad)). It notes the count and the value in
// the column report. nil: nothing to fill.
func (s *session) fillValues(keep []int, stats meansFunc) ([]float64, error) {
	if s.filled(keep) == 0 {
		return nil, nil
	}
	count, means, err := stats()
	if err != nil {
		return nil, err
	}
	fill := make([]float64, len(s.names))
	for j := range fill {
		fill[j] = math.NaN()
	}
	for _, j := range keep {
		if j >= s.nfeat || s.nulls[j] == 0 {
			continue
		}
		bad := s.nulls[j]
		if bad == count {
			return nil, fmt.Errorf("column %q holds no value but NULL, NaN or ±Inf: --nulls mean has no mean to fill it with; leave it out with --exclude %s", clip(s.names[j]), clip(s.names[j]))
		}
		fill[j] = means[j] * float64(count) / float64(count-bad)
		rep := &s.report[s.reportAt[j]]
		rep.Nulls = bad
		rep.Note = fmt.Sprintf("%d NULL, NaN or ±Inf %s filled with the mean of the others, %s", bad, plural(bad, "value"), fmtNum(fill[j]))
	}
	return fill, nil
}

// filled counts the bad values of the kept features (Nulls "mean").
func (s *session) filled(keep []int) int64 {
	var n int64
	for _, j := range keep {
		if j < len(s.nulls) {
			n += s.nulls[j]
		}
	}
	return n
}

// filler puts each feature's fill value where the mask store says a
// value was bad, chunk by chunk, in install's copy.
type filler struct {
	mask  *chunkstore.Reader
	at    []int       // positions in the copy's columns to fill
	cols  []int       // their columns in the mask store
	value []float64   // their fill values
	buf   [][]float64 // their mask values, one chunk
}

// newFiller opens the mask store at path for the kept columns keep and
// their fill values (see fillValues).
func newFiller(path string, keep []int, fill []float64, chunkRows int) (*filler, error) {
	r, err := chunkstore.Open(path)
	if err != nil {
		return nil, fmt.Errorf("reopen the store of NULL places: %w", err)
	}
	f := &filler{mask: r}
	for k, j := range keep {
		if j < len(fill) && fill[j] == fill[j] { // not NaN: a column to fill
			f.at, f.cols, f.value = append(f.at, k), append(f.cols, j), append(f.value, fill[j])
			f.buf = append(f.buf, make([]float64, chunkRows))
		}
	}
	return f, nil
}

// apply fills chunk i's columns cols (the copy's, all of one length).
func (f *filler) apply(ctx context.Context, i int, cols [][]float64) error {
	n := len(cols[0])
	if f.mask.ChunkRows(i) != n {
		return errors.New("internal error: the store of NULL places does not line up with the store")
	}
	for k := range f.buf {
		f.buf[k] = f.buf[k][:n]
	}
	if err := f.mask.ReadColumns(ctx, i, f.cols, f.buf); err != nil {
		return fmt.Errorf("read the store of NULL places: %w", err)
	}
	for k, m := range f.buf {
		col, v := cols[f.at[k]], f.value[k]
		for r, bad := range m {
			if bad != 0 {
				col[r] = v
			}
		}
	}
	return nil
}

func (f *filler) Close() error { return f.mask.Close() }

// without returns a copy of vals without the rows skip (ascending).
func without(vals []float64, skip []int) []float64 {
	out := make([]float64, 0, len(vals)-len(skip))
	k := 0
	for i, v := range vals {
		if k < len(skip) && skip[k] == i {
			k++
			continue
		}
		out = append(out, v)
	}
	return out
}

func plural(n int64, noun string) string {
	if n == 1 {
		return noun
	}
	return noun + "s"
}

// badAt is where a column's first bad value is: file (index in
// s.files, -1: none yet) and 1-based row within it.
type badAt struct {
	file int
	row  int64
}

// countBad adds the bad values of a batch of f whose first row is row
// first (0-based) to the counts of a DryRun that reports them.
func (s *session) countBad(f *fileInfo, first int64, bads []bad) {
	fi := slices.Index(s.files, f)
	s.countMu.Lock()
	defer s.countMu.Unlock()
	for j := range bads {
		b := &bads[j]
		if len(b.rows) == 0 {
			continue
		}
		c := &s.counts[j]
		c.Null += b.n.Null
		c.NaN += b.n.NaN
		c.PosInf += b.n.PosInf
		c.NegInf += b.n.NegInf
		at := badAt{fi, first + int64(b.rows[0]) + 1}
		if p := s.firstAt[j]; p.file < 0 || at.file < p.file || at.file == p.file && at.row < p.row {
			s.firstAt[j] = at
		}
	}
}

// reportBad notes the counted bad values of each chosen column in the
// column report.
func (s *session) reportBad() {
	for j, c := range s.counts {
		if c == (chunkstore.BadCounts{}) {
			continue
		}
		rep := &s.report[s.reportAt[j]]
		rep.Bad = &c
		var parts []string
		for _, k := range []struct {
			n    int64
			what string
		}{{c.Null, "NULL"}, {c.NaN, "NaN"}, {c.PosInf, "+Inf"}, {c.NegInf, "-Inf"}} {
			if k.n > 0 {
				parts = append(parts, fmt.Sprintf("%d %s", k.n, k.what))
			}
		}
		at := s.firstAt[j]
		note := fmt.Sprintf("%s: ingest stops at the first (%s, row %d) unless --nulls drop (skips the rows) or mean", strings.Join(parts, ", "), s.files[at.file].name, at.row)
		if j < s.nfeat {
			note += " (fills the mean)"
		}
		if rep.Note != "" {
			note = rep.Note + "; " + note
		}
		rep.Note = note
	}
}
