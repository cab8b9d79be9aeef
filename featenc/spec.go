package featenc

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"time"
)

// Kind is how a column is encoded.
type Kind string

const (
	// OneHot is a categorical column: one feature per kept level, then
	// "(other)" and "(null)" when present.
	OneHot Kind = "onehot"
	// Time is a date or timestamp: days since the epoch, then a sine and a
	// cosine per cyclic feature.
	Time Kind = "time"
	// Target is a categorical column of many levels: one feature, the
	// mean target of the row's level (see Smooth and Folds).
	Target Kind = "target"
)

// Scale is what a fit divides one-hot features by instead of their
// standard deviation (see the package documentation, "Scaling").
var Scale = math.Sqrt2

// Cyclic features of a time column, in the order they are stored.
const (
	Hour = "hour" // time of day, period one day
	DoW  = "dow"  // day of the week, period seven days
	DoY  = "doy"  // day of the year, period one year
)

// Names of the extra one-hot levels.
const (
	OtherLevel = "(other)"
	NullLevel  = "(null)"
)

// Spec is the encoding of a store's or a model's non-numeric input
// columns. Numeric columns are not listed: they are stored as they are.
type Spec struct {
	Columns []Column `json:"columns"`
}

// Column is the encoding of one input column.
type Column struct {
	// Source is the input column's name.
	Source string `json:"source"`
	Kind   Kind   `json:"kind"`
	// Levels are a one-hot column's kept levels, sorted; values of other
	// levels map to "(other)".
	Levels []string `json:"levels,omitempty"`
	// Other says that the column has an "(other)" feature: the training
	// data held levels beyond Levels. Without it, a level not in Levels
	// has all its features 0.
	Other bool `json:"other,omitempty"`
	// OtherLevels are the training's levels read as "(other)", sorted:
	// every one while the column had at most DefaultCap distinct levels,
	// else those the bounded count kept. A value of one of them is not
	// counted as unseen.
	OtherLevels []string `json:"other_levels,omitempty"`
	// Null says that the column has a "(null)" feature: the training data
	// held NULLs.
	Null bool `json:"null,omitempty"`
	// Scale is what a fit divides each of a one-hot column's features by
	// (featenc.Scale); 0 for a time column, standardised as a number.
	Scale float64 `json:"scale,omitempty"`
	// Cyclic lists a time column's cyclic features (Hour, DoW, DoY), in
	// that order.
	Cyclic []string `json:"cyclic,omitempty"`
	// Features names the stored features, in order (FeatureNames).
	Features []string `json:"features"`

	// A target-encoded column (Kind Target): Target names the target
	// column whose mean it is; Means holds each of Levels' mean over
	// every training row (shrunk by Smooth rows towards Prior, the mean
	// of all of them); NullMean is the NULL level's when Null. Folds is
	// the number of folds of the store's values. A level not in Levels
	// reads as Prior.
	Target   string    `json:"target,omitempty"`
	Means    []float64 `json:"means,omitempty"`
	Prior    float64   `json:"prior,omitempty"`
	NullMean float64   `json:"null_mean,omitempty"`
	Smooth   float64   `json:"smooth,omitempty"`
	Folds    int       `json:"folds,omitempty"`
}

// TargetFeature is the name of a target-encoded column's feature.
func TargetFeature(source string) string { return source + ":target_mean" }

// FeatureNames returns the names of c's features: for a one-hot column
// "source=level" per level, then "source=(other)" and "source=(null)";
// for a time column the source itself, then "source:hour_sin",
// "source:hour_cos", … per cyclic feature.
func FeatureNames(c Column) []string {
	var out []string
	switch c.Kind {
	case OneHot:
		for _, l := range c.Levels {
			out = append(out, c.Source+"="+l)
		}
		if c.Other {
			out = append(out, c.Source+"="+OtherLevel)
		}
		if c.Null {
			out = append(out, c.Source+"="+NullLevel)
		}
	case Target:
		out = append(out, TargetFeature(c.Source))
	case Time:
		out = append(out, c.Source)
		for _, k := range c.Cyclic {
			out = append(out, c.Source+":"+k+"_sin", c.Source+":"+k+"_cos")
		}
	}
	return out
}

