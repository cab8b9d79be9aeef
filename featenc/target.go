package featenc

import (
	"cmp"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"
)

// Out-of-fold target encoding (Kind Target): a categorical column of more
// levels than one-hot features serve becomes one number per row, the
// mean target of its level shrunk towards the overall mean by Smooth rows
// of it:
//
//	value(level) = (sum of the level's targets + Smooth·prior) / (its rows + Smooth)
//
// A model (and predict) uses every training row. The store's rows use the
// rows of the other folds only (store row r is in fold r mod Folds, and
// the prior is then the other folds' mean too), so that no row's feature
// holds its own target: a fit on in-fold means would learn the noise of
// the rare levels' own targets.
const (
	// Folds is the number of folds of the store's values.
	Folds = 5
	// Smooth is the prior weight, in rows.
	Smooth = 20.0
)

// TargetSums accumulates, per level of a categorical column and per fold,
// the rows and the sum of their target. It tracks at most its cap of
// levels: the levels met once it is full count in the totals only (their
// rows get the prior). A TargetSums is not safe for concurrent use.
type TargetSums struct {
	cap    int
	levels map[float64]*foldSums // by Code; NullCode for NULL
	total  foldSums
	full   bool // a level was met and not tracked
}

type foldSums struct {
	N [Folds]int64   `json:"n"`
	S [Folds]float64 `json:"s"`
}

// TargetSumsBytes is the most memory a TargetSums of the given cap holds,
// for memory estimates.
func TargetSumsBytes(cap int) int64 { return int64(cap) * (Folds*16 + 64) }

// NewTargetSums returns a TargetSums that tracks up to cap levels (0:
// DefaultCap).
func NewTargetSums(cap int) *TargetSums {
	if cap <= 0 {
		cap = DefaultCap
	}
	return &TargetSums{cap: cap, levels: map[float64]*foldSums{}}
}

// Add counts the rows of codes (level codes, NullCode for NULL) with
// targets y; codes[0] is row first of its file (fold first mod Folds).
// With indicator, a row's target is 1 when y is 0 and 0 otherwise (class
// codes of a two-class target; see Complement).
func (t *TargetSums) Add(codes, y []float64, first int64, indicator bool) {
	f := int(first % Folds)
	for i, c := range codes {
		v := y[i]
		if indicator {
			v = 0
			if y[i] == 0 {
				v = 1
			}
		}
		t.total.N[f]++
		t.total.S[f] += v
		l := t.levels[c]
		if l == nil {
			if len(t.levels) == t.cap {
				t.full = true
				if f++; f == Folds {
					f = 0
				}
				continue
			}
			l = &foldSums{}
			t.levels[c] = l
		}
		l.N[f]++
		l.S[f] += v
		if f++; f == Folds {
			f = 0
		}
	}
}

// Complement turns the sums of an indicator (Add's indicator) into those
// of its complement: each sum becomes its rows minus the sum, exactly.
func (t *TargetSums) Complement() {
	for _, l := range t.levels {
		l.complement()
	}
	t.total.complement()
}

func (l *foldSums) complement() {
	for f := range l.S {
		l.S[f] = float64(l.N[f]) - l.S[f]
	}
}

// Merge adds the sums of o, whose rows start at row shift of the
// merged rows (so o's fold k is fold (shift+k) mod Folds here), then
// drops the least frequent levels (ties by code) beyond the cap. Merging
// the same sums in the same order gives the same result, bit for bit.
func (t *TargetSums) Merge(o *TargetSums, shift int64) {
	r := int(shift % Folds)
	t.total.add(&o.total, r)
	t.full = t.full || o.full
	for c, l := range o.levels {
		have := t.levels[c]
		if have == nil {
			have = &foldSums{}
			t.levels[c] = have
		}
		have.add(l, r)
	}
	if len(t.levels) > t.cap {
		t.full = true
		type cn struct {
			c float64
			n int64
		}
		all := make([]cn, 0, len(t.levels))
		for c, l := range t.levels {
			all = append(all, cn{c, l.rows()})
		}
		slices.SortFunc(all, func(a, b cn) int {
			if a.n != b.n {
				return cmp.Compare(b.n, a.n)
			}
			return cmp.Compare(a.c, b.c)
		})
		for _, x := range all[t.cap:] {
			delete(t.levels, x.c)
		}
	}
}

