// Package colstats computes per-column statistics — count, mean,
// population standard deviation, range, integrality and up to MaxDistinct
// distinct values — chunk by chunk, merged in chunk order. It is the one
// statistics routine of the module: the chunk store's writer fills its
// manifest with it, and the solver uses it when a source does not know
// its statistics.
//
// # Overview
//
// Within a chunk, Chunk makes two passes (mean, then squared deviations
// with the Chan–Golub–LeVeque correction) over the values shifted by a
// constant (the "shifted data" method, so a column like 1e9 + U(0, 1)
// keeps its digits). Merge folds the next chunk in with Chan et al.'s
// pairwise update, so the result does not depend on how many goroutines
// computed the chunks.
//
// # Concurrency
//
// A Stats is not safe for concurrent use; give each worker its own and
// merge them in chunk order.
//
// # Invariants
//
// Values must be finite. A Stats whose distinct set overflowed (more than
// MaxDistinct values) stays overflowed.
package colstats

import (
	"math"
	"slices"
)

// MaxDistinct is the most distinct values a column's statistics record.
const MaxDistinct = 256

// Stats accumulates one column's statistics. The zero value is not
// ready: use New.
type Stats struct {
	n        int64
	shift    float64
	mean, m2 float64 // of the shifted values
	min, max float64
	integral bool
	overflow bool                // more than MaxDistinct distinct values
	distinct map[uint64]struct{} // float64 bits, -0 folded into 0
}

// New returns empty statistics.
func New() Stats {
	return Stats{integral: true, min: math.Inf(1), max: math.Inf(-1), distinct: make(map[uint64]struct{})}
}

// reset empties s, keeping its map.
func (s *Stats) reset() {
	m := s.distinct
	if m == nil {
		m = make(map[uint64]struct{})
	}
	clear(m)
	*s = Stats{integral: true, min: math.Inf(1), max: math.Inf(-1), distinct: m}
}

// Overflow reports whether more than MaxDistinct distinct values were
// seen.
func (s *Stats) Overflow() bool { return s.overflow }

// Chunk sets s to the statistics of v (finite values), with the mean and
// the squared deviations taken of v - shift. skipDistinct says that the
// column's distinct set has already overflowed, so values need not be
// collected.
func (s *Stats) Chunk(v []float64, shift float64, skipDistinct bool) {
	s.reset()
	s.shift = shift
	if len(v) == 0 {
		return
	}
	var sum float64
	mn, mx := v[0], v[0]
	integral := true
	for _, x := range v {
		sum += x - shift
		mn = min(mn, x)
		mx = max(mx, x)
		if integral && x != math.Trunc(x) {
			integral = false
		}
	}
	mean := sum / float64(len(v))
	var m2, comp float64
	for _, x := range v {
		d := (x - shift) - mean
		m2 += d * d
		comp += d
	}
	// Corrected two-pass algorithm (Chan, Golub & LeVeque 1983).
	m2 -= comp * comp / float64(len(v))
	s.n, s.mean, s.m2 = int64(len(v)), mean, max(m2, 0)
	s.min, s.max, s.integral = mn, mx, integral
	if skipDistinct {
		s.overflow = true
		return
	}
	last := math.NaN()
	for _, x := range v {
		if x == last {
			continue
		}
		last = x
		if x == 0 {
			x = 0 // fold -0
		}
		s.distinct[math.Float64bits(x)] = struct{}{}
		if len(s.distinct) > MaxDistinct {
			s.overflow = true
			clear(s.distinct)
			return
		}
	}
}

// Merge folds o (the next chunk) into s. Chunks computed with different
// shifts are rebased to s's shift (exactly when the shifts are equal).
func (s *Stats) Merge(o *Stats) {
	if o.n == 0 {
		return
	}
	if s.distinct == nil {
		s.distinct = make(map[uint64]struct{})
	}
	if s.n == 0 {
		s.n, s.shift, s.mean, s.m2 = o.n, o.shift, o.mean, o.m2
	} else {
		n := s.n + o.n
		d := o.mean + (o.shift - s.shift) - s.mean
		s.mean += d * float64(o.n) / float64(n)
		s.m2 += o.m2 + d*d*float64(s.n)*float64(o.n)/float64(n)
		s.n = n
	}
	s.min = min(s.min, o.min)
	s.max = max(s.max, o.max)
	s.integral = s.integral && o.integral
	if s.overflow {
		return
	}
	if o.overflow {
		s.overflow = true
		clear(s.distinct)
		return
	}
	for k := range o.distinct {
		s.distinct[k] = struct{}{}
	}
	if len(s.distinct) > MaxDistinct {
		s.overflow = true
		clear(s.distinct)
	}
}

// Summary is the result of Stats.
type Summary struct {
	Count    int64
	Mean     float64
	Std      float64 // population standard deviation, 0 if Count is 0
	Min, Max float64
	Integral bool      // every value is an integer (true if Count is 0)
	Distinct []float64 // sorted distinct values, nil after an overflow
}

// Summary returns the statistics so far. Values near the float64 limit
// (|x| beyond ~1e154) overflow the sums of squares, or the sums
// themselves; the result stays finite: the midrange for the mean and the
// largest float64 for the deviation.
func (s *Stats) Summary() Summary {
	out := Summary{Count: s.n, Integral: s.integral}
	if s.n == 0 {
		out.Integral = true
		return out
	}
	out.Mean = s.shift + s.mean
	out.Std = math.Sqrt(s.m2 / float64(s.n))
	out.Min, out.Max = s.min, s.max
	if math.IsNaN(out.Mean) || math.IsInf(out.Mean, 0) {
		out.Mean = out.Min/2 + out.Max/2
	}
	if math.IsNaN(out.Std) || math.IsInf(out.Std, 0) {
		out.Std = math.MaxFloat64
	}
	if !s.overflow {
		d := make([]float64, 0, len(s.distinct))
		for k := range s.distinct {
			d = append(d, math.Float64frombits(k))
		}
		slices.Sort(d)
		out.Distinct = d
	}
	return out
}
