package ingest

import (
	"fmt"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/falkon-ooc/falkon-ooc/featenc"
	"github.com/falkon-ooc/falkon-ooc/internal/table"
)

// DefaultMaxLevels is Config.MaxLevels when 0: the most levels a
// categorical column gets one-hot features for (bench/TABLES.md "Levels").
const DefaultMaxLevels = 64

// Categorical features in two steps. The first pass stores, for each
// value of a categorical column, its raw code (featenc.Code, NullCode for
// NULL) and counts its levels in a featenc.Counter per file; the counters
// are merged in file order as the files are done, so the levels do not
// depend on the order the files finished in. The levels kept are then
// known, and install's copy expands each code into the one-hot features
// with the same featenc.Encoder that predict uses.

// catCoder encodes one categorical column of one file: codes into the
// batch, levels into its counter. A file's column is read by one
// goroutine at a time, so it needs no lock.
type catCoder struct {
	column  string
	counter *featenc.Counter
	buf     []byte // an integer level's decimal digits
	dst     []float64
}

func newCatCoder(column string) *catCoder {
	return &catCoder{column: column, counter: featenc.NewCounter(0)}
}

// encode writes the codes of arr's values (table.Levels) into dst and
// counts their levels. A NULL is the code NullCode, a level of its own,
// not a bad value.
func (c *catCoder) encode(arr arrow.Array, dst []float64, _ *bad) error {
	c.dst = dst
	var err error
	c.buf, err = table.Levels(arr, c.buf, c.level)
	c.dst = nil
	if err != nil {
		return fmt.Errorf("column %q: %w", clip(c.column), err)
	}
	return nil
}

func (c *catCoder) level(i int, l []byte, null bool) {
	if null {
		c.dst[i] = featenc.NullCode
		c.counter.AddNull()
		return
	}
	c.dst[i] = c.counter.AddBytes(l)
}

// coder encodes the values of a column that are not numbers: class labels
// of a string target, or levels of a categorical feature.
type coder interface {
	encode(arr arrow.Array, dst []float64, b *bad) error
}

// coderOf returns the coder of chosen column j in file f, or nil for a
// column of numbers.
func (s *session) coderOf(f *fileInfo, j int) coder {
	if c := f.types[f.index[s.names[j]]].cat; c != nil {
		return c
	}
	if l := s.labels[j]; l != nil {
		return l
	}
	return nil
}

// mergeLevels adds the levels counted in file f, which is done, to the
// totals, and frees its counters.
func (s *session) mergeLevels(f *fileInfo) {
	for j, total := range s.cats {
		if total == nil {
			continue
		}
		c := f.types[f.index[s.names[j]]].cat
		total.Merge(c.counter)
		c.counter = nil
	}
}

// encode builds the encoding of the kept categorical features keep from
// their counted levels (s.spec, s.enc, s.encCol) and notes it in the
// column report.
func (s *session) encode(keep []int) error {
	s.encCol = make([]int, len(s.names))
	for j := range s.encCol {
		s.encCol[j] = -1
	}
	spec := &featenc.Spec{}
	taken := map[string]bool{}
	for j, n := range s.names {
		if s.cats[j] == nil && !s.times[j] {
			taken[n] = true
		}
	}
	for _, j := range keep {
		c := s.cats[j]
		var col featenc.Column
		switch {
		case c != nil:
			col = c.Column(s.names[j], s.cfg.MaxLevels)
			s.report[s.reportAt[j]].Note = c.Note(s.cfg.MaxLevels)
		case s.times[j]:
			col = featenc.Column{Source: s.names[j], Kind: featenc.Time, Cyclic: s.cfg.TimeFeatures}
			col.Features = featenc.FeatureNames(col)
			s.report[s.reportAt[j]].Note = fmt.Sprintf("time: days since 1970-01-01 UTC, with the sine and cosine of %s", strings.Join(s.cfg.TimeFeatures, ", "))
		default:
			continue
		}
		for _, f := range col.Features {
			if taken[f] {
				return fmt.Errorf("column %q: its one-hot feature %q has the name of another column; rename one of them or leave one out with --exclude", clip(s.names[j]), clip(f))
			}
			taken[f] = true
		}
		s.encCol[j] = len(spec.Columns)
		spec.Columns = append(spec.Columns, col)
	}
	if len(spec.Columns) == 0 {
		return nil
	}
	enc, err := featenc.NewEncoder(spec)
	if err != nil {
		return fmt.Errorf("internal error: %w", err)
	}
	s.spec, s.enc = spec, enc
	return nil
}

// uncount takes back the levels of the rows drop (true: dropped) of a
// batch of file f, read before the rows were dropped.
func (s *session) uncount(f *fileInfo, b *batch, drop []bool) {
	for j, total := range s.cats {
		if total == nil {
			continue
		}
		c := f.types[f.index[s.names[j]]].cat
		for i, d := range drop {
			if d {
				c.counter.Remove(b.cols[j][i])
			}
		}
	}
}