// add adds o's sums, o's fold k to fold (k+r) mod Folds.
func (l *foldSums) add(o *foldSums, r int) {
	for k := range Folds {
		f := (k + r) % Folds
		l.N[f] += o.N[k]
		l.S[f] += o.S[k]
	}
}

func (l *foldSums) rows() (n int64) {
	for _, x := range l.N {
		n += x
	}
	return n
}

func (l *foldSums) sum() (s float64) {
	for _, x := range l.S {
		s += x
	}
	return s
}

// oof returns the value of fold f's rows: from the other folds' sums,
// shrunk towards prior.
func (l *foldSums) oof(f int, prior float64) float64 {
	return (l.sum() - l.S[f] + Smooth*prior) / (float64(l.rows()-l.N[f]) + Smooth)
}

// Rows returns the rows counted.
func (t *TargetSums) Rows() int64 { return t.total.rows() }

// Full reports whether levels were met beyond the cap and not tracked.
func (t *TargetSums) Full() bool { return t.full }

// targetSumsJSON is a TargetSums as JSON: levels sorted by code.
type targetSumsJSON struct {
	Cap    int         `json:"cap"`
	Levels []codedSums `json:"levels"`
	Total  foldSums    `json:"total"`
	Full   bool        `json:"full,omitempty"`
}

type codedSums struct {
	Code float64 `json:"c"`
	foldSums
}

// MarshalJSON encodes the sums (a distributed ingest's tasks sum one
// file each and send the sums to the driver, which merges them in file
// order).
func (t *TargetSums) MarshalJSON() ([]byte, error) {
	j := targetSumsJSON{Cap: t.cap, Total: t.total, Full: t.full, Levels: make([]codedSums, 0, len(t.levels))}
	for c, l := range t.levels {
		j.Levels = append(j.Levels, codedSums{c, *l})
	}
	slices.SortFunc(j.Levels, func(a, b codedSums) int { return cmp.Compare(a.Code, b.Code) })
	return json.Marshal(j)
}

// UnmarshalJSON decodes MarshalJSON's encoding.
func (t *TargetSums) UnmarshalJSON(b []byte) error {
	var j targetSumsJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	if j.Cap <= 0 || len(j.Levels) > j.Cap {
		return fmt.Errorf("featenc: target sums of cap %d with %d levels", j.Cap, len(j.Levels))
	}
	*t = TargetSums{cap: j.Cap, levels: make(map[float64]*foldSums, len(j.Levels)), total: j.Total, full: j.Full}
	for _, l := range j.Levels {
		if _, dup := t.levels[l.Code]; dup {
			return fmt.Errorf("featenc: target sums with level code %v twice", l.Code)
		}
		t.levels[l.Code] = &l.foldSums
	}
	return nil
}

// OutOfFold gives the store's values of a target-encoded column: each
// row's level mean over the other folds' rows. Its fields are exported
// for encoding/json only; build it with TargetSums.Encode.
type OutOfFold struct {
	Levels []codedSums `json:"levels"` // sorted by code
	Total  foldSums    `json:"total"`

	once   sync.Once
	values map[float64]*[Folds]float64
	prior  [Folds]float64
}

// prepare computes the values of each level and fold, once.
func (o *OutOfFold) prepare() { o.once.Do(o.compute) }

func (o *OutOfFold) compute() {
	for f := range Folds {
		o.prior[f] = priorOf(o.Total.sum()-o.Total.S[f], o.Total.rows()-o.Total.N[f])
	}
	o.values = make(map[float64]*[Folds]float64, len(o.Levels))
	for i := range o.Levels {
		var v [Folds]float64
		for f := range Folds {
			v[f] = o.Levels[i].oof(f, o.prior[f])
		}
		o.values[o.Levels[i].Code] = &v
	}
}

func priorOf(s float64, n int64) float64 {
	if n == 0 {
		return 0
	}
	return s / float64(n)
}

// Expand writes the store's values of the rows of raw (level codes) into
// dst; raw[0] is row first of the store. It is safe for concurrent use.
func (o *OutOfFold) Expand(raw []float64, first int64, dst []float64) {
	o.prepare()
	f := int(first % Folds)
	for i, c := range raw {
		if v := o.values[c]; v != nil {
			dst[i] = v[f]
		} else {
			dst[i] = o.prior[f]
		}
		if f++; f == Folds {
			f = 0
		}
	}
}

