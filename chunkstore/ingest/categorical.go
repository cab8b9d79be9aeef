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
	// sums are the file's sums of the target per level (session.te),
	// added by the writer, not the reader.
	sums *featenc.TargetSums
	buf  []byte // an integer level's decimal digits
	dst  []float64
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
// totals, and its sums of the target (its rows starting at store row
// first), and frees its counters.
func (s *session) mergeLevels(f *fileInfo, first int64) {
	for j, total := range s.cats {
		if total == nil {
			continue
		}
		c := f.types[f.index[s.names[j]]].cat
		total.Merge(c.counter)
		c.counter = nil
		if s.te[j] != nil && c.sums != nil {
			s.te[j].Merge(c.sums, first)
			c.sums = nil
		}
	}
}

// Target encoding. Where a categorical feature may be target-encoded
// (initTargets), the writer adds each stored row's level code and target
// to its file's featenc.TargetSums, by the row's place in its file;
// mergeLevels merges them in file order, rotating the folds by the
// file's first row in the store, so that the folds are the store's rows
// mod featenc.Folds whatever the files' sizes, as a distributed ingest,
// which sums each file in its own task, merges them too. A two-class
// string target is summed as the indicator of its first-pass code 0 and
// turned into the share of the second class (sorted) by finishTargets
// once the labels are sorted.

// teTarget returns the chosen column of the store's one target, or -1 and
// why a categorical feature cannot be target-encoded.
func (s *session) teTarget() (int, string) {
	nt := len(s.names) - s.nfeat
	if s.cfg.Weight != "" {
		nt--
	}
	switch {
	case nt == 0:
		return -1, "no target to take the mean of"
	case nt > 1:
		return -1, fmt.Sprintf("%d targets, and a target encoding is the mean of one", nt)
	}
	return s.nfeat, ""
}

// initTargets sets s.te: sums of the target for every categorical
// feature, when the store has one target and Config.AboveMaxLevels is
// "target".
func (s *session) initTargets() {
	s.te = make([]*featenc.TargetSums, len(s.names))
	if t, _ := s.teTarget(); t < 0 || s.cfg.AboveMaxLevels != "target" {
		return
	}
	for j, c := range s.cats {
		if c != nil {
			s.te[j] = featenc.NewTargetSums(0)
		}
	}
}

// sumTargets adds the rows of b, a batch of file f whose first row is row
// first of the file's stored rows, to the file's sums of the target.
func (s *session) sumTargets(f *fileInfo, b *batch, first int64) {
	for j, t := range s.te {
		if t == nil || b.n == 0 {
			continue
		}
		c := f.types[f.index[s.names[j]]].cat
		if c.sums == nil {
			c.sums = featenc.NewTargetSums(0)
		}
		c.sums.Add(b.cols[j][:b.n], b.cols[s.nfeat][:b.n], first, s.labels[s.nfeat] != nil)
	}
}

// finishTargets turns the merged sums of a two-class string target, the
// rows of first-pass code 0, into the rows of the second class: remap,
// per chosen column, maps the first-pass codes to the sorted labels' (nil:
// the same).
func (s *session) finishTargets(remap [][]float64) {
	t := s.nfeat
	if t >= len(s.labels) || s.labels[t] == nil {
		return
	}
	if m := remap[t]; len(m) > 0 && m[0] == 1 {
		return
	}
	for _, sums := range s.te {
		if sums != nil {
			sums.Complement()
		}
	}
}

