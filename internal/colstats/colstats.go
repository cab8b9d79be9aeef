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
// keeps its digits), scaled by a power of two, 2^-exp, chosen per chunk
// from the largest magnitude (exact, since only the exponent changes), so
// that neither their squares nor their sums overflow or underflow: a
// column of values near 1e300 or 1e-300 keeps its spread. Merge folds the
// next chunk in with Chan et al.'s pairwise update, at the larger of the
// two exponents, so the result does not depend on how many goroutines
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
	mean, m2 float64 // of the shifted values times 2^-exp
	exp      int     // scale exponent, in [-maxScaleExp, maxScaleExp]
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
	mn, mx := v[0], v[0]
	integral := true
	for _, x := range v {
		mn = min(mn, x)
		mx = max(mx, x)
		if integral && x != math.Trunc(x) {
			integral = false
		}
	}
	exp := scaleExp(max(math.Abs(mn), math.Abs(mx), math.Abs(shift)))
	inv := math.Ldexp(1, -exp) // a normal power of two: x*inv is exact
	sh := shift * inv
	var sum float64
	for _, x := range v {
		sum += x*inv - sh
	}
	mean := sum / float64(len(v))
	var m2, comp float64
	for _, x := range v {
		d := (x*inv - sh) - mean
		m2 += d * d
		comp += d
	}
	// Corrected two-pass algorithm (Chan, Golub & LeVeque 1983).
	m2 -= comp * comp / float64(len(v))
	s.n, s.mean, s.m2, s.exp = int64(len(v)), mean, max(m2, 0), exp
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
		s.n, s.shift, s.mean, s.m2, s.exp = o.n, o.shift, o.mean, o.m2, o.exp
	} else {
		om, om2 := o.mean, o.m2
		switch {
		case o.exp > s.exp:
			f := math.Ldexp(1, s.exp-o.exp)
			s.mean, s.m2, s.exp = s.mean*f, s.m2*f*f, o.exp
		case o.exp < s.exp:
			f := math.Ldexp(1, o.exp-s.exp)
			om, om2 = om*f, om2*f*f
		}
		if o.shift != s.shift {
			// Rebase o's mean to s's shift (m2 does not depend on it).
			om += o.shift*math.Ldexp(1, -s.exp) - s.shift*math.Ldexp(1, -s.exp)
		}
		n := s.n + o.n
		d := om - s.mean
		s.mean += d * float64(o.n) / float64(n)
		s.m2 += om2 + d*d*float64(s.n)*float64(o.n)/float64(n)
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

// Summary returns the statistics so far.
func (s *Stats) Summary() Summary {
	out := Summary{Count: s.n, Integral: s.integral}
	if s.n == 0 {
		out.Integral = true
		return out
	}
	out.Mean = math.Ldexp(s.shift*math.Ldexp(1, -s.exp)+s.mean, s.exp)
	out.Std = math.Ldexp(math.Sqrt(s.m2/float64(s.n)), s.exp)
	out.Min, out.Max = s.min, s.max
	out.Mean = min(max(out.Mean, out.Min), out.Max) // rounding near the limits
	// The scaling keeps both finite; guard anyway (a manifest must stay
	// finite JSON).
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

// maxScaleExp bounds the scale exponent so that 2^-exp is a normal
// float64 (exact to multiply by): values beyond 2^1000 or below 2^-1000
// are then scaled to at most 2^24, or at least 2^-74, which neither
// overflows nor underflows when squared and summed.
const maxScaleExp = 1000

// scaleExp returns e such that a < 2^e, clamped to ±maxScaleExp.
func scaleExp(a float64) int {
	if a == 0 || math.IsNaN(a) || math.IsInf(a, 0) {
		return 0
	}
	_, e := math.Frexp(a)
	return min(max(e, -maxScaleExp), maxScaleExp)
}