// Encode returns the target encoding of the column named source, whose
// levels c counted and whose target is named target: the Column a model
// keeps (every row's means) and the store's values (OutOfFold). A level
// is encoded when t tracked it and c holds its name; the others take the
// prior.
func (t *TargetSums) Encode(source, target string, c *Counter) (Column, *OutOfFold) {
	col := Column{Source: source, Kind: Target, Target: target, Smooth: Smooth, Folds: Folds}
	col.Prior = priorOf(t.total.sum(), t.total.rows())
	o := &OutOfFold{Total: t.total}
	type named struct {
		name string
		code float64
	}
	var levels []named
	for code := range t.levels {
		if code == NullCode {
			continue
		}
		if e, ok := c.counts[code]; ok {
			levels = append(levels, named{e.name, code})
		}
	}
	slices.SortFunc(levels, func(a, b named) int { return strings.Compare(a.name, b.name) })
	for _, l := range levels {
		s := t.levels[l.code]
		col.Levels = append(col.Levels, l.name)
		col.Means = append(col.Means, (s.sum()+Smooth*col.Prior)/(float64(s.rows())+Smooth))
		o.Levels = append(o.Levels, codedSums{l.code, *s})
	}
	if s := t.levels[NullCode]; s != nil {
		col.Null = true
		col.NullMean = (s.sum() + Smooth*col.Prior) / (float64(s.rows()) + Smooth)
		o.Levels = append(o.Levels, codedSums{NullCode, *s})
	}
	slices.SortFunc(o.Levels, func(a, b codedSums) int { return cmp.Compare(a.Code, b.Code) })
	col.Features = FeatureNames(col)
	return col, o
}

// TargetNote describes a target-encoded column for people, as the column
// report gives it: "target: the mean of y per level over 1923 distinct
// levels (exact), shrunk towards the overall mean by 20 rows, each
// stored row's from the other 4 of 5 folds (more levels than
// --max-levels 64, whose most frequent would cover 67.8 % of the values
// as one-hot features)".
func TargetNote(col *Column, c *Counter, t *TargetSums, max int) string {
	n, exact := c.Distinct()
	how := "exact"
	if !exact {
		how = "estimated"
	}
	s := fmt.Sprintf("target: the mean of %s per level over %s%d distinct levels (%s), shrunk towards the overall mean by %g rows, each stored row's from the other %d of %d folds (more levels than --max-levels %d, whose most frequent would cover %s%.1f %% of the values as one-hot features)",
		col.Target, about(exact), n, how, Smooth, Folds-1, Folds, max, atLeast(c.reduced), 100*c.cover(max))
	if t.full || len(col.Levels) < int(n) {
		s += fmt.Sprintf("; %d levels have their own mean, the others the overall mean", len(col.Levels))
	}
	if c.nulls > 0 {
		s += fmt.Sprintf(", %d NULL as a level of its own", c.nulls)
	}
	return s
}

func atLeast(b bool) string {
	if b {
		return "at least "
	}
	return ""
}

// cover returns the share of the values that the max most frequent
// levels hold (a lower bound once the counter is reduced).
func (c *Counter) cover(max int) float64 {
	levels, _ := c.Levels(max)
	kept := map[string]bool{}
	for _, l := range levels {
		kept[l] = true
	}
	var in int64
	for _, e := range c.counts {
		if kept[e.name] {
			in += e.n
		}
	}
	return float64(in) / float64(max64(c.total, 1))
}

// validTarget checks a target-encoded column's fields.
func validTarget(c *Column) error {
	for i, l := range c.Levels {
		if i > 0 && c.Levels[i-1] >= l {
			return fmt.Errorf("encoding: column %q: levels not sorted and distinct at %q", c.Source, l)
		}
	}
	if len(c.Means) != len(c.Levels) {
		return fmt.Errorf("encoding: column %q: %d means for %d levels", c.Source, len(c.Means), len(c.Levels))
	}
	for _, v := range append([]float64{c.Prior, c.NullMean, c.Smooth}, c.Means...) {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("encoding: column %q: a mean of %v", c.Source, v)
		}
	}
	if c.Other || c.Scale != 0 || len(c.Cyclic) > 0 || (!c.Null && c.NullMean != 0) {
		return fmt.Errorf("encoding: column %q: a target-encoded column has no (other) level, scale or cyclic features", c.Source)
	}
	return nil
}