// Validate checks s: known kinds and cyclic features, sorted distinct
// levels, Features as FeatureNames gives them, and no feature named twice.
func (s *Spec) Validate() error {
	seen := map[string]bool{}
	for _, c := range s.Columns {
		if c.Source == "" {
			return errors.New("encoding: a column without a name")
		}
		switch c.Kind {
		case OneHot:
			for i, l := range c.Levels {
				if i > 0 && c.Levels[i-1] >= l {
					return fmt.Errorf("encoding: column %q: levels not sorted and distinct at %q", c.Source, l)
				}
			}
			if c.Scale != Scale {
				return fmt.Errorf("encoding: column %q: scale %v, want %v", c.Source, c.Scale, Scale)
			}
			if len(c.OtherLevels) > 0 && !c.Other {
				return fmt.Errorf("encoding: column %q: levels read as %s without an %s feature", c.Source, OtherLevel, OtherLevel)
			}
			for i, l := range c.OtherLevels {
				if i > 0 && c.OtherLevels[i-1] >= l {
					return fmt.Errorf("encoding: column %q: other levels not sorted and distinct at %q", c.Source, l)
				}
				if _, kept := slices.BinarySearch(c.Levels, l); kept {
					return fmt.Errorf("encoding: column %q: level %q both kept and read as %s", c.Source, l, OtherLevel)
				}
			}
			if len(c.Cyclic) > 0 {
				return fmt.Errorf("encoding: column %q: a one-hot column has no cyclic features", c.Source)
			}
		case Time:
			if len(c.Levels) > 0 || len(c.OtherLevels) > 0 || c.Other || c.Null || c.Scale != 0 {
				return fmt.Errorf("encoding: column %q: a time column has no levels or scale", c.Source)
			}
			if _, err := ParseCyclic(c.Cyclic); err != nil {
				return fmt.Errorf("encoding: column %q: %w", c.Source, err)
			}
		case Target:
			if err := validTarget(&c); err != nil {
				return err
			}
		default:
			return fmt.Errorf("encoding: column %q: unknown kind %q", c.Source, c.Kind)
		}
		want := FeatureNames(c)
		if !slices.Equal(want, c.Features) || len(want) == 0 {
			return fmt.Errorf("encoding: column %q: features %q, want %q", c.Source, c.Features, want)
		}
		for _, f := range c.Features {
			if seen[f] {
				return fmt.Errorf("encoding: feature %q named twice", f)
			}
			seen[f] = true
		}
	}
	return nil
}

// ParseCyclic checks a list of cyclic features and returns it in stored
// order (Hour, DoW, DoY), without repeats.
func ParseCyclic(names []string) ([]string, error) {
	var has [3]bool
	for _, n := range names {
		switch n {
		case Hour:
			has[0] = true
		case DoW:
			has[1] = true
		case DoY:
			has[2] = true
		default:
			return nil, fmt.Errorf("unknown time feature %q: the time features are hour, dow and doy", n)
		}
	}
	var out []string
	for i, n := range []string{Hour, DoW, DoY} {
		if has[i] {
			out = append(out, n)
		}
	}
	return out, nil
}

// Column returns the encoding of the input column named source, or nil.
func (s *Spec) Column(source string) *Column {
	if s == nil {
		return nil
	}
	for i := range s.Columns {
		if s.Columns[i].Source == source {
			return &s.Columns[i]
		}
	}
	return nil
}

// NullCode is the raw value of a NULL categorical value.
const NullCode = -1

// Code returns the raw value of a categorical level: the top 53 bits of
// its 64-bit FNV-1a hash, mixed by SplitMix64's finaliser, as a float64
// (exact). Distinct levels collide
// with probability about 2⁻⁵³ per pair.
func Code(level string) float64 {
	return float64(hash(level) >> 11)
}

// CodeBytes is Code(string(level)), without allocating.
func CodeBytes(level []byte) float64 {
	return float64(hashBytes(level) >> 11)
}

func hash(s string) uint64 {
	h := uint64(14695981039346656037)
	for i := 0; i < len(s); i++ {
		h ^= uint64(s[i])
		h *= 1099511628211
	}
	return mix(h)
}

func hashBytes(s []byte) uint64 {
	h := uint64(14695981039346656037)
	for _, c := range s {
		h ^= uint64(c)
		h *= 1099511628211
	}
	return mix(h)
}

// mix is SplitMix64's finaliser: FNV-1a's high bits alone are not uniform
// for short keys that differ in their last bytes.
func mix(h uint64) uint64 {
	h ^= h >> 30
	h *= 0xbf58476d1ce4e5b9
	h ^= h >> 27
	h *= 0x94d049bb133111eb
	return h ^ h>>31
}

