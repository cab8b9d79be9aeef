package ingest

import (
	"fmt"
	"slices"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/falkon-ooc/falkon-ooc/chunkstore"
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
			if st := s.strays[j]; st != "" {
				s.report[s.reportAt[j]].Note = st + "; " + c.Note(s.cfg.MaxLevels)
			}
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

// idLevelsRows and idLevelsShare say when a categorical column is a row
// identifier: at least idLevelsRows values, and distinct levels at least
// idLevelsShare of them. One-hot features of its most frequent levels
// would each mark a row or two.
const (
	idLevelsRows  = 100
	idLevelsShare = 0.9
)

// levelsIdentifier returns, for chosen column j, a categorical feature
// that ingest chose by default (not named in Features or Categorical),
// the column report's note when its levels say it is a row identifier
// (see idLevelsShare), else "".
func (s *session) levelsIdentifier(j int) string {
	c := s.cats[j]
	if c == nil || j >= s.nfeat || len(s.cfg.Features) > 0 || slices.Contains(s.cfg.Categorical, s.names[j]) {
		return ""
	}
	n, exact := c.Distinct()
	total := c.Total()
	if total < idLevelsRows || float64(n) < idLevelsShare*float64(total) {
		return ""
	}
	how := "exact"
	if !exact {
		how = "estimated"
	}
	return fmt.Sprintf("looks like a row identifier: %s%d distinct levels (%s) in %d values; name it in --features or --categorical to keep it as one-hot features of its %d most frequent levels",
		about(exact), n, how, total, s.cfg.MaxLevels)
}

func about(exact bool) string {
	if exact {
		return ""
	}
	return "about "
}

// useEncoding sets the encoding of the kept features keep to spec (an
// encode's, or nil), as encode sets it.
func (s *session) useEncoding(spec *featenc.Spec, keep []int) error {
	s.encCol = make([]int, len(s.names))
	for j := range s.encCol {
		s.encCol[j] = -1
	}
	s.spec, s.enc = nil, nil
	if spec == nil {
		return nil
	}
	enc, err := featenc.NewEncoder(spec)
	if err != nil {
		return err
	}
	for _, j := range keep {
		if j >= s.nfeat || (s.cats[j] == nil && !s.times[j]) {
			continue
		}
		c := slices.IndexFunc(spec.Columns, func(c featenc.Column) bool { return c.Source == s.names[j] })
		if c < 0 {
			return fmt.Errorf("the encoding has no column %q", clip(s.names[j]))
		}
		s.encCol[j] = c
	}
	s.spec, s.enc = spec, enc
	return nil
}

// storedSpecs returns the store's features and targets (the weight last)
// for the chosen columns keep, each encoded feature replaced by its
// features (one-hot: bool; time: float64), as install writes them.
func (s *session) storedSpecs(keep []int) (feats, targs []chunkstore.ColumnSpec) {
	for _, j := range keep {
		switch {
		case j < s.nfeat && s.encCol != nil && s.encCol[j] >= 0:
			col := s.spec.Columns[s.encCol[j]]
			typ := "bool"
			if col.Kind == featenc.Time {
				typ = "float64"
			}
			for _, f := range col.Features {
				feats = append(feats, chunkstore.ColumnSpec{Name: f, Type: typ})
			}
		case j < s.nfeat:
			feats = append(feats, chunkstore.ColumnSpec{Name: s.names[j], Type: s.specs[j]})
		default:
			targs = append(targs, chunkstore.ColumnSpec{Name: s.names[j], Type: s.specs[j]})
		}
	}
	return feats, targs
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