// teRefusal returns why categorical feature j above the cap is not
// target-encoded, or "" when it is.
func (s *session) teRefusal(j int) string {
	if s.cfg.AboveMaxLevels != "target" {
		return "--above-max-levels onehot"
	}
	t, why := s.teTarget()
	if t < 0 {
		return why
	}
	if l := s.labels[t]; l != nil && len(l.names) > 2 {
		return fmt.Sprintf("the target %q has %d classes, and a target encoding is the mean of a number or of two classes", clip(s.names[t]), len(l.names))
	}
	if s.te[j] == nil {
		return "no sums of the target" // not reached: initTargets made them
	}
	return ""
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
	s.oof = nil
	var oof []*featenc.OutOfFold
	for _, j := range keep {
		c := s.cats[j]
		var col featenc.Column
		var o *featenc.OutOfFold
		switch {
		case c != nil:
			note := c.Note(s.cfg.MaxLevels)
			if _, above := c.Levels(s.cfg.MaxLevels); !above {
				col = c.Column(s.names[j], s.cfg.MaxLevels)
			} else if why := s.teRefusal(j); why != "" {
				col = c.Column(s.names[j], s.cfg.MaxLevels)
				if s.cfg.AboveMaxLevels == "target" {
					note += "; not target-encoded: " + why
				}
			} else {
				t, _ := s.teTarget()
				col, o = s.te[j].Encode(s.names[j], s.names[t], c)
				note = featenc.TargetNote(&col, c, s.te[j], s.cfg.MaxLevels)
			}
			s.report[s.reportAt[j]].Note = note
			if st := s.strays[j]; st != "" {
				s.report[s.reportAt[j]].Note = st + "; " + note
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
		oof = append(oof, o)
	}
	if len(spec.Columns) == 0 {
		return nil
	}
	enc, err := featenc.NewEncoder(spec)
	if err != nil {
		return fmt.Errorf("internal error: %w", err)
	}
	s.spec, s.enc, s.oof = spec, enc, oof
	return nil
}

// targetFolds returns the store's values of the target-encoded columns,
// by source column (nil: none), for a distributed ingest's Layout.
func (s *session) targetFolds() map[string]*featenc.OutOfFold {
	var out map[string]*featenc.OutOfFold
	for c, o := range s.oof {
		if o != nil {
			if out == nil {
				out = map[string]*featenc.OutOfFold{}
			}
			out[s.spec.Columns[c].Source] = o
		}
	}
	return out
}

// expandStored writes the stored features of encoded column c (of
// s.spec) for the raw values raw, whose first is row first of the store:
// a target-encoded column's out-of-fold values, else the encoder's.
func (s *session) expandStored(c int, raw []float64, first int64, dst [][]float64) {
	if c < len(s.oof) && s.oof[c] != nil {
		s.oof[c].Expand(raw, first, dst[0])
		return
	}
	s.enc.Expand(c, raw, dst)
}

// storedType is the chunkstore type of an encoded column's features:
// bool for one-hot, float64 for time and target.
func storedType(col *featenc.Column) string {
	if col.Kind == featenc.OneHot {
		return "bool"
	}
	return "float64"
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
	as := fmt.Sprintf("one-hot features of its %d most frequent levels", s.cfg.MaxLevels)
	if s.teRefusal(j) == "" {
		as = "its target encoding (one feature)"
	}
	return fmt.Sprintf("looks like a row identifier: %s%d distinct levels (%s) in %d values; name it in --features or --categorical to keep it as %s",
		about(exact), n, how, total, as)
}

func about(exact bool) string {
	if exact {
		return ""
	}
	return "about "
}

// useEncoding sets the encoding of the kept features keep to spec (an
// encode's, or nil) and the store's values of its target-encoded columns
// to folds (by source column), as encode sets them.
func (s *session) useEncoding(spec *featenc.Spec, folds map[string]*featenc.OutOfFold, keep []int) error {
	s.encCol = make([]int, len(s.names))
	for j := range s.encCol {
		s.encCol[j] = -1
	}
	s.spec, s.enc, s.oof = nil, nil, nil
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
	s.oof = make([]*featenc.OutOfFold, len(spec.Columns))
	for c, col := range spec.Columns {
		if col.Kind == featenc.Target {
			if s.oof[c] = folds[col.Source]; s.oof[c] == nil {
				return fmt.Errorf("the encoding's column %q has no values for the store", clip(col.Source))
			}
		}
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
			for _, f := range col.Features {
				feats = append(feats, chunkstore.ColumnSpec{Name: f, Type: storedType(&col)})
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