// Encoder expands raw values into features by a Spec. Build it with
// NewEncoder; it is safe for concurrent use.
type Encoder struct {
	spec Spec
	cols []colEnc
}

type colEnc struct {
	width       int
	index       map[float64]int // one-hot: raw value -> feature
	other, null int             // one-hot: feature, or -1
	cyclic      []string
	means       map[float64]float64 // target: raw value -> mean
	prior       float64             // target: an unseen level's value
}

// NewEncoder validates s and returns its Encoder.
func NewEncoder(s *Spec) (*Encoder, error) {
	if err := s.Validate(); err != nil {
		return nil, err
	}
	e := &Encoder{spec: *s, cols: make([]colEnc, len(s.Columns))}
	for c, col := range s.Columns {
		ce := colEnc{width: len(col.Features), other: -1, null: -1, cyclic: col.Cyclic}
		if col.Kind == Target {
			ce.means = make(map[float64]float64, len(col.Levels)+1)
			for k, l := range col.Levels {
				ce.means[Code(l)] = col.Means[k]
			}
			if col.Null {
				ce.means[NullCode] = col.NullMean
			}
			ce.prior = col.Prior
		}
		if col.Kind == OneHot {
			ce.index = make(map[float64]int, len(col.Levels)+len(col.OtherLevels))
			for k, l := range col.Levels {
				ce.index[Code(l)] = k
			}
			k := len(col.Levels)
			if col.Other {
				ce.other = k
				for _, l := range col.OtherLevels {
					ce.index[Code(l)] = k
				}
				k++
			}
			if col.Null {
				ce.null = k
			}
		}
		e.cols[c] = ce
	}
	return e, nil
}

// Spec returns the encoder's Spec.
func (e *Encoder) Spec() *Spec { return &e.spec }

// Width returns the number of features of column c.
func (e *Encoder) Width(c int) int { return e.cols[c].width }

// Expand writes column c's features for the raw values raw into dst
// (dst[k][i] is feature k of row i; len(dst) == Width(c), each of
// len(raw)). It returns the number of rows whose level was not among the
// training's (Levels and OtherLevels): they go to "(other)" (all features
// 0 without one), or to
// the prior of a target-encoded column. A NULL in a column whose training
// held none counts as unseen too.
func (e *Encoder) Expand(c int, raw []float64, dst [][]float64) (unseen int) {
	ce := &e.cols[c]
	if ce.means != nil {
		out := dst[0][:len(raw)]
		for i, v := range raw {
			m, ok := ce.means[v]
			if !ok {
				unseen++
				m = ce.prior
			}
			out[i] = m
		}
		return unseen
	}
	if ce.index == nil {
		expandTime(ce.cyclic, raw, dst)
		return 0
	}
	for _, col := range dst {
		clear(col[:len(raw)])
	}
	for i, v := range raw {
		k, ok := ce.index[v]
		switch {
		case ok:
		case v == NullCode && ce.null >= 0:
			k = ce.null
		default:
			unseen++
			k = ce.other
		}
		if k >= 0 {
			dst[k][i] = 1
		}
	}
	return unseen
}

// expandTime writes the days and the cyclic features of each raw value.
func expandTime(cyclic []string, raw []float64, dst [][]float64) {
	copy(dst[0], raw)
	for k, name := range cyclic {
		sin, cos := dst[1+2*k], dst[2+2*k]
		for i, v := range raw {
			p := Phase(name, v)
			sin[i], cos[i] = math.Sincos(2 * math.Pi * p)
		}
	}
}

// Phase returns the phase in [0, 1) of the cyclic feature name (Hour, DoW
// or DoY) at days since 1970-01-01 UTC: the fraction of the day, of the
// week from Monday 00:00, or of the year from 1 January 00:00 (a year of
// 365 or 366 days).
func Phase(name string, days float64) float64 {
	d := math.Floor(days)
	frac := days - d
	switch name {
	case Hour:
		return frac
	case DoW:
		// 1970-01-01 was a Thursday: day 0 is 3 days after a Monday.
		return math.Mod(math.Mod(d+3, 7)+7, 7)/7 + frac/7
	default:
		if math.Abs(d) > 1e8 {
			return 0
		}
		t := time.Unix(int64(d)*86400, 0).UTC()
		n := 365.0
		if y := t.Year(); y%4 == 0 && (y%100 != 0 || y%400 == 0) {
			n = 366
		}
		return (float64(t.YearDay()-1) + frac) / n
	}
}
